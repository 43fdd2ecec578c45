"""Claims a page's lead makes about its own subject that pick the subject out: a bridge description.

A multi-hop question names its bridge by a defining property, the way a reader would: "the theoretical
physicist born on 14 March 1879", "the country whose capital is Tirana". Leads state such properties in
set forms: a person's dates in the brackets after the name ("Albert Einstein (14 March 1879 - 18 April
1955) was a German-born theoretical physicist") and a country's capital ("Its capital and largest city is
Tirana"). Each claim becomes one keypoint sentence about the subject, with the lead sentence that says it
as its evidence. A birth date alone fits thousands of people, so it is used only with what the lead says
the person is ("physicist"); a capital names one country or state.
"""

from __future__ import annotations

import re

from irbgen.irb.records import LeadClaim

MAX_DEFINITE_WORDS = 14
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = rf"\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}"
# The brackets right after the name: "(; ; 14 March 1879 – 18 April 1955)", "(born 1 April 1947)".
_OPENING_BRACKETS = re.compile(r"^[^().]{1,80}?\(([^()]*)\)\s+(?:is|was)\s+(?:a|an)\s")
_BORN = re.compile(rf"(?:^|[;,(]\s*|\bborn\s+)({_DATE})(?:\s*[–-]\s*(?:{_DATE})|\s*$|\s*[;,)])")
_BIRTH_WORD = re.compile(rf"\bborn\s+({_DATE})")
_NAME = r"[A-Z][\w'.-]*(?:[ -](?:[A-Z][\w'.-]*|de|la|le|el|al|of|da|do|dos))*"
_CAPITAL = re.compile(
    rf"(?:^|(?<=\. ))(?:Its|The country's|The state's) capital(?: city)?"
    rf"(?: and (?:largest|most populous|biggest) (?:city|municipality|town))? is ({_NAME})(?=[,.;]| \()"
)
_VAGUE = frozenset(
    "name term word type kind form group member part one set series list collection family way thing".split()
)
_SENTENCE_END = re.compile(r"(?<=[a-z)\]0-9]\.)\s+(?=[A-Z])")


def sentences(lead: str) -> list[str]:
    """The lead cut into sentences at a full stop followed by a capital (enough for its first few)."""
    return [part.strip() for part in _SENTENCE_END.split(lead.strip()) if part.strip()]


def subject_name(title: str) -> str:
    """The page title without its bracketed qualifier: "Animalia (book)" -> "Animalia"."""
    return re.sub(r"\s*\([^()]*\)$", "", title).strip()


def lead_claims(title: str, lead: str, noun: str | None) -> list[LeadClaim]:
    """The claims of `lead` that describe its page's subject uniquely (see the module docstring)."""
    parts = sentences(lead)
    if not parts:
        return []
    name = subject_name(title)
    claims = []
    born = _birth_date(parts[0])
    if born is not None and noun:
        claims.append(LeadClaim(kind="born", keypoint=f"{name} was born on {born}.", evidence=parts[0]))
    definite = _definite(parts[0], name)
    if definite is not None:
        claims.append(LeadClaim(kind="definite", keypoint=definite, evidence=parts[0]))
    for sentence in parts[:6]:
        capital = _CAPITAL.search(sentence)
        if capital is not None and capital.group(1) != name:
            keypoint = f"{name}'s capital is {capital.group(1)}."
            claims.append(LeadClaim(kind="capital", keypoint=keypoint, evidence=sentence))
            break
    return claims


def _definite(first: str, name: str) -> str | None:
    """ "Apollo 11 was the first spaceflight that landed humans on the Moon.": the lead's first sentence
    when it says what its subject is with a definite noun phrase ("is the ..."), cut at its first comma;
    not "one of the ...", not a vague head ("the name of ..."), at most MAX_DEFINITE_WORDS words."""
    match = re.match(
        rf"((?:The )?{re.escape(name)}) (?:\([^()]*\) )?(is|was) the ([^,;()]+?)(?:[,;(]|\.$)", first
    )
    if match is None:
        return None
    phrase = match.group(3).strip()
    words = phrase.split()
    if not 2 <= len(words) + 1 <= MAX_DEFINITE_WORDS or words[0].lower() in _VAGUE:
        return None
    return f"{match.group(1)} {match.group(2)} the {phrase}."


def _birth_date(first: str) -> str | None:
    """The birth date in the brackets after the name of a lead's "X (...) was a/an ..." sentence."""
    brackets = _OPENING_BRACKETS.match(first)
    if brackets is None:
        return None
    inside = brackets.group(1)
    explicit = _BIRTH_WORD.search(inside)
    if explicit is not None:
        return explicit.group(1)
    span = _BORN.search(inside)
    return span.group(1) if span is not None and re.search(r"[–-]", inside[span.end(1) :][:4]) else None

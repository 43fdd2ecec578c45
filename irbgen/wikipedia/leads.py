"""Claims a page's lead or infobox makes about its own subject that pick the subject out: a bridge
description.

A multi-hop question names its bridge by a defining property, the way a reader would: "the theoretical
physicist born on 14 March 1879", "the country whose capital is Tirana", "the first spaceflight that
landed humans on the Moon". Pages state such properties in set forms:

- a person's birth date: in the brackets after the name in the lead ("Albert Einstein (14 March 1879 -
  18 April 1955) was ..."), or the infobox's {{birth date|1879|3|14}}. A birth date alone fits thousands
  of people, so it is used only with what the lead says the person is ("physicist");
- a capital: a lead sentence ("Its capital and largest city is Algiers", "The country's capital, Tirana,
  ...") or the infobox's capital; a capital names one country or state;
- a definite noun phrase in the lead's first sentence ("Apollo 11 was the first spaceflight that ...").

Each claim becomes one keypoint sentence about the subject, with what says it as its evidence: the lead
sentence, or the infobox line ("Capital: Tirana").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from irbgen.wikipedia.records import LeadClaim
from irbgen.wikipedia.render import load_mwp

MAX_DEFINITE_WORDS = 14
LEAD_SENTENCES = 12  # lead sentences searched for a capital
_MONTH_LIST = "January February March April May June July August September October November December".split()
_MONTHS = "|".join(_MONTH_LIST)
_DATE = rf"\d{{1,2}} (?:{_MONTHS}) \d{{4}}|(?:{_MONTHS}) \d{{1,2}}, \d{{4}}"
# The brackets right after the name: "(; ; 14 March 1879 – 18 April 1955)", "(born 1 April 1947)".
_OPENING_BRACKETS = re.compile(r"^[^().]{1,80}?\(([^()]*)\)\s+(?:is|was)\s+(?:a|an)\s")
_FIRST_DATE = re.compile(rf"(?:^|[;,]\s*|\bborn\s+)({_DATE})\s*(?:[–-]|$)")
_BIRTH_WORD = re.compile(rf"\bborn\s+({_DATE})")
_NAME = r"[A-Z][\w'.-]*(?:[ -](?:[A-Z][\w'.-]*|de|la|le|el|al|of|da|do|dos))*"
_CAPITAL_IS = re.compile(
    rf"^(?:Its|The country's|The state's|The) capital(?: city)?"
    rf"(?: and (?:largest|most populous|biggest) (?:city|municipality|town))? is ({_NAME})(?=[,.;]| \()"
)
_CAPITAL_NAMED = re.compile(
    rf"^(?:Its|The country's|The state's) capital(?: city)?,? ({_NAME}),? (?:is|was|has)\b"
)
VAGUE_NOUNS = frozenset(  # nouns that do not say what a thing is
    "name term word type kind form group member part one set series list collection family way thing".split()
)
_INFOBOX_START = re.compile(r"\{\{\s*infobox", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[a-z)\]0-9]\.)\s+(?=[A-Z])")


@dataclass(frozen=True)
class Infobox:
    """What a page's infobox says that can pick its subject out, as the page would write it."""

    capital: str | None = None  # "Tirana"
    born: str | None = None  # "14 March 1879" (or "March 14, 1879" without df=y)


def sentences(lead: str) -> list[str]:
    """A paragraph cut into sentences at a full stop followed by a capital (enough for leads)."""
    return [part.strip() for part in _SENTENCE_END.split(lead.strip()) if part.strip()]


def subject_name(title: str) -> str:
    """The page title without its bracketed qualifier: "Animalia (book)" -> "Animalia"."""
    return re.sub(r"\s*\([^()]*\)$", "", title).strip()


_TOPIC_OF = re.compile(r"^(?:The )?[A-Z][a-z]+(?: [a-z]+)* (?:of|in) ([A-Z].*)$")


def topic_of(title: str) -> str | None:
    """What a page "<Topic> of <Name>" is about: "Angola" for "Foreign relations of Angola" or "The
    Economy of Angola"; None for other titles."""
    match = _TOPIC_OF.match(subject_name(title))
    return match.group(1) if match else None


def lead_claims(
    title: str, lead: Sequence[str], noun: str | None, infobox: Infobox | None = None
) -> list[LeadClaim]:
    """The claims of the lead's sentences `lead` (and the infobox) that describe the page's subject
    uniquely (see the module docstring), at most one of each kind."""
    infobox = infobox or Infobox()
    name = subject_name(title)
    first = lead[0] if lead else ""
    claims = []
    born, said_by = _birth_date(first), first
    if born is None and infobox.born:
        born, said_by = infobox.born, f"Born: {infobox.born}"
    if born is not None and noun:
        claims.append(LeadClaim(kind="born", keypoint=f"{name} was born on {born}.", evidence=said_by))
    definite = _definite(first, name)
    if definite is not None:
        claims.append(LeadClaim(kind="definite", keypoint=definite, evidence=first))
    capital = _capital(lead[:LEAD_SENTENCES], infobox.capital)
    if capital is not None and capital[0] != name and name not in capital[0]:
        claims.append(
            LeadClaim(kind="capital", keypoint=f"{name}'s capital is {capital[0]}.", evidence=capital[1])
        )
    return claims


def _capital(lead: Sequence[str], boxed: str | None) -> tuple[str, str] | None:
    """(capital, the sentence or infobox line that says it): a lead sentence first, else the infobox."""
    for sentence in lead:
        match = _CAPITAL_IS.match(sentence) or _CAPITAL_NAMED.match(sentence)
        if match is not None:
            return match.group(1), sentence
    return (boxed, f"Capital: {boxed}") if boxed else None


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
    if not 2 <= len(words) + 1 <= MAX_DEFINITE_WORDS or words[0].lower() in VAGUE_NOUNS:
        return None
    return f"{match.group(1)} {match.group(2)} the {phrase}."


def _birth_date(first: str) -> str | None:
    """The birth date in the brackets after the name of a lead's "X (...) was a/an ..." sentence: after
    "born", or the first of two dates ("14 March 1879 – 18 April 1955")."""
    brackets = _OPENING_BRACKETS.match(first)
    if brackets is None:
        return None
    inside = brackets.group(1)
    explicit = _BIRTH_WORD.search(inside)
    if explicit is not None:
        return explicit.group(1)
    span = _FIRST_DATE.search(inside)
    return span.group(1) if span is not None and re.search(r"[–-]", inside[span.end(1) :][:4]) else None


# --- the infobox ---------------------------------------------------------------------------------------


def read_infobox(lead_wikitext: str) -> Infobox:
    """The capital and birth date of the first {{Infobox ...}} in the wikitext before the first heading."""
    start = _INFOBOX_START.search(lead_wikitext)
    if start is None:
        return Infobox()
    code = load_mwp().parse(lead_wikitext[start.start() :])
    box = next((t for t in code.filter_templates(recursive=False) if _is_infobox(t)), None)
    if box is None:
        return Infobox()
    params = {str(param.name).strip().lower(): param.value for param in box.params if param.showkey}
    return Infobox(capital=_linked_name(params.get("capital")), born=_template_date(params.get("birth_date")))


def _is_infobox(template: Any) -> bool:
    return str(template.name).strip().lower().startswith("infobox")


def _linked_name(value: Any) -> str | None:
    """The text of a value that is one wikilink and nothing else but markup: "[[Juneau, Alaska|Juneau]]"."""
    if value is None:
        return None
    links = value.filter_wikilinks(recursive=False)
    rest = value.strip_code().strip()
    if len(links) != 1:
        return None
    link = links[0]
    text = str(link.text if link.text is not None else link.title).strip()
    return text if rest == text and re.fullmatch(_NAME, text) else None


def _template_date(value: Any) -> str | None:
    """{{birth date|1879|3|14|df=y}} as the page writes dates: "14 March 1879" with df, else
    "March 14, 1879"."""
    if value is None:
        return None
    for template in value.filter_templates(recursive=False):
        if str(template.name).strip().lower() not in {"birth date", "birth date and age", "birth-date"}:
            continue
        numbers = [str(p.value).strip() for p in template.params if not p.showkey][:3]
        if len(numbers) != 3 or not all(n.isdigit() for n in numbers):
            return None
        year, month, day = (int(n) for n in numbers)
        if not (1 <= month <= 12 and 1 <= day <= 31):
            return None
        day_first = any(
            str(p.name).strip() == "df" and str(p.value).strip().lower() in {"y", "yes"}
            for p in template.params
        )
        month_name = _MONTH_LIST[month - 1]
        return f"{day} {month_name} {year}" if day_first else f"{month_name} {day}, {year}"
    return None

"""Rules realisation of question plans: a keypoint with its masked node turned into a question.

The masked node becomes a wh-phrase in place ("Ilse Marrow joined which organization in 2007?"); a masked
subject reads as a plain question ("Who led the foundation design?"). For a multi-hop plan, hop i's bridge
is replaced by a relative clause describing hop i-1's answer ("the organization that Ilse Marrow joined in
2007"), nested for longer chains. Pure string work: no model, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from irbgen.irb.node_types import name_noun
from irbgen.irb.records import NodeChange, PlanHop, QuestionPlan
from irbgen.irb.transforms import apply_changes
from irbgen.text import IRREGULAR, STOPWORDS, clean

# Private-use characters mark the masked node and the bridge: they are not word characters, so node
# changes (whole-word replacements) never touch them.
ANSWER = "\ue000"
BRIDGE = "\ue001"

ARTICLES = ("the", "a", "an")
PREPOSITIONS = frozenset(
    """about across after against along among around as at before behind between beyond by during for from
    in inside into near of on onto outside over since than through throughout to toward towards under
    until upon via with within without""".split()
)
HONORIFICS = frozenset("dr mr mrs ms miss sir dame lord lady prof professor".split())
NOT_TITLES = frozenset("later earlier today meanwhile eventually subsequently afterwards finally".split())
HEDGES = frozenset("about around approximately nearly almost roughly some over under".split())
UNITS = frozenset(
    """m km km2 km² cm mm kg g t ft mi mph ha kw mw gw kwh mwh gwh % m2 m² m3 l ml kph km/h""".split()
)
MONEY_WORDS = frozenset("pounds dollars euros yen francs marks crowns rupees".split())
NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen
    seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred dozen""".split()
)
NAMED_TYPES = frozenset("Person Organization Location Country Event Work Product Other".split())
HEADS = {
    "Person": "the person",
    "Organization": "the organization",
    "Location": "the place",
    "Country": "the country",
    "Event": "the event",
    "Work": "the work",
    "Product": "the product",
}

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_YEAR = re.compile(r"^(?:c\.\s*)?\d{3,4}(?:\s*(?:AD|BC|CE|BCE))?$", re.I)
_FULL_DATE = re.compile(rf"^(?:\d{{1,2}}\s+{_MONTH}\s+\d{{3,4}}|{_MONTH}\s+\d{{1,2}},?\s+\d{{3,4}})$", re.I)
_MONTH_YEAR = re.compile(rf"^{_MONTH}\s+\d{{3,4}}$", re.I)
_QUANTITY = re.compile(
    r"^(?:(?:about|around|approximately|nearly|almost|roughly|over|some|more than|less than|fewer than"
    r"|at least|up to)\s+)?(?P<num>[£$€¥]?\s?\d[\d,.]*|[a-z]+)(?:\s*(?P<scale>thousand|million|billion))?"
    r"(?:\s+(?P<noun>.+))?$",
    re.I,
)
_FRONT_COMMA = re.compile(
    r"^(?P<phrase>(?:In|On|At|During|Since|By|After|Before|From|Until|Between|Throughout|Following|Within)"
    r"(?:\s[^,\s]+){1,5}),\s+(?!\d{3,4}\b)(?P<rest>\S.*)$"
)
_FRONT_BARE = re.compile(
    rf"^(?P<phrase>(?:In|On|During|Since|By|After|Before|Until)\s(?:\d{{3,4}}|[{ANSWER}{BRIDGE}]))"
    rf"\s+(?P<rest>(?:the|an?|[A-Z{ANSWER}{BRIDGE}]).*)$"
)
_TRAILING_WORD = re.compile(r"(\S+)\s+$")
_POSSESSIVE = re.compile(r"^(?:'s|’s|'|’)(?!\w)")
_OWNED_OF = re.compile(rf"^[Tt]he ((?:[a-z][\w-]* ){{0,2}}[a-z][\w-]*) (?:of|in) {ANSWER}(?![\w'’])")


class BridgeNotWritable(ValueError):
    """A possessive bridge whose possessed noun phrase the rules cannot find ("X's seasonally adjusted
    unemployment rate"): describing it would give "the seasonally of the place that ..."."""


class NodeNotFound(ValueError):
    """A hop's masked node (or its bridge) is not written in any of its keypoints."""

    def __init__(self, hop: int, role: str, node: str) -> None:
        super().__init__(f"hop {hop}: the {role} {node!r} is not in any keypoint")
        self.hop, self.role, self.node = hop, role, node


@dataclass(frozen=True)
class Realization:
    """A realised plan: the question and one sub-question per hop (the last equals the question)."""

    question: str
    sub_questions: tuple[str, ...]


@dataclass(frozen=True)
class Slot:
    """Where a marker sits in a text: the span to replace and the words around it that shape the wh-phrase."""

    start: int
    end: int
    prep: str | None = None  # lowercase preposition taken into the span
    descriptor: str | None = None  # "engineering firm" from "the engineering firm Halden & Rusk"
    possessive: bool = False
    noun: str | None = None  # what a bare number counts ("240" + "people")
    measure: str | None = None  # "population" from "a population of 18,400"
    next_word: str = ""  # the word after the span, lowercased


# --- text helpers ------------------------------------------------------------------------------------


def tidy_question(text: str) -> str:
    """Single spaces, no space before punctuation, a capital first letter and exactly one final '?'."""
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([,;:.?!)])", r"\1", text)
    text = re.sub(r"\(\s+", "(", text)
    text = re.sub(r"\b(the|a|an) \1\b", r"\1", text, flags=re.I)
    text = re.sub(r"[\s.,;:!?]+$", "", text)
    if not text:
        return ""
    return text[0].upper() + text[1:] + "?"


def _clause(text: str) -> str:
    """A sentence as a clause inside another: no final stop, a leading function word in lower case."""
    text = re.sub(r"\s+", " ", text).strip().rstrip(".;,").strip()
    text = re.sub(r"\s+([,;:.)])", r"\1", text)
    first = text.split(" ", 1)[0]
    if first.lower() in STOPWORDS and (len(first) == 1 or not first.isupper()):
        text = first.lower() + text[len(first) :]
    return text


def _pop(before: str) -> tuple[str | None, str]:
    """The last word of `before` (which must end in a space) and the text before it."""
    match = _TRAILING_WORD.search(before)
    if match is None:
        return None, before
    return match.group(1), before[: match.start()] + (" " if match.start() else "")


_NOUNS_IN_LY = frozenset(
    "family supply assembly rally ally monopoly anomaly reply belly jelly lily holly".split()
)


_NOUNS_IN_ING = frozenset("building king wing ring string spring thing ceiling painting".split())


def _is_noun_like(word: str, *, last: bool) -> bool:
    """A lowercase word that may be part of a noun before a name; past tenses and -s verbs are not."""
    if not re.fullmatch(r"[a-z][a-z-]*", word) or word in STOPWORDS or word in IRREGULAR:
        return False
    if word.endswith("ed") or (last and word.endswith("s") and not word.endswith("ss")):
        return False
    if last and word.endswith("ing") and word not in _NOUNS_IN_ING:
        return False  # "the immigrants entering <name>": a participle, not an apposition noun
    return not word.endswith("ly") or word in _NOUNS_IN_LY  # "seasonally" adjusted


def _descriptor(before: str) -> tuple[str | None, str]:
    """An apposition noun before a name ("the engineering firm ") and the text before its article."""
    words: list[str] = []
    word, rest = _pop(before)
    while word and len(words) < 3 and _is_noun_like(word, last=not words):
        words.insert(0, word)
        word, rest = _pop(rest)
    if words and word and word.lower() in ARTICLES:
        return " ".join(words), rest
    return None, before


def _is_title(word: str) -> bool:
    """A capitalised common noun that can stand before a name at the start ("Engineer Ilse Marrow")."""
    lower = word.lower()
    return (
        word.isalpha()
        and word[0].isupper()
        and word[1:].islower()
        and lower not in STOPWORDS
        and lower not in NOT_TITLES
        and not lower.endswith("ly")
    )


def _is_bare_count(answer: str) -> bool:
    """A plain number ("240", "about 60,000", "five"): the words after it in the text say what it counts."""
    match = _QUANTITY.match(answer.strip())
    if match is None or match.group("noun"):
        return False
    num = match.group("num")
    return num[0].isdigit() or num.lower() in NUMBER_WORDS


def _after_count(after: str) -> tuple[str | None, int]:
    """What follows a bare number: (the counted noun, characters taken); a unit is taken but not named."""
    unit = re.match(r"\s+(\S+?)(?=[\s,.;:)]|$)", after)
    if unit and unit.group(1).lower() in UNITS:
        return None, unit.end()
    nouns: list[str] = []
    taken = 0
    while len(nouns) < 2:
        match = re.match(r"\s+([a-z][a-z-]*)(?![\w'’])", after[taken:])
        if match is None or not _is_noun_like(match.group(1), last=False) or match.group(1) in UNITS:
            break
        nouns.append(match.group(1))
        taken += match.end()
    return " ".join(nouns) or None, taken


def _before_slot(before: str, node_type: str) -> tuple[str, str | None]:
    """The text before a marker without its hedge, article, honorific or apposition, and that apposition."""
    descriptor = None
    if node_type in NAMED_TYPES:
        descriptor, before = _descriptor(before)
    if node_type == "Quantity":
        word, rest = _pop(before)
        if word and word.lower() in HEDGES:
            before = rest
    if descriptor is None:
        word, rest = _pop(before)
        if word and word.lower() in ARTICLES:
            before = rest
    if node_type == "Person" and descriptor is None:
        word, rest = _pop(before)
        if word and word.rstrip(".").lower() in HONORIFICS:
            before = rest
        word, rest = _pop(before)
        if word and not rest.strip() and _is_title(word):
            descriptor, before = word.lower(), rest
    return before, descriptor


def find_slot(text: str, marker: str, node_type: str, answer: str = "", *, take_prep: bool = True) -> Slot:
    """The span around `marker` that a wh-phrase or a description replaces, with what shapes it."""
    pos = text.index(marker)
    before, descriptor = _before_slot(text[:pos], node_type)
    after = text[pos + 1 :]
    end, noun, measure, prep = pos + 1, None, None, None
    possessive = _POSSESSIVE.match(after)
    if possessive:
        end += possessive.end()
    elif node_type == "Quantity" and _is_bare_count(answer):
        noun, taken = _after_count(after)
        end += taken
    if take_prep:
        word, rest = _pop(before)
        if word and word.lower() in PREPOSITIONS:
            prep, before = word.lower(), rest
    if node_type == "Quantity" and prep == "of" and noun is None:
        noun_phrase, rest = _descriptor(before)  # "a population of 18,400" asks "what population"
        if noun_phrase is not None:
            measure, prep, before = noun_phrase, None, rest
    start = len(before.rstrip()) + (1 if before.strip() else 0)
    following = re.match(r"\s*(\w+)", text[end:])
    next_word = following.group(1).lower() if following else ""
    return Slot(start, end, prep, descriptor, bool(possessive), noun, measure, next_word)


# --- wh-phrases and descriptions ---------------------------------------------------------------------


def _date_kind(answer: str) -> str:
    text = answer.strip()
    if _YEAR.match(text):
        return "year"
    if _FULL_DATE.match(text):
        return "date"
    if _MONTH_YEAR.match(text):
        return "month"
    return "time"


def _quantity_noun(answer: str) -> str | None:
    """What a quantity counts, when the answer names it ("240 people" -> "people"); None for units, money."""
    match = _QUANTITY.match(answer.strip())
    if match is None or not match.group("noun"):
        return None
    num = match.group("num")
    if not (num[0].isdigit() or num[0] in "£$€¥" or num.lower() in NUMBER_WORDS):
        return None
    noun = match.group("noun").strip()
    first = noun.split()[0].lower()
    if num[0] in "£$€¥" or first in UNITS or first in MONEY_WORDS:
        return None
    return noun


def _with_prep(prep: str | None, phrase: str) -> str:
    return f"{prep} {phrase}" if prep else phrase


def wh_phrase(slot: Slot, answer: str, answer_type: str, *, subject: bool) -> str:
    """The wh-phrase that asks for the masked node in place."""
    if slot.measure:
        return f"what {slot.measure}"
    if answer_type == "Date":
        if slot.prep is None and slot.next_word == "when" and _date_kind(answer) == "time":
            return "at what time"  # not "formed when when a moraine ..."
        return _date_wh(slot.prep, _date_kind(answer))
    if answer_type == "Quantity":
        counted = _quantity_noun(answer) or slot.noun
        if "%" in answer or re.search(r"\bper ?cent\b", answer):
            return _with_prep(slot.prep, "what percentage")
        return _with_prep(slot.prep, f"how many {counted}" if counted else "what amount")
    if slot.descriptor:
        return _with_prep(slot.prep, f"which {slot.descriptor}" + ("'s" if slot.possessive else ""))
    if answer_type == "Person":
        if slot.possessive:
            return _with_prep(slot.prep, "whose")
        return f"{slot.prep} whom" if slot.prep else ("who" if subject else "whom")
    noun = asked_noun(answer, answer_type)
    if noun is not None:  # "Chilton County": "which county", not "which place"
        return _with_prep(slot.prep, f"which {noun}" + ("'s" if slot.possessive else ""))
    if answer_type == "Location":
        if slot.possessive:
            return _with_prep(slot.prep, "which place's")
        return _with_prep(slot.prep, "which place")
    base = {"Country": "which country", "Organization": "which organization"}.get(answer_type, "what")
    if slot.possessive:
        return _with_prep(slot.prep, f"{base}'s" if base != "what" else "whose")
    return _with_prep(slot.prep, base)


def asked_noun(answer: str, answer_type: str) -> str | None:
    """The noun an organization or place is asked with when its name says what it is ("county" for
    "Chilton County"), else None."""
    return name_noun(answer) if answer_type in ("Location", "Organization") else None


def generic_wh(question: str, answer: str, answer_type: str) -> str:
    """The question with "which county" (from the answer's name: wh_phrase) put back as "which place",
    "which university" as "which organization": what the question gates parse. The small parser reads
    "at which university claims" as a relative clause, so gates judge the wording they were written on."""
    noun = asked_noun(answer, answer_type)
    if noun is None:
        return question
    kind = "place" if answer_type == "Location" else "organization"
    return re.sub(rf"\b([Ww])hich {noun}\b", lambda match: f"{match.group(1)}hich {kind}", question)


def _date_wh(prep: str | None, kind: str) -> str:
    if kind in ("year", "date"):
        return _with_prep(prep, f"what {kind}")
    if kind == "month" and prep == "in":
        return "in what month and year"
    return _with_prep(None if prep in (None, "in", "on", "at", "during") else prep, "when")


def _head_and_relative(slot: Slot, answer: str, answer_type: str, *, subject: bool) -> tuple[str, str]:
    """The head noun phrase and the relative word(s) of a description of the masked node."""
    who = answer_type == "Person"
    if slot.measure:
        return f"the {slot.measure}", "that"
    if answer_type == "Date":
        kind = _date_kind(answer)
        if kind == "time" and slot.prep in (None, "in", "on", "at", "during"):
            return "the time", "when"
        return f"the {kind}", f"{slot.prep} which" if slot.prep else "that"
    if answer_type == "Quantity":
        counted = _quantity_noun(answer) or slot.noun
        head = f"the number of {counted}" if counted else "the amount"
    elif slot.descriptor:
        head = f"the {slot.descriptor}"
    else:
        head = HEADS.get(answer_type, "the thing")
    if answer_type in ("Location", "Country") and slot.prep in ("in", "at"):
        return head, "where"
    if slot.possessive:
        return head, "whose"
    if slot.prep:
        return head, f"{slot.prep} whom" if who else f"{slot.prep} which"
    if who:
        return head, "who" if subject else "whom"
    return head, "that"


# A fronted time or place phrase alone before the slot: still the subject ("On April 19, 2007, who")
_FRONTED_ONLY = re.compile(
    r"^(?:On|In|At|By|During|After|Before|From|Since|Until)\b[^;]*,\s*$"
    r"|^(?:On|In|By)\s+(?:[A-Z][a-z]+\s+)?(?:\d{1,2},?\s+)?(?:[A-Z][a-z]+\s+)?\d{4}\s*$"  # "On July 25, 2005"
)
_BARE_DATE_VERB = re.compile(r"\b(?:born|died|baptized|baptised)\s*$")


def realize_text(text: str, answer: str, answer_type: str) -> str:
    """The question asking for the node at the ANSWER marker of `text`."""
    slot = find_slot(text, ANSWER, answer_type, answer)
    before = text[: slot.start]
    bracketed = before.count("(") > before.count(")")  # "Ilse Marrow (born 1979)" stays a bracket's shorthand
    if answer_type == "Date" and slot.prep is None and not bracketed and _BARE_DATE_VERB.search(before):
        kind = _date_kind(answer)  # "was born April 11, 1895" asks "was born on what date"
        slot = replace(slot, prep="on" if kind == "date" else "in" if kind in ("year", "month") else None)
    subject = not before.strip() or _FRONTED_ONLY.match(before) is not None
    wh = wh_phrase(slot, answer, answer_type, subject=subject)
    return tidy_question(f"{text[: slot.start]}{wh} {text[slot.end :]}")


_DEFINED_AS = re.compile(r"\s*(?:is|was) (the (?!same\b|other\b)[^,;:()]+?)\.?\s*$")


def describe_text(text: str, answer: str, answer_type: str, head: str | None = None) -> str:
    """A noun phrase for the node at the ANSWER marker: 'the organization that Ilse Marrow joined in 2007'."""
    slot = find_slot(text, ANSWER, answer_type, answer)
    subject = not text[: slot.start].strip()
    defined = _DEFINED_AS.match(text[slot.end :]) if subject else None
    if defined is not None:
        return defined.group(1)  # "<answer> was the first spaceflight ..." -> "the first spaceflight ..."
    default_head, relative = _head_and_relative(slot, answer, answer_type, subject=subject)
    before, after = text[: slot.start], text[slot.end :]
    if slot.possessive and not subject:
        # "joined X's board in 2007" -> "whose board Marrow joined in 2007": the possessed noun comes first.
        owned = re.match(r"\s*([a-z][a-z-]*)(?!\w)", after)
        if owned and owned.group(1) not in STOPWORDS:
            relative, after = f"whose {owned.group(1)}", after[owned.end() :]
    return f"{head or default_head} {relative} {_clause(before + ' ' + after)}"


# --- a hop's keypoint with its markers ---------------------------------------------------------------


def node_spans(text: str, node: str) -> list[tuple[int, int]]:
    """Where NODE stands in TEXT as whole words, any case."""
    pattern = re.compile(rf"(?<!\w){re.escape(node.strip())}(?!\w)", re.I)
    return [match.span() for match in pattern.finditer(text)]


def _mark(text: str, answer: str, bridge: str | None) -> str | None:
    """The text with the answer (and bridge) replaced by markers, or None when one is missing."""
    for a_start, a_end in node_spans(text, answer):
        if bridge is None:
            return text[:a_start] + ANSWER + text[a_end:]
        for b_start, b_end in node_spans(text, bridge):
            if b_end <= a_start or b_start >= a_end:
                pieces = sorted([(a_start, a_end, ANSWER), (b_start, b_end, BRIDGE)], reverse=True)
                for start, end, marker in pieces:
                    text = text[:start] + marker + text[end:]
                return text
    return None


# A comma that sets off a participle, a source, an adverbial clause, a cause or a ranking apposition after
# the main clause: ", spending nine days ...", ", according to The Lancet", ", due to ...", ", the first to
# be held" (a plain apposition, a relative clause or ", including ..." belongs to the noun before).
_TRAILING_COMMA = re.compile(  # "including" lists
    r",\s+(?=(?:(?!including\b)[a-z]+ing|according to|after|before|while|whilst|when|until|as|because"
    r"|although|though|whereas|due to|owing to|the (?:first|second|third|last|only|[a-z]+est)|one of the)\b)"
)
_LEADING_PHRASE = re.compile(
    r"^(?:As|According|In|On|At|During|After|Before|Since|With|Despite|Following|Under)\b"
)


def _move_fronted(text: str) -> str:
    """Move a fronted adverbial to the end of the main clause: 'In 2024 the X awarded Y.' -> 'the X
    awarded Y in 2024.'; before a trailing participle, source or adverbial clause, which it would
    otherwise seem to date: 'In 1988, M became the first Afghan to reach space, spending nine days ...' ->
    'M became the first Afghan to reach space in 1988, spending nine days ...'; likewise before a ranking
    apposition (", the first to be held ...", ", one of the ...")."""
    match = _FRONT_COMMA.match(text) or _FRONT_BARE.match(text)
    if match is None:
        return text
    phrase = match.group("phrase")
    phrase = phrase[0].lower() + phrase[1:]
    rest = match.group("rest").rstrip().rstrip(".")
    trailing = None if _LEADING_PHRASE.match(rest) else _TRAILING_COMMA.search(rest)
    if trailing is not None:
        return f"{rest[: trailing.start()]} {phrase}{rest[trailing.start() :]}."
    return f"{rest} {phrase}."


def prepare_hop(hop: PlanHop, index: int, changes: Sequence[NodeChange] = ()) -> str:
    """The hop's keypoint that holds its answer (and bridge), marked, with the node changes applied."""
    if index > 0 and not hop.bridge:
        raise NodeNotFound(index, "bridge", "")
    texts = [clean(text) for text in hop.keypoints]
    for text in texts:
        marked = _mark(text, hop.answer, hop.bridge if index > 0 else None)
        if marked is not None:
            return apply_changes(_move_fronted(marked), changes)
    if any(node_spans(text, hop.answer) for text in texts):
        raise NodeNotFound(index, "bridge", hop.bridge or "")
    raise NodeNotFound(index, "answer", hop.answer)


def later_possessives(text: str, node: str, start: int) -> list[tuple[int, int]]:
    """Spans of "<node>'s" in `text` after `start`: a second mention a description cannot replace."""
    pattern = re.compile(rf"(?<!\w){re.escape(node.strip())}(?:'s|’s)(?!\w)", re.I)
    return [match.span() for match in pattern.finditer(text, start)]


def _its_for_later_mentions(text: str, node: str, marker: str) -> str:
    """ "... of <marker>'s economy, almost all of Angola's revenue" -> "... almost all of its revenue":
    the question word or description stands for the node once; a later possessive of it becomes "its"."""
    at = text.find(marker)
    if at < 0 or not node.strip():
        return text
    for start, end in reversed(later_possessives(text, node, at + 1)):
        text = text[:start] + "its" + text[end:]
    return text


def _possessed(after: str) -> tuple[str, int] | None:
    """The noun phrase a possessive owns ("'s largest customer is" -> "largest customer") and its length."""
    owner = _POSSESSIVE.match(after)
    if owner is None:
        return None
    taken, nouns = owner.end(), []
    while len(nouns) < 4:
        match = re.match(r"\s+([A-Za-z][\w-]*)(?![\w'’])", after[taken:])
        if match is None:
            break
        word = match.group(1)
        if nouns and (nouns[-1].endswith("s") or not (word[0].isupper() or _is_noun_like(word, last=True))):
            break  # a plural ends the noun phrase; a verb ("is", "carries", "inspected") follows it
        if not nouns and not (word[0].isupper() or _is_noun_like(word, last=False)):
            return None
        nouns.append(word)
        taken += match.end()
    return (" ".join(nouns), taken) if nouns else None


def possessed_phrase(keypoints: Sequence[str], node: str, parse: Callable[[str], Any]) -> str | None:
    """The noun phrase that `node`'s possessive owns in the first keypoint with "<node>'s", by the parse:
    "Andorra's natural resources include ..." -> "natural resources"; None when the parse does not say
    (the possessive is not spaCy's "poss", or the phrase is not one run of the head's modifiers);
    BridgeNotWritable when a modifier follows the phrase ("Alabama's population younger than age 1")."""
    for text in keypoints:
        for _, end in node_spans(text, node):
            if text[end : end + 2] not in ("'s", "’s"):
                continue
            doc = parse(text)
            marker = next((token for token in doc if token.idx == end), None)
            if marker is None or marker.dep_ != "case" or marker.head.dep_ != "poss":
                return None
            head = marker.head.head
            phrase = doc[marker.i + 1 : head.i + 1]
            if (
                not len(phrase)
                or not head.tag_.startswith("NN")
                or any(token.head.i not in range(phrase.start, phrase.end) for token in phrase[:-1])
            ):
                return None
            after = doc[head.i + 1] if head.i + 1 < len(doc) else None
            modified = after is not None and (
                after.head == head and after.dep_ in ("amod", "acl") or after.tag_ == "JJR"
            )
            if modified:  # "Alabama's population younger than age 1": "of <description>" would split them
                raise BridgeNotWritable(f"a modifier after the possessed {phrase.text!r}: {after.text!r}")
            return phrase.text
    return None


def _describe_bridge(text: str, previous: str, hop: PlanHop, owned_phrase: str | None = None) -> str:
    """`text` with its bridge replaced by a description of the previous hop's answer ("the firm that ...");
    a possessive bridge becomes "the deck of <description>", the deck being `owned_phrase` when the parse
    gave it ("the natural resources of ..."), else the nouns the words after the possessive look like."""
    slot = find_slot(text, BRIDGE, hop.answer_type, hop.answer, take_prep=False)
    noun = slot.descriptor or hop.answer_noun  # "the engineering firm <bridge>", or what its page says
    head = f"the {noun}" if noun else None
    description = describe_text(previous, hop.answer, hop.answer_type, head)
    after = text[text.index(BRIDGE) + 1 :]
    owner = _POSSESSIVE.match(after)
    parsed = owner is not None and owned_phrase and after[owner.end() :].startswith(f" {owned_phrase}")
    owned = (owned_phrase, owner.end() + 1 + len(owned_phrase)) if parsed else _possessed(after)
    if owned is not None and _POSSESSIVE.match(after[owned[1] :]):  # "Azerbaijan's women's national team"
        raise BridgeNotWritable(f"a possessive after the possessive bridge {hop.answer!r}: {after[:60]!r}")
    if owned is not None:
        description, after = f"the {owned[0]} of {description}", after[owned[1] :]
    elif _POSSESSIVE.match(after):
        raise BridgeNotWritable(f"no noun phrase after the possessive bridge {hop.answer!r}: {after[:60]!r}")
    return text[: slot.start] + description + after


def _owner_first(text: str) -> str:
    """An inner hop's "The defense budget of <answer> ..." as "<answer>'s defense budget ...", so that its
    answer is the subject and it can be described: "the country whose defense budget ..."."""
    return _OWNED_OF.sub(lambda match: f"{ANSWER}'s {match.group(1)}", text, count=1)


def defines_itself(hop: PlanHop) -> bool:
    """Whether the hop's keypoint says what its answer is by a definite noun phrase ("<answer> was the first
    spaceflight that ..."), which then describes the answer with no head noun of its type."""
    try:
        text = prepare_hop(hop, 0)
    except NodeNotFound:
        return False
    return text.startswith(ANSWER) and _DEFINED_AS.match(text[len(ANSWER) :]) is not None


def inner_question(hop: PlanHop) -> str:
    """The question a hop asks when it is the first hop of a chain (NodeNotFound if its answer is missing)."""
    return realize_text(_owner_first(prepare_hop(hop, 0)), hop.answer, hop.answer_type)


def realize_plan(plan: QuestionPlan, parse: Callable[[str], Any] | None = None) -> Realization:
    """The question and sub-questions of a plan by template realisation; NodeNotFound if a node is missing.
    With `parse` (a spaCy pipeline), a possessive bridge owns the noun phrase the parse gives."""
    if not plan.hops:
        raise ValueError(f"plan {plan.id!r} has no hops")
    texts = [prepare_hop(hop, index, plan.changes) for index, hop in enumerate(plan.hops)]
    texts = [_owner_first(text) if index < len(texts) - 1 else text for index, text in enumerate(texts)]
    questions: list[str] = []
    previous = ""  # the previous hop's text, its own bridge already described
    for index, (hop, text) in enumerate(zip(plan.hops, texts, strict=True)):
        if hop.answer_type != "Person":
            text = _its_for_later_mentions(text, hop.answer, ANSWER)
        if index > 0:
            if plan.hops[index - 1].answer_type != "Person":
                text = _its_for_later_mentions(text, hop.bridge or "", BRIDGE)
            owned = possessed_phrase(hop.keypoints, hop.bridge or "", parse) if parse is not None else None
            text = _describe_bridge(text, previous, plan.hops[index - 1], owned)
        questions.append(realize_text(text, hop.answer, hop.answer_type))
        previous = text
    return Realization(question=questions[-1], sub_questions=tuple(questions))

"""False premises: one Quantity or Date of a keypoint changed so that its claim is known to be false, or
a refusal naming the rule that forbids it.

A false premise must be false, not nonsense: only changes whose falsity the build can show are made.
- Quantity. An exact number moves by at least 30% (to 0.25-0.7x or 1.4-3x its value) and never to a
  rounding of it (466 never becomes 470 or 500); a hedged one ("about", "approximately", "around",
  "nearly", "almost", "some", "roughly", "an estimated", "close to") to at most 0.4x or at least 2x, so
  "about 2%" never becomes "about 1%"; a lower bound ("more than", "over", "at least") only up, to 1.5-3x;
  an upper bound ("less than", "under", "up to", "fewer than") only down, to 0.25-0.6x. Refused: a
  number beside a bracketed conversion ("1,023 metres (3,356 ft)"), one end of a range, a term of a
  ratio, an ordinal, a rank ("the top 10"), a year written as a number, a number in a name ("Apollo
  13"), a share with no false value left, and a value the answer holds where another may hold it too
  (`value_of_the_answer`).
- Date. Only a date that says when something happened ("in 1909", "on 14 March 1879", "in April 1985"),
  given as "N years ago" with N at least max(3, a tenth of its age) years from every day the date may
  mean. Refused: a date after any other word ("by 1954", "between 1609 and ..."), under a bound in its
  clause ("since the end of the civil war in 2002"), one end of a span ("in 1991-2004"), beside another
  date, on a recurring ranking, or where others may have done the same in another year
  (`date_of_a_common_event`).
Names (people, countries) are never swapped: nothing tells a swapped name from nonsense ("A.
Triantafyllou was born in Ulm"). Pure functions; randomness comes from the caller's `random.Random`.
"""

from __future__ import annotations

import calendar
import math
import random
import re
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import NamedTuple

from irbgen.irb.gates import LOWER_BOUND, UPPER_BOUND
from irbgen.irb.records import NodeChange, Triple
from irbgen.irb.transforms import _NUMBER, _format_like, _number_value, _relative, parse_date

CHANGED_TYPES = ("Date", "Quantity")


class Refusal(NamedTuple):
    """Why a node gets no false value: a reason (counted in the reject) and a detail."""

    reason: str
    detail: str


# --- where the node stands ----------------------------------------------------------------------------


def locate(node: str, texts: list[str] | tuple[str, ...]) -> tuple[str, str] | None:
    """(text before, text after) the first whole-word occurrence of `node` in `texts`, or None."""
    pattern = re.compile(rf"(?<!\w){re.escape(node.strip())}(?!\w)", re.IGNORECASE)
    for text in texts:
        found = pattern.search(text)
        if found is not None:
            return text[: found.start()], text[found.end() :]
    return None


# --- quantities ----------------------------------------------------------------------------------------

_HEDGE = re.compile(
    r"\b(?:about|approximately|approx\.|around|nearly|almost|some|roughly|circa|c\.|an estimated|"
    r"estimated|close to)\s*\W?$",
    re.IGNORECASE,
)
_SPAN_NEXT = re.compile(r"^\s*(?:[-–—]|to|and|or|through)\s*[$£€¥]?\d", re.IGNORECASE)
_SPAN_BEFORE = re.compile(r"(?:\d\s*(?:[-–—]|to|and|or)\s*[$£€¥]?|\bbetween\s+[$£€¥]?)$", re.IGNORECASE)
_RATIO_NEXT = re.compile(r"^\s*(?::|/|out of\b|in\b(?=\s*\d))\s*\d", re.IGNORECASE)
_RATIO_BEFORE = re.compile(r"\d\s*(?::|/|out of|in)\s*$", re.IGNORECASE)
_CONVERSION_NEXT = re.compile(r"^[^()]{0,20}\(\s*(?:about|approx\.?|c\.|~|≈)?\s*[$£€¥]?\d", re.IGNORECASE)
_CONVERSION_BEFORE = re.compile(r"\d[^()]{0,20}\(\s*(?:about|approx\.?|c\.|~|≈)?\s*[$£€¥]?$", re.IGNORECASE)
_ORDINAL_NEXT = re.compile(r"^(?:st|nd|rd|th)\b", re.IGNORECASE)
_ERA = re.compile(r"^\s*(?:BC|BCE|AD|CE)\b|^\s*B\.C\.")
_TIME_WORD_BEFORE = re.compile(
    r"\b(?:in|on|from|since|until|till|by|after|before|between|during|circa|c\.|AD)\s*$", re.IGNORECASE
)

# each kind's (lowest, highest factor down, lowest, highest factor up); None: never that way
FACTORS = {
    "exact": (0.25, 0.7, 1.4, 3.0),
    "hedged": (0.2, 0.4, 2.0, 4.0),
    "lower bound": (None, None, 1.5, 3.0),
    "upper bound": (0.25, 0.6, None, None),
}


def number_with_conversion(before: str, after: str) -> str | None:
    """A number beside a bracketed conversion ("1,023 metres (3,356 ft)") or inside one: changing one of
    the two makes the sentence contradict itself."""
    if _CONVERSION_NEXT.match(after):
        return f"followed by a conversion: {after[:30]!r}"
    if _CONVERSION_BEFORE.search(before):
        return f"inside a conversion: {before[-30:]!r}"
    return None


def number_in_span(before: str, after: str) -> str | None:
    """One end of a range ("80-95%", "between 22,832 and 165,000"): moving it may keep the range true."""
    if _SPAN_NEXT.match(after) or _SPAN_BEFORE.search(before):
        return f"one end of a range: {(before[-15:] + '…' + after[:15])!r}"
    return None


def number_in_ratio(before: str, after: str) -> str | None:
    """A term of a ratio ("3:1", "1 in 4", "2 out of 3"): one term alone does not make it false."""
    if _RATIO_NEXT.match(after) or _RATIO_BEFORE.search(before):
        return f"a term of a ratio: {(before[-15:] + '…' + after[:15])!r}"
    return None


def number_is_ordinal(after: str) -> str | None:
    """An ordinal ("the 45th Academy Awards"): a rank names a thing, it is no amount."""
    return "an ordinal" if _ORDINAL_NEXT.match(after) else None


def number_is_a_year(number: re.Match[str], node: str, before: str, after: str) -> str | None:
    """A year written as a number ("181 BC", "from 548 and onward", "In 1629 pirate ships from Algeria
    raided ...", a bare 1909): dates move only as dates (see `date_refusal`)."""
    if _ERA.match(after):
        return f"a year with its era: {after.strip()[:4]!r}"
    whole = number.group("frac") is None and "," not in number.group("int")
    year_like = whole and 1000 <= int(number.group("int")) <= 2100
    if year_like and _TIME_WORD_BEFORE.search(before):
        return f"a year after a time word: {before[-12:]!r}"
    bare = number.group(0) == node.strip()
    if bare and _TIME_WORD_BEFORE.search(before):
        return f"a bare number after a time word: {before[-12:]!r}"
    if bare and year_like:
        return "a bare number that reads as a year"
    named = _SINGULAR_NEXT.match(after)
    if year_like and named and not _counted(named.group(1)):
        return f"a year naming a thing: {number.group(0)} {named.group(1)!r}"  # "his 1851 essay"
    return None


_SINGULAR_NEXT = re.compile(r"\s+([a-z]+)\b")
_SINGLE_UNITS = frozenset("m km kg g t cm mm ft in mi lb oz mph ha acre hectare metre meter".split())
_IRREGULAR_PLURALS = frozenset("people men women children feet teeth mice geese".split())


def _counted(word: str) -> bool:
    """A word a count stands before: a plural ("1629 ships", "1007 kilometers") or a unit ("1300 m")."""
    plural = word.endswith("s") and not word.endswith(("ss", "us", "is"))  # not "census", "basis"
    return plural or word in _SINGLE_UNITS or word in _IRREGULAR_PLURALS


_RANK_BEFORE = re.compile(r"\b(?:top|bottom|no\.|number|#|ranked|rank|position)\s*$", re.IGNORECASE)


def number_is_a_rank(before: str) -> str | None:
    """A rank or a cut of a ranking ("one of the top 10 reformers", "number 4 global touristic
    destination"): a place in the top 10 is also in the top 24, and may be in the top 4."""
    found = _RANK_BEFORE.search(before)
    return None if found is None else f"a rank: {found.group(0).strip()!r}"


def number_in_name(before: str, after: str) -> str | None:
    """A number that is part of a name ("the Apollo 13 emergency", "Boeing 747") or counts nothing
    ("the lower 48"): changing it names nothing."""
    word = re.search(r"(\S+)\s+$", before)
    if word is not None and re.fullmatch(r"[A-Z][\w-]*", word.group(1)) and not _is_unit_word(word.group(1)):
        return f"part of a name: {word.group(1)!r}"
    measured = re.search(r"[$£€¥]\s*$|\b(?:US|USD|EUR|GBP|Rs\.?)\s*\$?\s*$", before) is not None
    if not measured and not re.match(r"\s*(?:%|[A-Za-z°])", after):
        return f"counts nothing: {(before[-15:] + '…' + after[:10])!r}"
    return None


def _is_unit_word(word: str) -> bool:
    """Capitalised words that stand before an amount, not in a name: "US", "USD", "Only", "About"."""
    return word.upper() in ("US", "USD", "EUR", "GBP", "RS", "RS.") or word.lower() in _LEADING_WORDS


_LEADING_WORDS = frozenset(
    "only about approximately around nearly almost some roughly over under more fewer less than at least "
    "up to just exactly reportedly estimated an a the".split()
)


def bound_kind(before: str) -> str:
    """How the number is stated: "exact", "hedged", "lower bound" or "upper bound" (read from the words
    just before it, in the node or the keypoint)."""
    near = before[-40:].lower()
    if LOWER_BOUND.search(near):
        return "lower bound"
    if UPPER_BOUND.search(near):
        return "upper bound"
    return "hedged" if _HEDGE.search(near) else "exact"


def roundings(value: Decimal) -> set[Decimal]:
    """Every rounding of `value` to 1 and more significant digits (466: 500, 470, 466)."""
    if value == 0:
        return {value}
    found = set()
    digits = len(value.normalize().as_tuple().digits)
    for places in range(1, digits + 1):
        found.add(_to_significant(value, places))
    return {number.normalize() for number in found}


def _to_significant(value: Decimal, places: int) -> Decimal:
    """`value` rounded to `places` significant digits (half up)."""
    exponent = value.adjusted() - places + 1
    return value.scaleb(-exponent).quantize(Decimal(1), rounding=ROUND_HALF_UP).scaleb(exponent)


def clear_margin(old: Decimal, new: Decimal, kind: str) -> bool:
    """The new value lies in the factor band of its kind (`FACTORS`) and, for an exact number, is no
    rounding of the old one."""
    if old <= 0 or new <= 0:
        return False
    low_down, high_down, low_up, high_up = FACTORS[kind]
    factor = new / old
    down = high_down is not None and factor <= Decimal(str(high_down))
    up = low_up is not None and factor >= Decimal(str(low_up))
    if not (down or up):
        return False
    return kind != "exact" or new.normalize() not in roundings(old)


def _article(before: str, number: str) -> str:
    """ "a"/"an" before a changed number as it is spoken ("an 800 MW" -> "a 1926 MW")."""
    found = re.search(r"\b(an?)\s+$", before, re.IGNORECASE)
    if found is None:
        return before
    digits = number.replace(",", "").split(".")[0]
    vowel = digits.startswith("8") or (len(digits) % 3 == 2 and digits[:2] in ("11", "18"))
    word = "an" if vowel else "a"
    word = word.capitalize() if found.group(1)[0].isupper() else word
    return before[: found.start(1)] + word + before[found.end(1) :]


def perturbed_value(node: str, rng: random.Random, before: str = "", after: str = "") -> str | Refusal:
    """`node` with its first number changed by a clear margin for how it is stated (see the module
    docstring), formatted the same way; `before` and `after` are the keypoint's text around the node.
    A Refusal when no such value is allowed."""
    match = _NUMBER.search(node)
    if match is None:
        return Refusal("quantity_without_number", f"{node!r} has no number")
    lead, tail = before + node[: match.start()], node[match.end() :] + after
    checks = (
        ("quantity_with_conversion", number_with_conversion(lead, tail)),
        ("quantity_in_range", number_in_span(lead, tail)),
        ("quantity_in_ratio", number_in_ratio(lead, tail)),
        ("quantity_ordinal", number_is_ordinal(tail)),
        ("quantity_is_a_year", number_is_a_year(match, node, lead, tail)),
        ("quantity_is_a_rank", number_is_a_rank(lead)),
        ("quantity_in_name", number_in_name(lead, tail)),
    )
    for reason, detail in checks:
        if detail is not None:
            return Refusal(reason, f"{node!r}: {detail}")
    value = _number_value(match)
    kind = bound_kind(lead)
    share = re.match(r"\s*(?:%|per ?cent\b)", tail, re.IGNORECASE) is not None
    low_down, high_down, low_up, high_up = FACTORS[kind]
    draws = []
    for _ in range(12):
        down = low_up is None or (high_down is not None and rng.random() < 0.5)
        draws.append(rng.uniform(low_down, high_down) if down else rng.uniform(low_up, high_up))
    ends = [factor for factor in (high_up, low_up, low_down, high_down) if factor is not None]
    for factor in draws + ends:  # the band's ends last: a small value may round back into the band
        new = value * Decimal(str(round(factor, 6)))
        if kind != "exact":  # "about 400000" -> "about 100000", not "about 124504"
            new = _to_significant(new, len(value.normalize().as_tuple().digits))
        candidate = _format_like(new, match)
        number = Decimal(candidate.replace(",", ""))
        if clear_margin(value, number, kind) and not (share and number > 100):
            return _article(node[: match.start()], candidate) + candidate + node[match.end() :]
    return Refusal("quantity_no_clear_value", f"{node!r} ({kind}): no value off by a clear margin")


# --- dates ---------------------------------------------------------------------------------------------

_EVENT_PREPOSITION = re.compile(r"\b(?:in|on)\s+$", re.IGNORECASE)
_BOUND_WORDS = re.compile(r"\b(?:since|until|till|after|before|from|between|through)\b", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[,;:()]|\b(?:and|but|which|who|that|when|while)\b", re.IGNORECASE)
_DATE_SPAN_NEXT = re.compile(r"^\s*(?:[-–—]|to|and|or|until|through)\s*\d", re.IGNORECASE)
DATE_MARGIN_YEARS = 3
DATE_MARGIN_SHARE = 0.1


def date_refusal(node: str, before: str, after: str) -> Refusal | None:
    """Why the date cannot be moved into a false premise: it does not follow "in" or "on"
    (date_not_when: "by 1954", "since 2002", "between 1609 and 1616" keep other dates true), a bound word
    governs its clause (date_under_bound: "since the end of the civil war in 2002"), or it opens a span
    (date_in_span: "in 1991-2004"). None when it may move."""
    if parse_date(node) is None:
        return Refusal("date_unparsed", f"{node!r} is no date irbgen can read")
    if not _EVENT_PREPOSITION.search(before):
        word = re.search(r"(\S+)\s*$", before)
        said = f"after {word.group(1)!r}" if word else "with no preposition"
        return Refusal("date_not_when", f"{node!r} stands {said}, not after 'in' or 'on'")
    if _DATE_SPAN_NEXT.match(after):
        return Refusal("date_in_span", f"{node!r} opens a span: {after[:15]!r}")
    clause = _EVENT_PREPOSITION.sub("", before)
    starts = list(_CLAUSE_START.finditer(clause))
    clause = clause[starts[-1].end() :] if starts else clause
    bound = _BOUND_WORDS.search(clause)
    if bound is not None:
        return Refusal("date_under_bound", f"{node!r} is under {bound.group(0)!r}: {clause.strip()[-50:]!r}")
    return None


_RANKING = re.compile(
    r"\b(?:rank(?:ed|s|ing)?|rated|rating|nominated|recommended|listed|cited as|named as|voted)\b",
    re.IGNORECASE,
)
_ONE_OF_A_KIND = re.compile(
    r"\b(?:first|last|(?:the|its|his|her|their) only|sole|earliest|latest|oldest|youngest|largest|biggest|"
    r"highest|longest|most|least|best|worst|second|third)\b",
    re.IGNORECASE,
)


def date_of_a_ranking(texts: list[str] | tuple[str, ...]) -> str | None:
    """A keypoint about a ranking or a list that comes out again and again ("In 2014 the Tax Foundation
    ranked Alaska ... fourth", "recommended as a top travel destination, by Lonely Planet"): in another
    year the same place may have held, so a moved date is not known to be false."""
    found = next((m for m in map(_RANKING.search, texts) if m is not None), None)
    return None if found is None else f"a recurring ranking or list ({found.group(0)!r})"


DISTINCT_DIGITS = 4  # an exact value with this many significant digits is no other thing's value


HOLDER_STEPS = 3  # triples between an answer and a value it holds ("Azerbaijan" - respondents - "21%")


def _holds(answer: str, node: str, triples: list[Triple]) -> bool:
    """The answer and the node are at most HOLDER_STEPS triples apart in the fact's graph."""
    ends: dict[str, set[str]] = {}
    for triple in triples:
        head, tail = triple.head.strip().casefold(), triple.tail.strip().casefold()
        ends.setdefault(head, set()).add(tail)
        ends.setdefault(tail, set()).add(head)
    reached, frontier = {answer.strip().casefold()}, {answer.strip().casefold()}
    for _ in range(HOLDER_STEPS):
        frontier = {other for end in frontier for other in ends.get(end, ())} - reached
        reached |= frontier
    return node.strip().casefold() in reached


def value_of_the_answer(
    node: str, replacement: str, answer: str, triples: list[Triple], texts: list[str] | tuple[str, ...]
) -> str | None:
    """A changed value that the answer itself holds ("Which country's external debt is extremely low at
    about 7% of GDP?", "the literacy rate in which country is 32.7 percent?"): another country may hold
    the new value, so the question may have an answer. Allowed when the fact makes its holder one of a
    kind ("the largest defence budget in Africa") or the new value is exact with DISTINCT_DIGITS
    significant digits or more ("110,638 Muslims")."""
    if not _holds(answer, node, triples) or any(_ONE_OF_A_KIND.search(text) for text in texts):
        return None
    where = locate(node, texts)
    number = _NUMBER.search(replacement)
    before = (where[0] if where else "") + (replacement[: number.start()] if number else "")
    if number is not None and bound_kind(before) == "exact":
        digits = number.group(0).replace(",", "").replace(".", "").strip("0")
        if len(digits) >= DISTINCT_DIGITS:
            return None
    return f"{answer!r} holds the value ({replacement!r}): another may hold it"


def date_beside_another_date(node: str, answer: str, triples: list[Triple]) -> str | None:
    """Another date the question keeps ("... reinforced surgically by Rudolph Nissen in 1948" beside "On
    17 April 1955"): the question may set the moved date against the other one ("by R. Nissen 81 years
    ago on 17 April 1955"), which is nonsense, not a false premise. A date that is the answer is asked
    for, not written, and does not count."""
    skip = {node.strip().casefold(), answer.strip().casefold()}
    others = {
        end.strip()
        for triple in triples
        for end, kind in ((triple.head, triple.head_type), (triple.tail, triple.tail_type))
        if kind == "Date" and end.strip().casefold() not in skip
    }
    return None if not others else f"another date in the fact: {sorted(others)[0]!r}"


def date_of_a_common_event(
    node: str, answer: str, triples: list[Triple], texts: list[str] | tuple[str, ...]
) -> str | None:
    """The answer is who or what did the dated thing, and nothing makes it one of a kind: "Who became an
    American citizen 86 years ago?" and "Who became Foreign Member of the Royal Netherlands Academy ...
    84 years ago?" have other answers in the moved year, so the premise is not known to be false. "Who
    became the first ethnic Chinese person in space ..." is one of a kind (first, last, only, a
    superlative)."""
    key = node.strip().casefold()
    does = [
        t
        for t in triples
        if t.tail.strip().casefold() == key and t.head.strip().casefold() == answer.casefold()
    ]
    if not does or any(_ONE_OF_A_KIND.search(text) for text in texts):
        return None
    return f"{answer!r} is who did it ({does[0].relation!r}): another may have done it in another year"


def years_before(text: str, reference: date) -> tuple[float, float] | None:
    """The least and the most years `text` may lie before `reference` (negative in the future): a month
    or a year alone spans its first to its last day. None if unparseable."""
    parsed = parse_date(text)
    if parsed is None:
        return None
    when, precision = parsed
    if precision == "year":
        last = date(when.year, 12, 31)
    elif precision == "month":
        last = date(when.year, when.month, calendar.monthrange(when.year, when.month)[1])
    else:
        last = when
    return (reference - last).days / 365.25, (reference - when).days / 365.25


def date_margin(high: float) -> int:
    """How many years a false relative date stays from the true one: DATE_MARGIN_YEARS, or a tenth of
    the date's age when that is more (137 years ago never becomes 140)."""
    return max(DATE_MARGIN_YEARS, math.ceil(DATE_MARGIN_SHARE * high))


def wrong_relative_time(text: str, reference: date, rng: random.Random) -> str | None:
    """ "N years ago" with N at least `date_margin` years from every day the date may mean (within six
    more where possible): "2019" on 1 Dec 2021 (1.9 to 2.9 years) gives 6 or more."""
    span = years_before(text, reference)
    if span is None:
        return None
    low, high = span
    margin = date_margin(high)
    top = max(2, math.ceil(high)) + margin + 7
    pool = [n for n in range(1, top) if n <= low - margin or n >= high + margin]
    near = [n for n in pool if low - margin - 6 <= n <= high + margin + 6] or pool
    return _relative(rng.choice(near), "year", "this year") if near else None


# --- dispatch ------------------------------------------------------------------------------------------


def perturb(
    node: str, node_type: str, reference: date, rng: random.Random, texts: list[str] | tuple[str, ...]
) -> NodeChange | Refusal:
    """A false value for the node as it stands in `texts` (its keypoints), or the Refusal that forbids
    one. Only Quantity and Date nodes change (CHANGED_TYPES)."""
    if node_type not in CHANGED_TYPES:
        return Refusal("false_premise_type", f"{node!r}: a {node_type} is never changed")
    where = locate(node, texts)
    if where is None:
        return Refusal("node_not_in_keypoint", f"{node!r} is not written in its keypoints")
    before, after = where
    if node_type == "Quantity":
        rule, replacement = "perturbed_value", perturbed_value(node, rng, before, after)
    else:
        refusal = date_refusal(node, before, after)
        if refusal is not None:
            return refusal
        rule, replacement = "wrong_relative_date", wrong_relative_time(node, reference, rng)
        if replacement is None:
            return Refusal("date_no_clear_value", f"{node!r}: no relative date off by a clear margin")
    if isinstance(replacement, Refusal):
        return replacement
    return NodeChange(
        node=node, node_type=node_type, replacement=replacement, kind="false_premise", rule=rule
    )

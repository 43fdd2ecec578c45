"""Node transforms for question plans: paraphrases that make a question harder, and false premises.

Paraphrases (IRB §3), each kept to the form a careful writer would use: Person -> initials and surname
("Cristiano Ronaldo" -> "C. Ronaldo"), only for a spaCy PERSON with a given name and a surname; Date ->
relative to a reference date, counting completed units ("30 Nov 2024" -> "9 months ago" on 29 Sep
2025; "May 2019" -> "2 years ago" on 1 Dec 2021), one per question; Quantity -> words only for a small
whole number standing alone ("5 children" -> "five children"; never before %, units, decimals, ranges
or times). IRB's flag emoji for countries is not used: countries keep their names.
False premises are made in irb/premises.py. Pure functions.
"""

from __future__ import annotations

import calendar
import os
import re
from collections.abc import Callable, Sequence
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path

from num2words import num2words

from irbgen.irb.records import NodeChange
from irbgen.phantom.vocabulary import DEFAULT_VOCABULARY_DIR, FILES

TRANSFORMED_TYPES = ("Country", "Date", "Person", "Quantity")
DATE_RULES = ("relative_date", "wrong_relative_date")

# --- dates ------------------------------------------------------------------------------------------

_MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): number for number, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[12]\d{3})"
_DATE_FORMS = (
    (re.compile(r"(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})"), "day"),
    (re.compile(r"(?P<year>\d{4})-(?P<month>\d{1,2})"), "month"),
    (re.compile(rf"{_DAY}\s+{_MONTH},?\s+{_YEAR}", re.IGNORECASE), "day"),
    (re.compile(rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}", re.IGNORECASE), "day"),
    (re.compile(rf"{_MONTH},?\s+{_YEAR}", re.IGNORECASE), "month"),
    (re.compile(_YEAR), "year"),
)


def parse_date(text: str) -> tuple[date, str] | None:
    """(date, precision) for a date written alone; precision is "day", "month" or "year"; else None."""
    cleaned = text.strip().rstrip(".").strip()
    for pattern, precision in _DATE_FORMS:
        match = pattern.fullmatch(cleaned)
        if match is None:
            continue
        parts = match.groupdict()
        month = parts.get("month") or "1"
        month_number = int(month) if month.isdigit() else _MONTHS[month.lower()]
        try:
            return date(int(parts["year"]), month_number, int(parts.get("day") or 1)), precision
        except ValueError:
            return None
    return None


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}" + ("" if number == 1 else "s")


def _relative(amount: int, unit: str, now: str) -> str:
    if amount == 0:
        return now
    phrase = _count(abs(amount), unit)
    return f"{phrase} ago" if amount > 0 else f"in {phrase}"


def _completed_months(start: date, end: date) -> int:
    """Whole months from `start` to `end` (start <= end), counted like an age: a month is complete on
    the same day of a later month, so 29 February reaches a year on 1 March of a common year."""
    months = (end.year - start.year) * 12 + end.month - start.month
    return months - 1 if end.day < start.day else months


def _relative_days(when: date, reference: date) -> str:
    """Completed years; under a year completed months; under a month completed weeks, then days."""
    sign = 1 if when <= reference else -1
    start, end = sorted((when, reference))
    months = _completed_months(start, end)
    if months >= 12:
        return _relative(sign * (months // 12), "year", "this year")
    if months >= 1:
        return _relative(sign * months, "month", "this month")
    days = (end - start).days
    if days >= 14:
        return _relative(sign * (days // 7), "week", "today")
    return _relative(sign * days, "day", "today")


def past_relative_time(text: str, reference: date) -> str | None:
    """`relative_time` for a date before the reference only: "in 4 years" misleads in a past-tense text."""
    relative = relative_time(text, reference)
    return relative if relative is not None and relative.endswith("ago") else None


def relative_time(text: str, reference: date) -> str | None:
    """`text` as a time relative to `reference` ("9 months ago", "in 2 years"), or None if unparseable.

    Counts completed units at the date's own precision, as a reader with the reference date would: a
    day counts completed years, under a year completed months, under a month weeks (from 14 days) or
    days ("30 Nov 2024" on 29 Sep 2025: 9 months ago); a month counts calendar months, then whole years
    ("May 2019" on 1 Dec 2021: 31 months, 2 years ago); a year alone counts calendar years ("2019" on
    1 Dec 2021: 2 years ago), the only subtraction its reader can make.
    """
    parsed = parse_date(text)
    if parsed is None:
        return None
    when, precision = parsed
    if precision == "year":
        return _relative(reference.year - when.year, "year", "this year")
    if precision == "month":
        months = (reference.year - when.year) * 12 + reference.month - when.month
        if abs(months) < 12:
            return _relative(months, "month", "this month")
        sign = 1 if months > 0 else -1
        return _relative(sign * (abs(months) // 12), "year", "this year")
    return _relative_days(when, reference)


# --- quantities -------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\d.,])(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?(?!\d)")
_SCALE = re.compile(r"\s+(?:thousand|million|billion|trillion)\b", re.IGNORECASE)
_CURRENCIES = {"£": "pound", "$": "dollar", "€": "euro", "¥": "yen"}


def _number_value(match: re.Match[str]) -> Decimal:
    return Decimal(match.group("int").replace(",", "") + (match.group("frac") or ""))


def number_words(text: str) -> str | None:
    """`text` with its first number in words ("1.5" -> "one point five", "£212 million" -> "two hundred
    and twelve million pounds"); None when it has no number."""
    match = _NUMBER.search(text)
    if match is None:
        return None
    value = _number_value(match)
    words = num2words(value).replace(",", "").replace("-", " ")
    start, end = match.span()
    symbol = text[start - 1] if start > 0 else ""
    if symbol not in _CURRENCIES:
        return text[:start] + words + text[end:]
    scale = _SCALE.match(text, end)
    if scale is not None:
        words += scale.group(0)
        end = scale.end()
    currency = _CURRENCIES[symbol]
    plural = currency != "yen" and not (value == 1 and scale is None)
    return text[: start - 1] + f"{words} {currency}{'s' if plural else ''}" + text[end:]


def _format_like(value: Decimal, match: re.Match[str]) -> str:
    decimals = len(match.group("frac") or "") - (1 if match.group("frac") else 0)
    quantized = value.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)
    return f"{quantized:,.{decimals}f}" if "," in match.group("int") else f"{quantized:.{decimals}f}"


SMALL_NUMBER_MAX = 99  # whole numbers a careful writer spells out
_SMALL_NUMBER = re.compile(
    r"^(?P<hedge>(?:about|around|nearly|almost|some|over|under)\s+)?(?P<num>[1-9]\d?)(?:\s+(?P<noun>[a-z][a-z-]*(?:\s+[a-z][a-z-]*)?))?$"
)
_NOT_COUNTED = frozenset(
    """percent per cent m km cm mm kg g t ft mi mph ha kw mw gw kwh mwh gwh sqmi sq mm acres
    metres meters kilometres kilometers miles feet inches pounds dollars euros degrees points""".split()
)


def small_number_words(text: str) -> str | None:
    """ "5 children" -> "five children": a whole number up to SMALL_NUMBER_MAX standing alone, else None."""
    match = _SMALL_NUMBER.match(text.strip())
    if match is None or int(match.group("num")) > SMALL_NUMBER_MAX:
        return None
    noun = match.group("noun") or ""
    if not noun or noun.split()[0] in _NOT_COUNTED:
        return None  # a bare number may be a rule, a day or a rank ("Rules 2 and 3", "No. 1")
    words = num2words(int(match.group("num"))).replace("-", " ")
    return " ".join(part for part in (match.group("hedge") or "", words, noun) if part).replace("  ", " ")


# --- people -----------------------------------------------------------------------------------------

_HONORIFICS = {"dr", "mr", "mrs", "ms", "miss", "sir", "dame", "lord", "lady", "prof", "professor"}
_SUFFIXES = {"jr", "sr", "ii", "iii", "iv", "phd"}


def _name_parts(name: str) -> tuple[list[str], list[str], list[str], list[str]] | None:
    """(honorifics, given names, surname words, suffixes), or None for a name without a given name."""
    tokens = name.split()
    prefix: list[str] = []
    while tokens and tokens[0].rstrip(".").lower() in _HONORIFICS:
        prefix.append(tokens.pop(0))
    suffix: list[str] = []
    while tokens and tokens[-1].rstrip(".,").lower() in _SUFFIXES:
        suffix.insert(0, tokens.pop())
    if len(tokens) < 2:
        return None
    cut = len(tokens) - 1
    while cut > 1 and tokens[cut - 1][:1].islower():  # particles: "van Beethoven", "de la Cruz"
        cut -= 1
    return prefix, tokens[:cut], tokens[cut:], suffix


def _initial(given: str) -> str:
    return "-".join(part[:1].upper() + "." for part in given.split("-") if part)


def initials_and_surname(name: str) -> str | None:
    """ "Cristiano Ronaldo" -> "C. Ronaldo" (given names to initials); None when nothing would change."""
    parts = _name_parts(name)
    if parts is None:
        return None
    prefix, given, surname, suffix = parts
    short = " ".join(prefix + [_initial(word) for word in given] + surname + suffix)
    return None if short == " ".join(name.split()) else short


_GIVEN_NAME = re.compile(r"[A-Z][a-z]+(?:[-'’][A-Z]?[a-z]+)*")
_NOT_GIVEN_NAMES = frozenset(
    """president prime minister king queen prince princess general colonel captain saint st emperor pope
    chancellor governor senator judge bishop the new north south east west""".split()
)


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """Given names irbgen knows (its own word lists), lower case; empty when the lists are absent."""
    names: set[str] = set()
    for name in (FILES["female_names"], FILES["male_names"]):
        path = DEFAULT_VOCABULARY_DIR / name
        if path.is_file():
            names.update(line.strip().casefold() for line in path.read_text(encoding="utf-8").splitlines())
    return frozenset(name for name in names if name and not name.startswith("#"))


def is_personal_name(name: str) -> bool:
    """At least a given name and a surname, written as names are (no titles, codes or initials only),
    whose first given name irbgen's lists know or is not an English word, and whose last word does not
    name a thing: "Deadly Ground" (a film), "Pamir Mountains" and "Mio Wireless" are not people."""
    parts = _name_parts(name)
    if parts is None:
        return False
    _, given, surname, _ = parts
    words = given + surname
    if not all(_GIVEN_NAME.fullmatch(word) and word.lower() not in _NOT_GIVEN_NAMES for word in words):
        return False
    first = given[0].split("-")[0].casefold()
    last = surname[-1].casefold()
    known_given = first in given_names() or first not in english_words()
    from irbgen.irb.node_types import name_type

    if name_type(name) is not None:
        return False  # "Bakken Formation", "Pamir Mountains": its own words say what it is
    return known_given and (last in surnames_known() or not _thing_word(last))


_THING_WORDS = frozenset(
    """wireless telecom mobile media energy health healthcare motors airways systems networks
    underground leader note ground""".split()
)


def _thing_word(word: str) -> bool:
    """A last word that names a thing, not a family: "Mountains", "Islands", "Wireless", "Underground"."""
    plural = word.endswith("s") and not word.endswith("ss") and word[:-1] in english_words()
    return word in _THING_WORDS or plural


@lru_cache(maxsize=1)
def surnames_known() -> frozenset[str]:
    """Surnames irbgen's own list knows ("Smith", "Baker"), lower case; empty when the list is absent."""
    path = DEFAULT_VOCABULARY_DIR / FILES["surnames"]
    return frozenset(name.casefold() for name in load_surnames(path)) if path.is_file() else frozenset()


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The English words of spaCy's lemmatizer index (WordNet lemmas): "deadly", "galaxy", "note"."""
    from irbgen.spacy_models import DEFAULT_MODEL, load_spacy

    others = ("tok2vec", "tagger", "parser", "attribute_ruler", "ner", "senter")  # only its lookups are read
    table = load_spacy(DEFAULT_MODEL, others).get_pipe("lemmatizer").lookups.get_table("lemma_index")
    return frozenset(word for key in table.keys() for word in table[key])


def load_surnames(path: Path | str | Traversable) -> list[str]:
    """Surnames from a one-per-line file (blank lines and '#' comments skipped), sorted and unique."""
    source = Path(path) if isinstance(path, str | os.PathLike) else path  # else a file irbgen ships
    lines = source.read_text(encoding="utf-8").splitlines()
    return sorted({line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")})


# --- countries --------------------------------------------------------------------------------------

# English names pycountry does not know; ISO 3166 alpha-2 codes (XK is Kosovo's user-assigned code).
_COUNTRY_ALIASES = {
    "britain": "GB",
    "great britain": "GB",
    "uk": "GB",
    "russia": "RU",
    "turkey": "TR",
    "ivory coast": "CI",
    "palestine": "PS",
    "kosovo": "XK",
    "micronesia": "FM",
    "macedonia": "MK",
    "dr congo": "CD",
    "democratic republic of the congo": "CD",
    "republic of the congo": "CG",
    "cape verde": "CV",
    "swaziland": "SZ",
    "burma": "MM",
    "east timor": "TL",
    "vatican city": "VA",
    "vatican": "VA",
    "brunei": "BN",
}


def _strip_the(text: str) -> str:
    return re.sub(r"^the\s+", "", " ".join(text.split()), flags=re.IGNORECASE)


@lru_cache(maxsize=4096)
def country_code(name: str) -> str | None:
    """The ISO 3166 alpha-2 code of a country name ("the Netherlands" -> "NL"), or None."""
    import pycountry

    key = _strip_the(name).strip(" .")
    if len(key) < 2:
        return None
    if key.casefold() in _COUNTRY_ALIASES:
        return _COUNTRY_ALIASES[key.casefold()]
    try:
        return pycountry.countries.lookup(key).alpha_2
    except LookupError:
        return None


def flag_emoji(code: str) -> str:
    """The regional-indicator flag of an alpha-2 code ("FR" -> 🇫🇷)."""
    return "".join(chr(0x1F1E6 + ord(letter) - ord("A")) for letter in code.upper())


def flag_phrase(country: str) -> str | None:
    """ "the country whose flag is <flag>" for a known country, else None."""
    code = country_code(country)
    return None if code is None else f"the country whose flag is {flag_emoji(code)}"


# --- dispatch ---------------------------------------------------------------------------------------

_PARAPHRASES: dict[str, tuple[str, Callable[[str, date], str | None]]] = {
    "Person": ("initials", lambda node, reference: initials_and_surname(node)),
    "Date": ("relative_date", past_relative_time),
    "Quantity": ("number_words", lambda node, reference: small_number_words(node)),
}


def paraphrase(node: str, node_type: str, reference: date, label: str | None = "") -> NodeChange | None:
    """The paraphrase of an unmasked node, or None for other types or when it cannot be rewritten.

    `label` is spaCy's entity label of the node (None when it has none); "" means not known, as in
    callers that check names themselves. Initials need a PERSON with a personal name.
    """
    if node_type not in _PARAPHRASES:
        return None
    if node_type == "Person" and (label not in ("", "PERSON") or not is_personal_name(node)):
        return None
    rule, rewrite = _PARAPHRASES[node_type]
    replacement = rewrite(node, reference)
    if replacement is None or replacement.casefold() == node.casefold():
        return None
    return NodeChange(node=node, node_type=node_type, replacement=replacement, kind="paraphrase", rule=rule)


# --- applying changes -------------------------------------------------------------------------------


def _change_pattern(change: NodeChange) -> str:
    words = _strip_the(change.node).split()
    body = r"\s+".join(re.escape(word) for word in words)
    if change.replacement.lower().startswith("the "):
        body = r"(?:the\s+)?" + body  # "the Netherlands" -> "French Guiana", not "the French Guiana"
    if change.rule in DATE_RULES:  # "opened on 12 March 2024" -> "opened 1 year ago"; not after "since"
        body = body + _NOT_IN_RANGE
        body = rf"{_NOT_AFTER_TIME_WORD}(?:in|on)\s+{body}"  # not "finish 2002 as the oldest": only "in 2002"
        body = _NOT_AFTER_RANGE + body
    if change.rule in ("number_words", "perturbed_value"):  # only where the number stands alone
        body = _NOT_AFTER_VALUE + body + _NOT_BEFORE_VALUE_OF[change.rule]
    return body


_NOT_IN_RANGE = r"(?!\s*[-–]\s*\d)"
_NOT_AFTER_RANGE = r"(?<!\d[-–])(?<!\d\s[-–]\s)"


_TIME_WORDS = (
    "since", "until", "till", "from", "by", "before", "after", "to", "of", "and", "during", "through",
    "between",
)  # fmt: skip
_NOT_AFTER_TIME_WORD = "".join(rf"(?<!\b{word}\s)" for word in _TIME_WORDS) + r"(?<!\d\s)(?<!\d,\s)"
_NOT_AFTER_VALUE = r"(?<![-−–$£€¥.,:/])(?<!\d\s)(?<!\d\sto\s)"
_NOT_BEFORE_VALUE = (
    r"(?!\s*(?:%|[.,:/]\d|[-−–]\s*\d|to\s+\d|(?:percent|per\s+cent|million|billion|thousand)\b))"
    r"(?!\s+(?:" + "|".join(sorted(_NOT_COUNTED)) + r")\b)"
)
_NOT_BEFORE_VALUE_OF = {"number_words": _NOT_BEFORE_VALUE, "perturbed_value": r"(?![.,:/]?\d)"}


def apply_changes(text: str, changes: Sequence[NodeChange]) -> str:
    """`text` with each change's node replaced (whole words, case-insensitive, longest node first, one
    pass so a replacement is never rewritten); a replacement opening `text` is capitalised unless the
    node was written in lower case there."""
    ordered = sorted(
        (change for change in changes if _strip_the(change.node)),
        key=lambda change: (-len(_strip_the(change.node)), change.node),
    )
    if not ordered:
        return text
    alternatives = [f"(?P<c{index}>{_change_pattern(change)})" for index, change in enumerate(ordered)]
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)

    def replace(match: re.Match[str]) -> str:
        change = ordered[int(match.lastgroup[1:])]
        replacement = change.replacement
        if match.start() == 0 and not match.group(0)[:1].islower():
            replacement = replacement[:1].upper() + replacement[1:]
        return replacement

    return pattern.sub(replace, text)

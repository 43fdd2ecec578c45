"""How a quantity's unit reads after its amount ("3 square kilometres")."""

from __future__ import annotations

from typing import Protocol

from irbgen.wikidata.vocabulary import load_units


class Labels(Protocol):
    """What linearisation needs from a knowledge base: an id's label."""

    def label(self, entity_id: str) -> str: ...


def label_or_none(labels: Labels, entity_id: str) -> str | None:
    """The id's label, or None when the base knows none (`Labels.label` gives the id back)."""
    label = labels.label(entity_id)
    return None if label == entity_id else label


def unit_name(labels: Labels, unit: str, amount: str) -> str:
    """How a unit reads after its amount: irbgen's table ("square kilometres"), else the unit item's
    label when the base has it, else ""."""
    known = load_units().get(unit)
    if known is not None:
        return known.singular if amount.lstrip("+") == "1" else known.plural
    return label_or_none(labels, unit) or ""

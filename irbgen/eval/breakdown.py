"""Per-query values grouped by sample attributes, the way every irbgen evaluation reports them.

An evaluation writes one row per query: its id, the attribute values it is sliced by, and a value per
measure. `aggregate` turns rows into the overall mean and the mean per attribute value. Attribute values
are text (`attribute_text`) and sort in `value_order`, here and in every table and chart of them.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

from irbgen.schema import Sample

# Attribute name -> how to read it from a Sample. Values are strings so they group and sort alike.
BREAKDOWN_KEYS = (
    "hops",
    "difficulty",
    "question_type",
    "language",
    "freshness",
    "topic",
    "false_premise",
    "source",
    "aggregation",
)


def sample_attributes(sample: Sample) -> dict[str, str]:
    """The attribute values a sample is sliced by; missing values are left out."""
    attributes = sample.attributes
    values: dict[str, Any] = {
        "hops": sample.hops,
        "difficulty": sample.difficulty,
        "question_type": attributes.question_type,
        "language": attributes.language,
        "freshness": attributes.freshness,
        "topic": attributes.topic,
        "false_premise": sample.false_premise,
        "source": sample.source,
        "aggregation": attributes.aggregation,
    }
    return {key: attribute_text(value) for key, value in values.items() if value is not None}


def attribute_text(value: Any) -> str:
    """An attribute value as text: true / false, 3 for 3.0, anything else as str() writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def value_order(value: str) -> tuple[int, float, str]:
    """Sort key for attribute values: numbers in numeric order first, then text in text order."""
    try:
        number = float(value)
    except ValueError:
        return (1, 0.0, value)
    if math.isnan(number):
        return (1, 0.0, value)
    return (0, number, value)


def ordered(values: Iterable[str]) -> list[str]:
    """Distinct values in value_order."""
    return sorted(set(values), key=value_order)


def aggregate(
    rows: Iterable[dict[str, Any]], measures: list[str], optional: Collection[str] = ()
) -> dict[str, Any]:
    """Mean of each measure overall and per attribute value.

    Each row is {"query_id", "attributes": {name: value}, "metrics": {measure: float}}. A measure missing
    from a row counts as 0, so every query in the benchmark weighs the same, except an `optional` one
    (the judge): a row without it is left out of its mean, which is None over no rows; "counts" (and
    "<measure>_count" in each attribute cell) says how many rows that mean is over.
    """
    totals = dict.fromkeys(measures, 0.0)
    counts = dict.fromkeys(measures, 0)
    count = 0
    groups: dict[str, dict[str, dict[str, float]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(float))
    )
    for row in rows:
        count += 1
        metrics = row.get("metrics", {})
        attributes = row.get("attributes", {})
        for measure in measures:
            if metrics.get(measure) is None and measure in optional:
                continue
            value = float(metrics.get(measure) or 0.0)
            totals[measure] += value
            counts[measure] += 1
            for name, attribute in attributes.items():
                groups[name][attribute][measure] += value
                groups[name][attribute][f"{measure}_count"] += 1
        for name, attribute in attributes.items():
            groups[name][attribute]["count"] += 1
    overall = {
        measure: _mean(totals[measure], counts[measure]) if measure in optional
        else totals[measure] / (count or 1)
        for measure in measures
    }
    by: dict[str, dict[str, dict[str, float | None]]] = {}
    for name in sorted(groups):
        by[name] = {}
        for attribute in sorted(groups[name], key=value_order):
            sums = groups[name][attribute]
            cell: dict[str, float | None] = {}
            for measure in measures:
                n = int(sums[f"{measure}_count"])
                cell[measure] = _mean(sums[measure], n)
                if measure in optional:
                    cell[f"{measure}_count"] = n
            by[name][attribute] = cell | {"count": int(sums["count"])}
    summary: dict[str, Any] = {"queries": count, "overall": overall, "by": by}
    if optional:
        summary["counts"] = {measure: counts[measure] for measure in measures if measure in optional}
    return summary


def _mean(total: float, n: int) -> float | None:
    return total / n if n else None

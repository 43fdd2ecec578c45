"""Hop ablation: does a multi-hop question need the evidence of every one of its hops?

`eval qa --method hop-ablation` shows the reader a sample's evidence documents (every hop's, in the
sample's order) and scores that answer as usual. Then, for a multi-hop sample, it asks once per hop with
that hop's evidence documents left out (a document that is also another hop's evidence is left out too)
and scores each of those answers the same way. An ablation "still answers" when its answer-set F1
reaches the threshold (the closed-book probe's rule). A multi-hop sample needs every hop when no
ablation still answers.

Not ablated (needs_every_hop None, kept by `irbgen filter`): single-hop samples, whose only ablation
would leave no documents, the closed-book probe's question; false-premise samples, which have no answer
to lose; and samples where no hop has evidence. A hop without evidence documents has nothing to leave
out and gets no call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from irbgen.schema import Sample

METHOD = "hop-ablation"
NOT_ABLATED = (
    "single-hop, false-premise and evidence-less samples are not ablated (needs_every_hop null): a "
    "single-hop ablation would show no documents, which is the closed-book probe"
)


def evidence_ids(sample: Sample) -> list[str]:
    """Every evidence document of a sample: its evidence list, then any hop's document missing from it."""
    ids = list(sample.evidence)
    for hop in sample.chain:
        ids += [doc for doc in hop.evidence if doc not in ids]
    return ids


def ablations(sample: Sample) -> list[tuple[int, list[str], list[str]]]:
    """(hop index, documents left out, documents shown) per hop to ablate; none unless multi-hop."""
    if sample.false_premise or sample.hops < 2 or len(sample.chain) < 2:
        return []
    shown = evidence_ids(sample)
    result = []
    for hop in sample.chain:
        if hop.evidence:
            left_out = set(hop.evidence)
            result.append((hop.index, sorted(left_out), [doc for doc in shown if doc not in left_out]))
    return result


def needs_every_hop(row: dict[str, Any], rule: dict[str, Any]) -> bool | None:
    """Whether no ablation in a prediction row still answers under RULE ({"by", "threshold"}).

    None when the sample was not ablated, or when the row or one of its ablations failed."""
    tries = row.get("ablations") or []
    if row.get("error") is not None or not tries:
        return None
    scores = [(entry.get("metrics") or {}).get(rule["by"]) for entry in tries]
    if any(score is None for score in scores):
        return None
    return not any(score >= rule["threshold"] for score in scores)


def answered_with_all(row: dict[str, Any], rule: dict[str, Any]) -> bool | None:
    """Whether the answer given every hop's evidence meets RULE; None for a failed call."""
    score = (row.get("metrics") or {}).get(rule["by"]) if row.get("error") is None else None
    return None if score is None else bool(score >= rule["threshold"])


def hop_ablation_summary(
    marks: Iterable[tuple[int, bool | None, bool | None]], rule: dict[str, Any]
) -> dict[str, Any]:
    """The share of ablated samples that need every hop, overall and per hop count.

    `marks` holds (hop count, needs_every_hop, answered with all the evidence) per evaluated sample. A
    sample the model gets wrong even with all its evidence fails every ablation too, so beside the share
    each cell counts the ablated samples `answered` with all the evidence, and of those the ones that
    need every hop (`answered_need_every_hop`)."""
    keys = ("samples", "ablated", "needs_every_hop", "answered", "answered_need_every_hop")
    by_hops: dict[str, dict[str, Any]] = {}
    for hops, mark, answered in sorted(marks, key=lambda entry: entry[0]):
        cell = by_hops.setdefault(str(hops), dict.fromkeys(keys, 0))
        cell["samples"] += 1
        if mark is not None:
            cell["ablated"] += 1
            cell["needs_every_hop"] += mark
            cell["answered"] += bool(answered)
            cell["answered_need_every_hop"] += bool(answered) and mark
    cells = list(by_hops.values())
    overall = {key: sum(cell[key] for cell in cells) for key in keys}
    for cell in [*cells, overall]:
        cell["share"] = cell["needs_every_hop"] / cell["ablated"] if cell["ablated"] else None
    return {**rule, "overall": overall, "by_hops": by_hops, "note": NOT_ABLATED}


def share_text(summary: dict[str, Any]) -> str:
    """The share per hop count in words, "2-hop 6 of 10 (0.600), ...", leaving out counts never ablated."""
    parts = [
        f"{hops}-hop {cell['needs_every_hop']:,} of {cell['ablated']:,} ({cell['share']:.3f})"
        for hops, cell in summary["by_hops"].items()
        if cell["ablated"]
    ]
    return ", ".join(parts) or "no sample ablated"

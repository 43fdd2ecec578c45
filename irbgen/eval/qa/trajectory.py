"""What a retrieving QA method found: measures over the documents its trajectory retrieved.

A trajectory is the list of steps a method took, each with the documents it was shown, in order: the
ReAct agent's tool calls (a step that showed nothing still counts as a step), or, for rag and cot-rag,
one step holding the retrieved list. Its ranked union is every document in the order first shown.
Pure functions; run.py writes the values per question into predictions.jsonl and their means into
metrics.json. With R the sample's qrels, U the ranked union and H_i hop i's evidence:

- evidence_recall: |U ∩ R| / |R|, the share of the qrels retrieved by any step;
- retrieved_precision: |U ∩ R| / |U| (0 when nothing was retrieved);
- trajectory_nDCG: trec_eval's nDCG (no cut-off) of U ranked in first-shown order against R;
- per hop i with evidence: recall |U ∩ H_i| / |H_i|, and first_step, the 1-based step at which a
  document of H_i was first shown (None if none ever was).

Samples without qrels are not scored; hops without evidence are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from irbgen.eval.metrics import per_query
from irbgen.schema import Sample

TRAJECTORY_MEASURES = ("evidence_recall", "retrieved_precision", "trajectory_nDCG")
FIELD = "trajectory_retrieval"  # the key of the per-question values in a predictions.jsonl row


def steps_of(row: Mapping[str, Any]) -> list[list[str]]:
    """The documents each step showed: a ReAct row's trajectory, else its retrieved list as one step."""
    trajectory = row.get("trajectory")
    if isinstance(trajectory, list):
        return [list(step.get("documents") or []) for step in trajectory if isinstance(step, dict)]
    retrieved = row.get("retrieved") or []
    return [list(retrieved)] if retrieved else []


def ranked_union(steps: Iterable[Sequence[str]]) -> list[str]:
    """Every document shown, in the order first shown."""
    seen: dict[str, None] = {}
    for step in steps:
        for doc_id in step:
            seen.setdefault(doc_id)
    return list(seen)


def trajectory_retrieval(
    steps: Sequence[Sequence[str]], relevant: Iterable[str], hops: Iterable[tuple[int, Sequence[str]]]
) -> dict[str, Any]:
    """Evidence recall, precision, and per-hop recall and first step, of one trajectory.

    `hops` holds (hop index, the hop's evidence); hops without evidence are skipped.
    """
    relevant = set(relevant)
    union = ranked_union(steps)
    found = relevant.intersection(union)
    first: dict[str, int] = {}
    for number, step in enumerate(steps, 1):
        for doc_id in step:
            first.setdefault(doc_id, number)
    per_hop: dict[str, dict[str, Any]] = {}
    for index, evidence in hops:
        evidence = set(evidence)
        if not evidence:
            continue
        shown = [first[doc] for doc in evidence if doc in first]
        per_hop[str(index)] = {
            "recall": len(shown) / len(evidence),
            "first_step": min(shown) if shown else None,
        }
    return {
        "evidence_recall": len(found) / len(relevant) if relevant else None,
        "retrieved_precision": len(found) / len(union) if union else 0.0,
        "steps": len(steps),
        "hops": per_hop,
    }


def trajectory_ndcg(
    qrels: Mapping[str, Mapping[str, int]], unions: Mapping[str, list[str]]
) -> dict[str, float]:
    """trec_eval nDCG (no cut-off) of each query's ranked union; queries without qrels left out."""
    judged = {qid: qrels[qid] for qid in unions if qrels.get(qid)}
    run = {
        qid: {doc_id: float(len(docs) - i) for i, doc_id in enumerate(docs)}
        for qid, docs in unions.items()
        if qid in judged and docs
    }
    if not judged:
        return {}
    return {qid: values["nDCG"] for qid, values in per_query(judged, run, ["nDCG"]).items()}


def score_trajectories(
    qrels: Mapping[str, Mapping[str, int]], done: Iterable[tuple[Sample, Mapping[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """{sample id: the FIELD value} for every sample with qrels: measures and per-hop detail."""
    values: dict[str, dict[str, Any]] = {}
    unions: dict[str, list[str]] = {}
    for sample, row in done:
        relevant = [doc for doc, score in qrels.get(sample.id, {}).items() if score > 0]
        if not relevant:
            continue
        steps = steps_of(row)
        hops = [(hop.index, hop.evidence) for hop in sample.chain]
        values[sample.id] = trajectory_retrieval(steps, relevant, hops)
        unions[sample.id] = ranked_union(steps)
    for qid, ndcg in trajectory_ndcg(qrels, unions).items():
        values[qid]["trajectory_nDCG"] = ndcg
    return values


def hop_summary(values: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, float | int | None]]:
    """Per hop index: mean evidence recall, the share of hops found at all, the mean first step (over
    the hops found) and how many hops these are over."""
    cells: dict[str, list[dict[str, Any]]] = {}
    for value in values:
        for index, hop in (value.get("hops") or {}).items():
            cells.setdefault(index, []).append(hop)
    summary: dict[str, dict[str, float | int | None]] = {}
    for index in sorted(cells, key=int):
        hops = cells[index]
        steps = [hop["first_step"] for hop in hops if hop.get("first_step") is not None]
        summary[index] = {
            "evidence_recall": math.fsum(hop["recall"] for hop in hops) / len(hops),
            "found": len(steps) / len(hops),
            "first_step": math.fsum(steps) / len(steps) if steps else None,
            "count": len(hops),
        }
    return summary

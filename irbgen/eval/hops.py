"""Per-hop retrieval: each hop's sub-question ranked against that hop's own evidence.

A benchmark's queries_hops.jsonl has one query per hop (`QID#h0`, `QID#h1`, ...) and qrels/hops.tsv that
hop's evidence. `eval retrieval --per-hop` ranks the corpus for every hop query and scores it with the
same trec_eval measures as the whole questions (per_hop.jsonl, one row per hop), then reports:

- the mean of each measure over the judged hop queries, overall, per hop index and per hop count;
- evidence chain recall@k: the share of samples, among those with at least one hop that has evidence,
  for which every document of every hop's evidence is in the top k of that hop's sub-question (hops
  without evidence are skipped: there is nothing to find). A sample scores 1 or 0; the mean is given
  overall and per hop count.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from irbgen.eval.breakdown import aggregate

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def chain_recall_name(k: int) -> str:
    """The measure's name in per_hop.jsonl and metrics.json."""
    return f"evidence_chain_recall@{k}"


def top_k(docs: Mapping[str, float], k: int) -> list[str]:
    """A query's first k documents in trec_eval's order: score descending, then id descending."""
    return [doc for doc, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]]


def hop_found(relevant: Iterable[str], docs: Mapping[str, float], k: int) -> bool:
    """Whether every relevant document (score > 0) of a hop is in its query's top k."""
    top = set(top_k(docs, k))
    return all(doc in top for doc in relevant)


def hop_rows(
    hop_queries: Iterable[dict[str, Any]],
    qrels: Qrels,
    run: Run,
    values: Mapping[str, Mapping[str, float]],
    k: int,
) -> list[dict[str, Any]]:
    """One per_hop.jsonl row per hop query: ids, hop index and count, judged, values, all found in top k."""
    rows = []
    for query in hop_queries:
        hop_id, meta = query["_id"], query["metadata"]
        relevant = [doc for doc, score in qrels.get(hop_id, {}).items() if score > 0]
        judged = bool(relevant)
        rows.append({
            "query_id": hop_id,
            "sample_id": meta["sample_id"],
            "hop": meta["hop"],
            "hops": meta["hops"],
            "judged": judged,
            "metrics": dict(values.get(hop_id, {})) if judged else {},
            "found_at_k": hop_found(relevant, run.get(hop_id, {}), k) if judged else None,
        })
    return rows


def chain_recall(rows: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{sample id: {"hops": n, "found": 0/1}} over samples with at least one judged hop.

    A sample is found when every judged hop of it has all its evidence in the top k (`found_at_k`).
    """
    samples: dict[str, dict[str, Any]] = {}
    for row in rows:
        if not row["judged"]:
            continue
        entry = samples.setdefault(row["sample_id"], {"hops": row["hops"], "found": 1})
        if not row["found_at_k"]:
            entry["found"] = 0
    return samples


def summarise(rows: list[dict[str, Any]], measures: list[str], k: int) -> dict[str, Any]:
    """metrics.json's `per_hop` section: means overall, per hop index and per hop count, and chain recall."""
    judged = [row for row in rows if row["judged"]]
    by_hop = aggregate(
        [{"attributes": {"hop": str(row["hop"]), "hops": str(row["hops"])}, "metrics": row["metrics"]}
         for row in judged],
        measures,
    )
    name = chain_recall_name(k)
    chains = chain_recall(rows)
    chain = aggregate(
        [{"attributes": {"hops": str(entry["hops"])}, "metrics": {name: float(entry["found"])}}
         for entry in chains.values()],
        [name],
    )
    return {
        "queries": by_hop["queries"],
        "unjudged_queries": len(rows) - len(judged),
        "overall": by_hop["overall"],
        "by_hop": by_hop["by"].get("hop", {}),
        "by_hops": by_hop["by"].get("hops", {}),
        "evidence_chain_recall": {
            "k": k,
            "samples": chain["queries"],
            "overall": chain["overall"][name],
            "by_hops": {hops: cell[name] for hops, cell in chain["by"].get("hops", {}).items()},
            "counts_by_hops": {hops: cell["count"] for hops, cell in chain["by"].get("hops", {}).items()},
        },
    }

"""Hard negatives: for each query, the best-ranked documents that its qrels do not mark relevant.

Mined with the same retriever and chunking as the evaluation, in a search of its own, so asking for
negatives never changes the evaluated run. A document judged with score 0 counts as a negative.
Written as negatives.jsonl, one line per query in queries order:
{"query_id": ..., "negatives": [{"doc_id": ..., "score": ...}, ...]} (best first).
"""

from __future__ import annotations

from typing import Any

from irbgen.errors import BadInputError

NEGATIVES = "negatives.jsonl"


def check_negatives(count: int) -> None:
    """Raise BadInputError unless count is a non-negative integer."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise BadInputError(f"--negatives must be a non-negative integer, got {count!r}")


def mine_negatives(
    engine: Any, queries: dict[str, str], qrels: dict[str, dict[str, int]], count: int
) -> dict[str, list[tuple[str, float]]]:
    """The `count` best-ranked non-relevant documents of each query, as (doc id, score), best first."""
    check_negatives(count)
    if count == 0 or not queries:
        return {query_id: [] for query_id in queries}
    most_relevant = max((sum(s > 0 for s in judged.values()) for judged in qrels.values()), default=0)
    rankings = engine.search(queries, count + most_relevant)
    mined: dict[str, list[tuple[str, float]]] = {}
    for query_id in queries:
        relevant = {doc for doc, score in qrels.get(query_id, {}).items() if score > 0}
        mined[query_id] = [(doc, score) for doc, score in rankings[query_id] if doc not in relevant][:count]
    return mined


def negative_rows(mined: dict[str, list[tuple[str, float]]]) -> list[dict[str, Any]]:
    """negatives.jsonl rows, in the order of `mined` (queries order)."""
    return [
        {"query_id": query_id, "negatives": [{"doc_id": doc, "score": float(score)} for doc, score in docs]}
        for query_id, docs in mined.items()
    ]

"""A PlanHop for tests: one keypoint and one triple, or the triples given."""

from __future__ import annotations

from collections.abc import Sequence

from irbgen.irb.records import PlanHop, Triple


def plan_hop(
    fact_id: str,
    text: str,
    answer: str,
    answer_type: str,
    *,
    triples: Sequence[Triple] | None = None,
    documents: Sequence[str] = ("d",),
    **fields: object,
) -> PlanHop:
    """A hop of fact `fact_id` whose keypoint is `text`, asking for `answer`; without `triples`, one
    triple (answer, "r", "x"). Other PlanHop fields (`bridge`, `answer_noun`, ...) pass through."""
    rows = triples or [Triple(head=answer, head_type=answer_type, relation="r", tail="x", tail_type="Other")]
    return PlanHop(
        fact_id=fact_id,
        keypoints=[text],
        triples=list(rows),
        answer=answer,
        answer_type=answer_type,
        documents=list(documents),
        **fields,
    )

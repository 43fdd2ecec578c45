"""The IRB stages that need every record at once, each over one `Batch`: node types, plans, samples.

Each wraps a pure function of its batch, so it is checkpointed and resumed like any other stage, and its
rejects and counts are recorded by the runner.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pydantic import BaseModel

from irbgen.irb.node_types import retype_graphs
from irbgen.irb.plans import make_plans
from irbgen.irb.records import KnowledgeGraph, QuestionPlan
from irbgen.irb.samples import make_sample
from irbgen.pipeline.stage import Batch, StageContext
from irbgen.records import Reject
from irbgen.schema import PromptRef, Sample


class TypeNodes:
    """Batch(graphs, facts) -> the graphs with node types corrected from what the pages are about."""

    name = "node_types"
    input_model = Batch
    output_model = KnowledgeGraph

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> list[KnowledgeGraph]:
        """Every graph, retyped (model-made graphs unchanged)."""
        return retype_graphs(record.parts["graphs"], record.parts["facts"])


class PlanQuestions:
    """Batch(facts, graphs, documents, reference_date) -> question plans, or rejects with their reason.

    `documents` (document id -> main text, or None to keep shortcuts) lets multi-hop plans whose answer
    is already in a first-hop document be dropped.
    """

    name = "plans"
    input_model = Batch
    output_model = QuestionPlan

    def __init__(
        self,
        *,
        max_hops: int,
        false_premise_share: float,
        seed: int,
        answers_per_fact: int,
    ) -> None:
        self.max_hops = max_hops
        self.false_premise_share = false_premise_share
        self.seed = seed
        self.answers_per_fact = answers_per_fact

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> Iterator[BaseModel]:
        """The plans, then the rejects."""
        plans, rejects = make_plans(
            record.parts["facts"],
            record.parts["graphs"],
            max_hops=self.max_hops,
            false_premise_share=self.false_premise_share,
            reference_date=record.parts["reference_date"],
            seed=self.seed,
            documents=record.parts["documents"],
            answers_per_fact=self.answers_per_fact,
        )
        yield from rejects
        yield from plans


class MakeSamples:
    """Batch(plans, questions, facts, documents, graphs, reference_date) -> one benchmark sample per plan
    with a question."""

    name = "samples"
    input_model = Batch
    output_model = Sample

    def __init__(self, *, seed: int, part1_prompts: Iterable[PromptRef] = ()) -> None:
        self.seed = seed
        self.part1_prompts = list(part1_prompts)

    def key(self, record: Batch) -> str:
        """The batch's name."""
        return record.key

    def process(self, record: Batch, context: StageContext) -> Iterator[Sample | Reject]:
        """Samples in plan order; a question asked before with the same answers is a duplicate_question
        reject (a page may say one thing twice)."""
        parts = record.parts
        written = {question.plan_id: question for question in parts["questions"]}
        asked: dict[tuple[str, tuple[str, ...]], str] = {}
        for plan in parts["plans"]:
            if plan.id not in written:
                continue
            sample = make_sample(
                plan,
                written[plan.id],
                parts["facts"],
                parts["documents"],
                parts["graphs"],
                as_of=parts["reference_date"],
                seed=self.seed,
                part1_prompts=self.part1_prompts,
            )
            first = asked.setdefault((sample.question, tuple(sample.answers)), plan.id)
            if first != plan.id:
                detail = f"the question and answers of {first}: {sample.question}"
                yield Reject(stage=self.name, reason="duplicate_question", key=plan.id, detail=detail)
                continue
            yield sample

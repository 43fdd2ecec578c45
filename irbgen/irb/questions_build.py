"""`irbgen build --source wikipedia-dump`, part 2: grounded facts in, a benchmark directory out.

    facts -> knowledge graphs -> question plans (masking, multi-hop, transforms) -> questions -> samples

The graph and question stages go through the stage runner (checkpointed, resumable, rejects kept);
planning is a pure function of all graphs, recomputed each run, so its rejects are replaced whole.
The benchmark goes to RUN/benchmark in the shared format; its corpus is every page fetched for the
processed articles, not only those behind a question.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irbgen import __version__
from irbgen.benchmark import write_benchmark
from irbgen.errors import BadInputError
from irbgen.irb.graph import BuildGraphs
from irbgen.irb.node_types import retype_graphs
from irbgen.irb.plans import make_plans
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import Fact, GeneratedQuestion
from irbgen.irb.samples import corpus_documents, make_sample
from irbgen.irb.transforms import load_surnames
from irbgen.phantom.vocabulary import DEFAULT_VOCABULARY_DIR
from irbgen.pipeline.checkpoint import replace_stage_rejects
from irbgen.pipeline.runner import StageResult, run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.schema import Manifest, PromptRef, Sample
from irbgen.web.records import WebDocument

BENCHMARK = "benchmark"
KINDS = ("single_hop", "multi_hop", "false_premise")
SURNAMES = DEFAULT_VOCABULARY_DIR / "surnames.txt"
COMMAND = "irbgen build --source wikipedia-dump"
DESCRIPTION = (
    "Questions written from Wikipedia sentences that cite web pages (IRB-style): each fact was checked "
    "against the pages it cites, turned into a knowledge graph, masked, paraphrased or perturbed, and "
    "asked step by step. Qrels are the cited pages that support the facts behind each question."
)
LICENCE = (
    "Questions derive from Wikipedia text (CC BY-SA 4.0); corpus documents are excerpts of third-party "
    "web pages kept for research evaluation, under their own terms."
)


def default_reference_date(facts: Iterable[Fact], documents: Iterable[WebDocument]) -> dt.date:
    """The newest page revision date among the facts, else the newest evidence date (reproducible)."""
    revised = [fact.revised[:10] for fact in facts if fact.revised]
    published = [document.published[:10] for document in documents if document.published]
    newest = max(revised or published or [""])
    if not newest:
        raise BadInputError(
            "no page revision or evidence date to take as the reference date: pass --reference-date"
        )
    return parse_reference_date(newest)


def parse_reference_date(text: str) -> dt.date:
    """A YYYY-MM-DD date, or BadInputError."""
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        raise BadInputError(f"--reference-date {text!r}: expected YYYY-MM-DD") from None


@dataclass
class QuestionsOutcome:
    """What part 2 produced: stage results, plan rejects, the samples, and the reference date used."""

    results: dict[str, StageResult]
    plans: int
    plan_rejects: list[Reject]
    samples: list[Sample]
    reference_date: dt.date

    def counts(self) -> dict[str, int]:
        """Plans, graphs, questions and samples per kind."""
        kinds = Counter(sample.attributes.question_type for sample in self.samples)
        return {
            "knowledge_graphs": self.results["knowledge_graph"].totals.outputs,
            "plans": self.plans,
            "questions": self.results["questions"].totals.outputs,
            **{f"samples_{kind}": kinds.get(kind, 0) for kind in KINDS},
        }


def build_questions(
    config: Any,
    run_dir: Path,
    facts: list[Fact],
    documents: list[WebDocument],
    *,
    llm: Any = None,
    progress: Any = None,
    part1_prompts: Iterable[PromptRef] = (),
) -> QuestionsOutcome:
    """Run (or resume) part 2 in RUN_DIR over the facts; `documents` are every fetched page."""
    backend = "rules" if llm is None else "llm"
    options = {"concurrency": config.llm_concurrency, "progress": progress}
    results: dict[str, StageResult] = {}
    context = StageContext(run_dir=run_dir, llm=llm)

    results["knowledge_graph"] = run_stage(
        BuildGraphs(backend=backend, min_coverage=config.kg_coverage), facts, context, **options
    )
    by_id = {fact.id: fact for fact in facts}
    made = list(results["knowledge_graph"].outputs())
    graphs = {graph.fact_id: graph for graph in retype_graphs(made, facts)}

    if config.reference_date:
        reference = parse_reference_date(config.reference_date)
    elif graphs:
        reference = default_reference_date(facts, documents)
    else:  # nothing to plan: the date is never used
        reference = dt.date(1970, 1, 1)
    planned = [by_id[fact_id] for fact_id in graphs if fact_id in by_id]
    plans, plan_rejects = make_plans(
        planned,
        [graphs[fact.id] for fact in planned],
        max_hops=config.max_hops,
        false_premise_share=config.false_premise_share,
        reference_date=reference,
        seed=config.seed,
        surnames=load_surnames(SURNAMES),
        documents=None if config.keep_shortcuts else {document.id: document.text for document in documents},
        answers_per_fact=config.answers_per_fact,
    )
    replace_stage_rejects(run_dir, "plans", plan_rejects)

    results["questions"] = run_stage(
        WriteQuestions(backend=backend, graphs=list(graphs.values())), plans, context, **options
    )
    written: dict[str, GeneratedQuestion] = {q.plan_id: q for q in results["questions"].outputs()}

    by_doc = {document.id: document for document in documents}
    samples = [
        make_sample(
            plan, written[plan.id], by_id, by_doc, graphs, seed=config.seed, part1_prompts=part1_prompts
        )
        for plan in plans
        if plan.id in written
    ]
    return QuestionsOutcome(results, len(plans), plan_rejects, samples, reference)


def write_irb_benchmark(
    out: Path,
    samples: list[Sample],
    documents: list[WebDocument],
    *,
    config: dict[str, Any],
    seed: int,
    counts: dict[str, int],
    rejects: dict[str, int],
    llm_usage: dict[str, Any],
) -> Any:
    """Write RUN/benchmark (replacing an earlier one): corpus, queries, qrels, samples, manifest, card."""
    manifest = Manifest(
        tool_version=__version__,
        source="wikipedia",
        name=out.parent.name or "irb",
        command=COMMAND,
        config=json.loads(json.dumps(config, default=str)),
        seed=seed,
        counts=counts,
        rejects=rejects,
        llm_usage=llm_usage,
    )
    ordered = sorted(documents, key=lambda document: document.id)
    return write_benchmark(
        out,
        corpus_documents(ordered),
        samples,
        manifest,
        force=True,
        description=DESCRIPTION,
        licence=LICENCE,
    )

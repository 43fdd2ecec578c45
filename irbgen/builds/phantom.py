"""`irbgen phantom`: a fictional world in, a benchmark with exact answers out.

    world -> questions (one stage, one item per grammar template, each answer solved exactly) -> articles

The world is made first (seeded numpy); the questions step runs through the same stage runner as the
real-corpus builds, with its checkpoint in a scratch folder, since a phantom build takes seconds and has
no run directory to resume. The build returns the same BuildOutput (documents, samples, run manifest,
card) that the one writer turns into a benchmark directory; the articles are either written in parts by
forked processes while the questions are asked (the command line's way) or rendered as the writer reads.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irbgen.benchmark import WrittenCorpus
from irbgen.builds.output import BuildOutput, Card, run_manifest
from irbgen.commandline import reproducing_command
from irbgen.errors import BadInputError
from irbgen.phantom.articles import DocumentIds, articles
from irbgen.phantom.config import PhantomConfig
from irbgen.phantom.corpus import CorpusWriters, can_fork
from irbgen.phantom.grammar import Template, templates
from irbgen.phantom.questions import AttributeTable, Sampler, solve, to_sample
from irbgen.phantom.relations import ATTRIBUTES, EASY_RELATIONS, RELATIONS, RelationIndex
from irbgen.phantom.universe import Universe, generate_universe
from irbgen.phantom.vocabulary import Vocabulary
from irbgen.pipeline.stage import StageContext
from irbgen.pipeline.steps import Step, run_steps
from irbgen.progress import Progress, silent
from irbgen.records import Record
from irbgen.schema import Document, Sample


@dataclass
class PhantomBuild(BuildOutput):
    """A phantom build's output, with the world it describes and the seconds each step took."""

    universe: Universe | None = None
    timings: dict[str, float] = field(default_factory=dict)


def command_line(config: PhantomConfig) -> str:
    """The command that reproduces `config`, writing to OUT (so the manifest does not depend on the path)."""
    return reproducing_command("phantom", config.model_dump()) or ""


def _people_named(universe: Universe) -> dict[str, np.ndarray]:
    """Names carried by more than one person, with everyone carrying them."""
    seen: dict[str, list[int]] = {}
    for person, name in enumerate(universe.names):
        seen.setdefault(name, []).append(person)
    return {name: np.array(people, dtype=np.int32) for name, people in seen.items() if len(people) > 1}


def _template_rng(seed: int, template_id: int) -> random.Random:
    state = np.random.SeedSequence([seed, 1, template_id]).generate_state(2)
    return random.Random(int(state[0]) << 32 | int(state[1]))


def max_depth() -> int:
    """The deepest grammar this interpreter can expand: about three frames per level of recursion."""
    return (sys.getrecursionlimit() - 100) // 3


def template_capacity(template: Template, people: int, relations: int) -> int:
    """An upper bound on a template's distinct questions in a world of PEOPLE people.

    Each question is a start (a name, or an attribute value held by someone), one relation per step,
    and a final attribute or counted relation; distinct texts cannot outnumber those choices.
    """
    starts = people if template.start == "name" else people * len(ATTRIBUTES)
    final = {"what": len(ATTRIBUTES), "how_many": relations}.get(template.form, 1)
    return starts * relations**template.relations * final


def check_request(config: PhantomConfig) -> None:
    """Refuse by arithmetic what no world could give, before any work: too deep, too many questions."""
    if config.depth > max_depth():
        raise BadInputError(
            f"--depth {config.depth}: at most {max_depth()} (the grammar is expanded recursively; "
            "depth 20 already gives 50 templates)"
        )
    if not templates(config.depth):
        shallowest = next(depth for depth in range(1, 100) if templates(depth))
        raise BadInputError(
            f"--depth {config.depth}: the grammar gives no question templates below depth {shallowest} "
            f"({len(templates(shallowest))} at depth {shallowest}), so no question could be written"
        )
    bank = len(EASY_RELATIONS if config.easy_mode else RELATIONS)
    for template in templates(config.depth):
        capacity = template_capacity(template, config.n, bank)
        if capacity < config.questions_per_template:
            raise BadInputError(
                f"--questions-per-template {config.questions_per_template}: template {template.id} "
                f"({template.text!r}) has at most {capacity:,} distinct questions in a world of "
                f"{config.n:,} people; ask for fewer or raise --n"
            )


class TemplateJob(Record):
    """One question template to ask about the world: the unit the question stage checkpoints."""

    template: int  # the template's id in the grammar

    @property
    def key(self) -> str:
        return f"t{self.template:03d}"


class AskTemplates:
    """TemplateJob -> the template's questions, each solved exactly over the world.

    The world's indexes are built once, here; each template draws from its own seeded generator, so the
    questions of one template do not depend on the others.
    """

    name = "questions"
    input_model = TemplateJob
    output_model = Sample

    def __init__(self, config: PhantomConfig, universe: Universe) -> None:
        self.config = config
        self.universe = universe
        self.index = RelationIndex(universe)
        self.attributes = AttributeTable(universe)
        self.sampler = Sampler(self.index, EASY_RELATIONS if config.easy_mode else tuple(RELATIONS))
        self.people_named = _people_named(universe) if config.duplicate_names else {}
        self.doc_ids = DocumentIds(universe.size)
        self.templates = {template.id: template for template in templates(config.depth)}

    def key(self, record: TemplateJob) -> str:
        """The template's id."""
        return record.key

    def process(self, record: TemplateJob, context: StageContext) -> list[Sample]:
        """The template's questions, as samples."""
        config, template = self.config, self.templates[record.template]
        rng = _template_rng(config.seed, template.id)
        count, attempts = config.questions_per_template, config.sampling_attempts
        walks = self.sampler.sample(template, count, rng, attempts, self.universe, self.attributes)
        return [
            to_sample(
                f"pw{template.id:02d}-{number:04d}",
                walk,
                question,
                solve(walk, self.index, self.attributes, self.people_named),
                self.universe,
                self.attributes,
                self.doc_ids,
                config.seed,
            )
            for number, (walk, question) in enumerate(walks)
        ]


def build_phantom(
    config: PhantomConfig, vocabulary: Vocabulary, progress: Progress = silent, parts: Path | None = None
) -> PhantomBuild:
    """Generate the world and its questions.

    With PARTS (an empty folder) and where processes can fork, the articles are written there by forked
    processes while the questions are asked, and the build's documents are those parts; otherwise
    articles are rendered lazily as the writer consumes them. Both give the same corpus.jsonl.
    """
    check_request(config)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    universe = generate_universe(config, vocabulary, progress)
    timings["world"] = time.perf_counter() - started

    started = time.perf_counter()
    chosen = templates(config.depth)
    stage = AskTemplates(config, universe)
    writers = None
    if parts is not None and can_fork():
        writers = CorpusWriters(stage.index, stage.attributes.dob_text, parts)
    try:
        with tempfile.TemporaryDirectory(prefix="irbgen-phantom-") as scratch:  # seconds of work: no run dir
            jobs = [TemplateJob(template=template.id) for template in chosen]
            steps = [Step("questions", stage, lambda done: jobs)]
            done = run_steps(steps, StageContext(run_dir=Path(scratch)), progress=progress)
            samples = list(done["questions"].outputs())
        timings["questions"] = time.perf_counter() - started
        if writers is not None:
            started = time.perf_counter()
            documents: Iterable[Document] | WrittenCorpus = writers.join()
            timings["articles"] = time.perf_counter() - started  # what the writers took beyond the questions
        else:
            documents = articles(stage.index, stage.attributes.dob_text)
    finally:
        if writers is not None:
            writers.stop()

    counts = {
        "people": universe.size,
        "family_trees": int(universe.tree.max()) + 1,
        "friendships": len(universe.friendships),
        "templates": len(chosen),
    }
    recorded = config.model_dump()
    manifest = run_manifest(
        "phantom",
        recorded,
        done,
        counts,
        llm_usage={},
        seconds=sum(timings.values()),
        command=command_line(config),
    )
    card = Card(f"phantom-n{config.n}-s{config.seed}", command_line(config), recorded, DESCRIPTION, LICENCE)
    return PhantomBuild(documents, samples, manifest, card, universe=universe, timings=timings)


DESCRIPTION = (
    "A synthetic question-answering and retrieval benchmark over a fictional world made by irbgen phantom: "
    "family trees, friendships, occupations and hobbies of invented people, one article per person, and "
    "questions from a context-free grammar whose answers are computed exactly over the world's facts. "
    "Each question lists every correct answer; its evidence (the qrels) is the articles of everyone on "
    "some reasoning path to an answer."
)

LICENCE = (
    "Everything here was generated by irbgen from vocabularies written for irbgen; it describes no real "
    "person and contains no third-party text."
)

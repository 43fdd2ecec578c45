"""The knowledge-graph stage: each fact becomes typed triples (head, relation, tail), or a reject.

Two backends, chosen by name: "rules" reads triples off spaCy's dependency parse of each keypoint, "llm"
asks the irb_graph prompt through the injected LLM client. Either way a graph is kept only if its heads,
relations and tails cover at least `min_coverage` of the keypoints' content words, and it carries the
named entities spaCy finds in the keypoints, which the masking stage needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from irbgen.errors import BadInputError
from irbgen.irb.records import NODE_TYPES, Entity, Fact, KnowledgeGraph, Triple
from irbgen.irb.rules.graph import (
    DEFAULT_MODEL,
    covered_words,
    dedupe_triples,
    keypoint_entities,
    load_graph_nlp,
    rules_triples,
)
from irbgen.llm.backends import BACKENDS, MAX_RAW_CHARS, check_backend
from irbgen.llm.prompts import Prompt, load_prompt
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject

GRAPH_PROMPT = "irb_graph"

# --- the stage -----------------------------------------------------------------------------------------


class GraphTriple(BaseModel):
    """One triple as the model writes it; types are checked against NODE_TYPES by the stage."""

    model_config = ConfigDict(extra="ignore")

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str


class GraphReply(BaseModel):
    """The model's structured reply: the fact's triples."""

    model_config = ConfigDict(extra="ignore")

    triples: list[GraphTriple]


def _as_written(node: str, keypoints: list[str]) -> str:
    """`node` as the keypoints write it when it differs only in case; otherwise unchanged."""
    node = " ".join(node.split())
    if any(node in text for text in keypoints):
        return node
    for text in keypoints:
        at = text.lower().find(node.lower())
        if at >= 0 and len(text.lower()) == len(text):  # lower() keeps offsets for all but a few letters
            return text[at : at + len(node)]
    return node


class BuildGraphs:
    """Fact -> KnowledgeGraph (or Reject). The "rules" backend runs in `process`, "llm" in `aprocess`.

    Rejects: "no_triples", "low_coverage" (coverage below `min_coverage`), "llm_error" (failed call or
    unparseable reply) and "off_schema" (a node type outside NODE_TYPES, or an empty head/relation/tail).
    """

    name = "knowledge_graph"
    input_model = Fact
    output_model = KnowledgeGraph

    def __init__(
        self,
        backend: str = "rules",
        *,
        min_coverage: float = 0.85,
        model: str = DEFAULT_MODEL,
        temperature: float = 0.0,
        prompt_dir: Path | str | None = None,
    ) -> None:
        if not 0.0 <= min_coverage <= 1.0:
            raise BadInputError(f"min_coverage must be between 0 and 1, got {min_coverage}")
        self.backend = check_backend(backend, BACKENDS)
        self.min_coverage = min_coverage
        self.model = model
        self.temperature = temperature
        self.prompt_dir = prompt_dir
        self._prompt: Prompt | None = None  # loaded on first use: constructing does no I/O

    def __repr__(self) -> str:
        return f"BuildGraphs(backend={self.backend!r}, min_coverage={self.min_coverage:g})"

    def key(self, record: Fact) -> str:
        """The fact id."""
        return record.id

    def process(self, record: Fact, context: StageContext) -> list[KnowledgeGraph | Reject]:
        """The rules backend (the llm backend is asynchronous: use `aprocess`)."""
        if self.backend != "rules":
            raise TypeError(f"backend {self.backend!r} is asynchronous: call aprocess")
        return [self._rules(record)]

    async def aprocess(self, record: Fact, context: StageContext) -> list[KnowledgeGraph | Reject]:
        """Either backend; the llm one calls `context.llm`."""
        if self.backend == "rules":
            return [self._rules(record)]
        return [await self._llm(record, context)]

    def _reject(self, fact: Fact, reason: str, detail: str, **extra: Any) -> Reject:
        return Reject(stage=self.name, reason=reason, key=fact.id, detail=detail, extra=extra)

    def _docs(self, fact: Fact) -> list[Any]:
        return list(load_graph_nlp(self.model).pipe([kp.text for kp in fact.keypoints]))

    def _graph(
        self,
        fact: Fact,
        triples: list[Triple],
        entities: list[Entity],
        prompt: Prompt | None = None,
        model: str | None = None,
    ) -> KnowledgeGraph | Reject:
        if not triples:
            return self._reject(fact, "no_triples", "no triple was found in the keypoints")
        texts = [kp.text for kp in fact.keypoints]
        wanted, covered = covered_words(texts, triples)
        coverage = len(covered) / len(wanted) if wanted else 0.0
        if coverage < self.min_coverage:
            detail = f"coverage {coverage:.2f} is below the threshold {self.min_coverage:.2f}"
            missing = sorted(wanted - covered)
            return self._reject(fact, "low_coverage", detail, coverage=round(coverage, 4), uncovered=missing)
        return KnowledgeGraph(
            fact_id=fact.id,
            triples=triples,
            coverage=coverage,
            entities=entities,
            method=self.backend,
            prompt=prompt.ref if prompt is not None else None,
            model=model,
        )

    def _rules(self, fact: Fact) -> KnowledgeGraph | Reject:
        docs = self._docs(fact)
        triples = dedupe_triples(triple for doc in docs for triple in rules_triples(doc))
        return self._graph(fact, triples, keypoint_entities(docs), model=self.model)

    def prompt(self) -> Prompt:
        """The irb_graph prompt with its output model, loaded once."""
        if self._prompt is None:
            self._prompt = load_prompt(GRAPH_PROMPT, self.prompt_dir, models={"GraphReply": GraphReply})
        return self._prompt

    def messages(self, fact: Fact) -> list[dict[str, str]]:
        """The chat messages for one fact."""
        keypoints = "\n".join(f"{n}. {kp.text}" for n, kp in enumerate(fact.keypoints, start=1))
        return self.prompt().render(title=fact.title, keypoints=keypoints)

    async def _llm(self, fact: Fact, context: StageContext) -> KnowledgeGraph | Reject:
        client = context.llm
        if client is None:
            raise BadInputError("the llm knowledge-graph backend needs an LLM client (context.llm is None)")
        prompt = self.prompt()
        completion = await client.complete(
            self.messages(fact),
            stage=self.name,
            response_model=prompt.output_model or GraphReply,
            temperature=self.temperature,
        )
        raw = (completion.text or "")[:MAX_RAW_CHARS]
        if not completion.ok:
            return self._reject(
                fact, "llm_error", completion.error or "no reply", **({"raw": raw} if raw else {})
            )
        reply = completion.parsed
        if not isinstance(reply, GraphReply):
            return self._reject(fact, "llm_error", "reply is not a GraphReply", raw=raw)
        texts = [kp.text for kp in fact.keypoints]
        triples = []
        for n, item in enumerate(reply.triples, start=1):
            triple, problem = _checked(item, texts)
            if triple is None:
                return self._reject(fact, "off_schema", f"triple {n}: {problem}", raw=raw)
            triples.append(triple)
        entities = keypoint_entities(self._docs(fact)) if triples else []
        model = getattr(getattr(client, "settings", None), "model", None)
        return self._graph(fact, dedupe_triples(triples), entities, prompt=prompt, model=model)


def _checked(item: GraphTriple, keypoints: list[str]) -> tuple[Triple | None, str]:
    """The reply's triple with node types in NODE_TYPES spelling and nodes as written, or why not."""
    types = {name.lower(): name for name in NODE_TYPES}
    values: dict[str, str] = {}
    for field in ("head", "relation", "tail"):
        value = " ".join(getattr(item, field).split())
        if not value:
            return None, f"empty {field}"
        values[field] = value if field == "relation" else _as_written(value, keypoints)
    for field in ("head_type", "tail_type"):
        given = getattr(item, field).strip()
        if given.lower() not in types:
            return None, f"{field} {given!r} is not one of {', '.join(NODE_TYPES)}"
        values[field] = types[given.lower()]
    return Triple(**values), ""

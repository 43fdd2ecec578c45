"""The knowledge-graph stage: each fact becomes typed triples (head, relation, tail), or a reject.

Two backends (`irbgen.llm.stage.LLMStage`): "rules" reads triples off spaCy's dependency parse of each
keypoint (`irbgen.irb.rules.graph`), "llm" asks the irb_graph prompt. Either way a graph is kept only if
its heads, relations and tails cover at least `min_coverage` of the keypoints' content words, and it
carries the named entities spaCy finds in the keypoints, which the masking stage needs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from irbgen.errors import BadInputError
from irbgen.irb.records import NODE_TYPES, Entity, Fact, KnowledgeGraph, Triple
from irbgen.irb.rules.graph import (
    DEFAULT_MODEL,
    covered_words,
    dedupe_triples,
    graph_coverage,
    keypoint_entities,
    load_graph_nlp,
    rules_triples,
)
from irbgen.llm.stage import LLMStage
from irbgen.records import Reject

GRAPH_PROMPT = "irb_graph"


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


class BuildGraphs(LLMStage):
    """Fact -> KnowledgeGraph (or Reject). The "rules" backend runs in `process`, "llm" in `aprocess`.

    Rejects: "no_triples", "low_coverage" (coverage below `min_coverage`), "llm_error" (failed call or
    unparseable reply) and "off_schema" (a node type outside NODE_TYPES, or an empty head/relation/tail).
    """

    name = "knowledge_graph"
    input_model = Fact
    output_model = KnowledgeGraph
    prompts = {GRAPH_PROMPT: GraphReply}
    what = "knowledge-graph"

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
        super().__init__(backend, temperature=temperature, prompt_dir=prompt_dir)
        self.min_coverage = min_coverage
        self.model = model

    def __repr__(self) -> str:
        return f"BuildGraphs(backend={self.backend!r}, min_coverage={self.min_coverage:g})"

    def key(self, record: Fact) -> str:
        """The fact id."""
        return record.id

    def _docs(self, fact: Fact) -> list:
        return list(load_graph_nlp(self.model).pipe([kp.text for kp in fact.keypoints]))

    def _graph(
        self, fact: Fact, triples: list[Triple], entities: list[Entity], model: str | None = None
    ) -> KnowledgeGraph:
        return KnowledgeGraph(
            fact_id=fact.id,
            triples=triples,
            coverage=graph_coverage([kp.text for kp in fact.keypoints], triples),
            entities=entities,
            method=self.backend,
            model=model,
        )

    def gate(self, fact: Fact, graph: KnowledgeGraph) -> Reject | None:
        """A reject "no_triples", or "low_coverage" with the content words no triple covers; else None."""
        if not graph.triples:
            return self.reject(fact, "no_triples", "no triple was found in the keypoints")
        if graph.coverage < self.min_coverage:
            wanted, covered = covered_words([kp.text for kp in fact.keypoints], graph.triples)
            detail = f"coverage {graph.coverage:.2f} is below the threshold {self.min_coverage:.2f}"
            missing = sorted(wanted - covered)
            coverage = round(graph.coverage, 4)
            return self.reject(fact, "low_coverage", detail, coverage=coverage, uncovered=missing)
        return None

    def rules(self, fact: Fact) -> KnowledgeGraph:
        """The offline backend: triples from the dependency parse of each keypoint."""
        docs = self._docs(fact)
        triples = dedupe_triples(triple for doc in docs for triple in rules_triples(doc))
        return self._graph(fact, triples, keypoint_entities(docs), model=self.model)

    def values(self, fact: Fact) -> dict[str, str]:
        """The irb_graph placeholders for one fact."""
        keypoints = "\n".join(f"{n}. {kp.text}" for n, kp in enumerate(fact.keypoints, start=1))
        return {"title": fact.title, "keypoints": keypoints}

    def accept(self, fact: Fact, reply: GraphReply, raw: str) -> KnowledgeGraph | Reject:
        """The reply's triples, types checked and nodes as written ("off_schema" otherwise)."""
        texts = [kp.text for kp in fact.keypoints]
        triples = []
        for n, item in enumerate(reply.triples, start=1):
            triple, problem = _checked(item, texts)
            if triple is None:
                return self.reject(fact, "off_schema", f"triple {n}: {problem}", raw=raw)
            triples.append(triple)
        entities = keypoint_entities(self._docs(fact)) if triples else []
        return self._graph(fact, dedupe_triples(triples), entities)


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

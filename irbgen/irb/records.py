"""The records of the IRB generator, stage by stage (pages and web documents live in their source packages).

citation segment -> keypoint; (keypoint, web document) -> grounding -> fact -> graph -> plan -> question.
Every record has a stable `key` so a rerun can skip what is done, and a reject names that key.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from irbgen.records import Record
from irbgen.schema import PromptRef
from irbgen.wikipedia.records import Citation, LeadClaim


class Keypoint(Record):
    """A self-contained statement made from one segment."""

    id: str  # the segment id
    page_id: int
    title: str
    text: str
    segment: str  # the segment's text, as written on the page
    urls: list[str]  # the cited URLs that should support it
    citations: list[Citation] = Field(default_factory=list)  # the segment's citations of them (dates ...)
    method: str  # "rules" or "llm"
    prompt: PromptRef | None = None
    model: str | None = None

    @property
    def key(self) -> str:
        return self.id


class Grounding(Record):
    """Whether one document supports one keypoint."""

    keypoint_id: str
    document_id: str
    supported: bool
    score: float
    method: str  # "rules" or "llm"
    reason: str = ""
    prompt: PromptRef | None = None
    model: str | None = None

    @property
    def key(self) -> str:
        return f"{self.keypoint_id}|{self.document_id}"


class GroundedKeypoint(Record):
    """A keypoint kept in a fact, with the documents that support it."""

    keypoint_id: str
    text: str
    documents: list[str]


class Fact(Record):
    """A segment's supported keypoints with their evidence: the input of question generation. A fact of
    `source` "lead" is a LeadClaim of its page, grounded in the lead itself: it only describes a bridge
    (the first hop of a chain), never a question of its own."""

    id: str  # the segment id; "<page_id>:lead:<k>" for a lead claim
    page_id: int
    title: str
    section: list[str] = Field(default_factory=list)
    sentence: str
    keypoints: list[GroundedKeypoint]
    citations: list[Citation]
    created: str | None = None
    popularity: float | None = None
    topics: list[str] = Field(default_factory=list)
    wikidata_id: str | None = None
    categories: list[str] = Field(default_factory=list)
    revised: str | None = None  # the page revision's timestamp
    links: dict[str, str] = Field(default_factory=dict)  # link text in the sentence -> linked page title
    page_noun: str | None = None  # what the page's subject is, from its lead ("tennis player")
    lead_claims: list[LeadClaim] = Field(default_factory=list)  # the page's; a lead fact's own one
    source: Literal["citation", "lead"] = "citation"

    @property
    def key(self) -> str:
        return self.id


# --- part 2: facts -> knowledge graphs -> question plans -> questions ----------------------------------

# Node types a knowledge graph may use. The transforms know Person, Date, Country and Quantity.
NODE_TYPES = (
    "Person",
    "Organization",
    "Location",
    "Country",
    "Date",
    "Quantity",
    "Event",
    "Work",
    "Product",
    "Other",
)


class Triple(Record):
    """One edge of a fact's knowledge graph; head and tail are spans of the keypoints where possible."""

    head: str
    head_type: str
    relation: str
    tail: str
    tail_type: str


class Entity(Record):
    """A named entity spaCy found in a fact's keypoints (label as spaCy gives it: PERSON, DATE, ...)."""

    text: str
    label: str


class KnowledgeGraph(Record):
    """A fact as triples, with how much of its keypoints' content the triples cover."""

    fact_id: str
    triples: list[Triple]
    coverage: float  # share of the keypoints' content words found in heads, relations and tails
    entities: list[Entity] = Field(default_factory=list)  # spaCy NER over the keypoints, for masking
    method: str  # "rules" or "llm"
    prompt: PromptRef | None = None
    model: str | None = None

    @property
    def key(self) -> str:
        return self.fact_id


class NodeChange(Record):
    """An unmasked node rewritten to make a question harder (paraphrase) or false (false premise)."""

    node: str  # as written in the graph
    node_type: str
    replacement: str
    kind: Literal["paraphrase", "false_premise"]
    rule: str  # e.g. "initials", "relative_date", "flag", "number_words", "other_surname"


class PlanHop(Record):
    """One hop of a question plan: one fact's graph with the node it asks for masked."""

    fact_id: str
    keypoints: list[str]  # the fact's keypoint texts
    triples: list[Triple]  # the fact's graph, nodes as written (before any NodeChange)
    answer: str  # the masked node: this hop's answer
    answer_type: str
    answer_label: str | None = None  # spaCy's entity label of the answer in the keypoints
    bridge: str | None = None  # the previous hop's answer as it appears unmasked here; None for hop 0
    documents: list[str]  # ids of the documents that support the fact
    node_pages: dict[str, str] = Field(default_factory=dict)  # normalised node -> the page it is (wikilinks)
    answer_noun: str | None = None  # what the answer's page says it is ("tennis player"), for descriptions


class QuestionPlan(Record):
    """What to ask: masked graphs chained innermost first, node changes, and the expected answer.

    The final answer is the last hop's masked node. For kind "false_premise" one change has kind
    "false_premise" and the sample's gold answer becomes "False premise question".
    """

    id: str
    kind: Literal["single_hop", "multi_hop", "false_premise"]
    hops: list[PlanHop]
    changes: list[NodeChange] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return self.id

    @property
    def answer(self) -> str:
        return self.hops[-1].answer

    @property
    def answer_type(self) -> str:
        return self.hops[-1].answer_type


class GeneratedQuestion(Record):
    """The question written for a plan, with one sub-question per hop (innermost first)."""

    plan_id: str
    question: str
    sub_questions: list[str]  # sub_questions[i] asks for hops[i].answer; the last equals `question`
    steps: list[str] = Field(default_factory=list)  # drafts of step-by-step generation, one per triple
    method: str  # "rules" or "llm"
    prompts: list[PromptRef] = Field(default_factory=list)
    model: str | None = None

    @property
    def key(self) -> str:
        return self.plan_id

"""The records that flow through `irbgen build --source wikidata-dump`, stage by stage.

dump line -> WikidataEntity (items and properties) -> Statement edges and literals -> a KnowledgeBase
in memory -> Chain (1-4 connected statements) -> ChainQuestion -> benchmark sample.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from irbgen.records import Record
from irbgen.schema import PromptRef

ValueType = Literal["entity", "time", "quantity", "string", "monolingualtext", "globecoordinate", "other"]


class Value(Record):
    """A statement's tail: an entity id, or a literal with its type and a readable text."""

    type: ValueType
    id: str | None = None  # Q-id for type "entity"
    text: str  # the readable form: the Q-id for entities (labels live in the entity table), else the literal
    raw: str = ""  # the literal as Wikidata writes it ("+2024-03-12T00:00:00Z", "+18400")
    precision: int | None = None  # time precision (9 = year, 10 = month, 11 = day)
    unit: str | None = None  # quantity unit (a Q-id), None for unit-less "1"

    @property
    def key(self) -> str:
        """A stable identity of the value: the entity id, or type + raw literal (+ a quantity's unit)."""
        if self.type == "entity" and self.id:
            return self.id
        unit = f"@{self.unit}" if self.type == "quantity" and self.unit else ""
        return f"{self.type}:{self.raw or self.text}{unit}"

    @property
    def is_english(self) -> bool:
        """Whether a monolingual text is English ("@en", "@en-gb")."""
        language = self.raw.rsplit("@", 1)[-1]
        return language == "en" or language.startswith("en-")


class Statement(Record):
    """One truthy statement: (head, property, tail) with its rank and qualifiers kept as strings."""

    head: str  # Q-id
    property: str  # P-id
    tail: Value
    rank: Literal["preferred", "normal"]
    qualifiers: dict[str, list[str]] = Field(default_factory=dict)  # P-id -> readable values
    datatype: str = ""  # the statement's own mainsnak.datatype ("external-id", "quantity", ...)

    @property
    def key(self) -> str:
        return f"{self.head}|{self.property}|{self.tail.key}"


class WikidataEntity(Record):
    """An item (Q) or property (P) with what realisation and linking need, and its truthy statements."""

    id: str
    kind: Literal["item", "property"]
    label: str
    aliases: list[str] = Field(default_factory=list)
    description: str = ""
    enwiki: str | None = None  # enwiki sitelink title
    sitelinks: int = 0
    datatype: str | None = None  # properties only, e.g. "wikibase-item", "time"
    statements: list[Statement] = Field(default_factory=list)

    @property
    def key(self) -> str:
        return self.id


class ChainHop(Record):
    """One triple of a chain with its knowledge labels."""

    statement: Statement
    popularity: float
    popular: bool
    new: bool | None = None  # None when no old dump was given


class Chain(Record):
    """1-4 connected triples: each tail is the next head; the answer is the last tail."""

    id: str
    hops: list[ChainHop]

    @property
    def key(self) -> str:
        return self.id


class ChainQuestion(Record):
    """The main question of a chain and one sub-question (with its answer) per hop."""

    chain_id: str
    question: str
    sub_questions: list[str]
    sub_answers: list[str]
    method: str  # "rules" or "llm"
    attempts: int = 1
    prompts: list[PromptRef] = Field(default_factory=list)
    model: str | None = None

    @property
    def key(self) -> str:
        return self.chain_id

"""The records every irbgen benchmark shares: documents, samples, hops and the manifest.

One schema serves all three sources (a synthetic world, Wikipedia citing sentences, Wikidata triple
chains); a field means the same thing whatever the source. Evaluation reads only these records.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from irbgen.records import Record

FORMAT_VERSION = "1"

Source = Literal["phantom", "wikipedia", "wikidata"]

# Ids go into qrels/test.tsv, which cannot hold a tab or a line break.
ID_PATTERN = r"^[^\t\r\n]+$"


def _unique(values: list[str]) -> list[str]:
    if len(set(values)) != len(values):
        raise ValueError("must not repeat a value")
    return values


class _Record(Record):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Document(_Record):
    """One retrievable document: a wiki article, a cited web page, or an entity's linearised facts."""

    id: str = Field(alias="_id", pattern=ID_PATTERN)
    title: str = ""
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class Hop(_Record):
    """One reasoning step of a sample: what it asks, what it yields, and which documents support it.

    `index` counts from 0 at the innermost step (the one resolved first).
    """

    index: int = Field(ge=0)
    operation: str  # e.g. "relation", "attribute", "count", "lookup", "triple"
    predicate: str = ""  # relation, attribute or property name
    question: str = ""  # the sub-question, when the source writes one
    answers: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)

    @field_validator("answers", "evidence")
    @classmethod
    def _no_duplicates(cls, values: list[str]) -> list[str]:
        return _unique(values)


class Attributes(_Record):
    """Descriptive labels used to slice results; every field optional, `extra` for source-specific ones."""

    language: str = "en"
    template: str | None = None
    template_id: int | None = None
    question_type: str | None = None  # e.g. "who", "what", "how_many", "single_hop", "multi_hop"
    aggregation: bool = False
    freshness: str | None = None
    topic: str | None = None
    popularity: float | None = Field(None, allow_inf_nan=False)
    newness: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class PromptRef(_Record):
    """A prompt used to make a sample, by name and version."""

    name: str
    version: str


class Provenance(_Record):
    """How a sample was made: the query plan, and the intermediate structures and prompts behind it."""

    generator: str  # e.g. "irbgen.phantom"
    seed: int | None = None
    query_plan: list[dict[str, Any]] = Field(default_factory=list)
    logical_form: list[str] = Field(default_factory=list)  # e.g. Prolog goals, SPARQL triple patterns
    knowledge_graph: list[list[str]] = Field(default_factory=list)  # (subject, predicate, object)
    keypoints: list[str] = Field(default_factory=list)
    triple_chain: list[list[str]] = Field(default_factory=list)
    prompts: list[PromptRef] = Field(default_factory=list)
    model: str | None = None


class Sample(_Record):
    """One benchmark question with every correct answer, its reasoning chain and its evidence."""

    id: str = Field(pattern=ID_PATTERN)
    question: str = Field(min_length=1)
    answers: list[str]
    false_premise: bool = False
    hops: int = Field(ge=0)
    difficulty: int | float | None = Field(None, allow_inf_nan=False)
    source: Source
    evidence: list[str] = Field(default_factory=list)
    chain: list[Hop] = Field(default_factory=list)
    attributes: Attributes = Field(default_factory=Attributes)
    provenance: Provenance

    @field_validator("answers", "evidence")
    @classmethod
    def _no_duplicates(cls, values: list[str]) -> list[str]:
        return _unique(values)

    @model_validator(mode="after")
    def _answers_match_premise(self) -> Sample:
        if self.false_premise and self.answers:
            raise ValueError("a false-premise sample has no answers")
        if not self.false_premise and not self.answers:
            raise ValueError("a sample without a false premise needs at least one answer")
        return self


class Manifest(_Record):
    """What made a benchmark directory: tool, command, configuration, seed and counts.

    Kept free of wall-clock values so the same seed and inputs give a byte-identical directory; the
    writer fills `counts` with documents, samples, qrels and rejects (beside any the generator adds).
    """

    format_version: str = FORMAT_VERSION
    tool: str = "irbgen"
    tool_version: str
    source: Source
    name: str
    command: str
    config: dict[str, Any] = Field(default_factory=dict)
    seed: int | None = None
    counts: dict[str, int] = Field(default_factory=dict)
    rejects: dict[str, int] = Field(default_factory=dict)
    llm_usage: dict[str, Any] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict)  # file name -> sha256
    sizes: dict[str, int] = Field(default_factory=dict)  # file name -> bytes (readers check them)

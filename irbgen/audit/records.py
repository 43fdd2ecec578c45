"""The records of an audit: the sheet's header and items, a reviewer's judgment, and the score.

One line of audit.jsonl is one `AuditItem`; a review page can read the same records and send back
`Judgment`s by sample id.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, StrictBool

from irbgen.records import Record

Kind = Literal["single_hop", "multi_hop", "false_premise"]
KINDS: tuple[Kind, ...] = ("single_hop", "multi_hop", "false_premise")
CRITERIA = ("well_formed", "answer_correct", "supported")
FORMAT = "irbgen-audit/1"


class Judgment(Record):
    """A reviewer's verdict on IRB's three criteria; null until judged, then true or false."""

    well_formed: StrictBool | None = None
    answer_correct: StrictBool | None = None
    supported: StrictBool | None = None
    note: str = ""

    def missing(self) -> list[str]:
        """The criteria not judged yet."""
        return [name for name in CRITERIA if getattr(self, name) is None]

    def failed(self) -> list[str]:
        """The criteria judged false."""
        return [name for name in CRITERIA if getattr(self, name) is False]

    @property
    def valid(self) -> bool:
        """True when all three criteria hold."""
        return all(getattr(self, name) is True for name in CRITERIA)


class Passage(Record):
    """A short window of an evidence document: the sentences that best overlap a fact."""

    doc_id: str
    title: str = ""
    text: str
    overlap: float = Field(ge=0, le=1)  # share of the fact's content words found in the window


class Fact(Record):
    """One statement a sample rests on, with the passage that should support it."""

    origin: Literal["keypoint", "triple", "chain"]
    text: str
    hop: int | None = None
    triple: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    passage: Passage | None = None


class AuditHop(Record):
    """One reasoning step as the reviewer sees it."""

    index: int
    question: str = ""
    answers: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class AuditItem(Record):
    """One sample on the audit sheet: what to judge, the evidence to judge it by, and the judgment."""

    id: str
    kind: Kind
    judgment: Judgment = Field(default_factory=Judgment)
    source: str
    question_type: str | None = None
    question: str
    answers: list[str]
    false_premise: bool = False
    premise_answer: str | None = None
    changes: list[str] = Field(default_factory=list)
    hops: list[AuditHop] = Field(default_factory=list)
    facts: list[Fact] = Field(default_factory=list)


class AuditHeader(Record):
    """Where a sheet came from, so scoring can find the benchmark and notice if it changed."""

    format: str = FORMAT
    benchmark: str
    name: str
    source: str
    seed: int
    requested: int
    size: int
    population: int
    samples_sha256: str


class Rate(Record):
    """Valid items among those judged, with a Wilson 95% score interval and failures per criterion."""

    judged: int
    valid: int
    rate: float | None
    low: float | None
    high: float | None
    failed: dict[str, int]


class AuditScore(Record):
    """The scored audit: its header, the overall rate and the rate per kind."""

    header: AuditHeader
    overall: Rate
    by_kind: dict[str, Rate]

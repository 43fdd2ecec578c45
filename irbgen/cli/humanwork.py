"""Human work in a benchmark (reviews/ and the card's Audit section), carried into the one that replaces it.

The benchmark writer moves reviews/ over as it is (irbgen.benchmark): each judgment carries the sha256 of
the sample's line it was made on, so one whose sample changed (or is gone) is stale by that record alone.
`carry_human_work` is the writer's `carry` hook for the commands that replace benchmarks: it copies the
card's Audit section into the new card (when samples.jsonl changed, with a first line saying it was
measured on an earlier build) and says how many judgments stay current and how many went stale.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from irbgen.audit.publish import HEADING, publish_section, section_of
from irbgen.benchmark import CARD, REVIEWS, SAMPLES, read_manifest
from irbgen.errors import BadInputError
from irbgen.review.index import BenchmarkIndex
from irbgen.review.store import read_reviews

EARLIER = "> Measured on an earlier build of this benchmark:"


@dataclass(frozen=True)
class Carried:
    """What a replacement kept: judgments still current, judgments gone stale, and the Audit section."""

    kept: int = 0
    stale: int = 0
    section: str = ""  # "", "kept" or "kept, marked as measured on an earlier build"
    unread: str = ""  # why reviews/ could not be counted (it is moved over all the same)


def holds_human_work(benchmark: Path) -> bool:
    """Whether BENCHMARK holds reviews or a card with an Audit section."""
    reviews = Path(benchmark) / REVIEWS
    return (reviews.is_dir() and any(reviews.iterdir())) or bool(_audit_section(Path(benchmark)))


def carry_human_work(old: Path, new: Path) -> str:
    """Copy OLD's Audit section into the staged benchmark NEW; one line on what NEW keeps of OLD, or ''."""
    carried = replace(count_reviews(old, new), section=carry_card(old, new))
    return describe(old, carried)


def carry_card(old: Path, new: Path) -> str:
    """Copy OLD's Audit section into NEW's card (and its checksum into NEW's manifest); what was done."""
    section = _audit_section(old)
    if not section:
        return ""
    changed = _samples_sha256(old) != _samples_sha256(new)
    if changed:
        section = _marked_earlier(section)
    publish_section(new, section)
    return "kept, marked as measured on an earlier build" if changed else "kept"


def count_reviews(old: Path, new: Path) -> Carried:
    """How many of OLD's latest judgments still hold for NEW's samples, and how many went stale."""
    try:
        reviews = read_reviews(old)
    except (BadInputError, OSError) as error:
        return Carried(unread=str(error))
    if not reviews:
        return Carried()
    index = BenchmarkIndex.samples_only(new)
    kept = stale = 0
    for samples in reviews.values():
        for sample, review in samples.items():
            if sample in index.samples and review.is_of(index.digest(sample)):
                kept += 1
            else:
                stale += 1
    return Carried(kept, stale)


def describe(out: Path, carried: Carried) -> str:
    """One line on what a replacement of OUT kept, or '' when there was nothing to keep."""
    parts = []
    if carried.unread:
        parts.append(f"kept reviews/ unread ({carried.unread})")
    elif carried.kept or carried.stale:
        stale = (
            f"; {carried.stale} went stale (their samples changed or are gone): judge them again with "
            f"irbgen review {out}"
            if carried.stale
            else ""
        )
        parts.append(f"kept {carried.kept} judgment(s) in reviews/{stale}")
    if carried.section:
        parts.append(f"the card's Audit section {carried.section}")
    return f"{out}: " + "; ".join(parts) if parts else ""


def _audit_section(benchmark: Path) -> str:
    try:
        card = (benchmark / CARD).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    return section_of(card, HEADING)


def _marked_earlier(section: str) -> str:
    heading, _, body = section.partition("\n")
    lines = [line for line in body.splitlines(keepends=True) if not line.startswith(EARLIER)]
    body = "".join(lines).lstrip("\n")
    note = (
        f"{EARLIER} samples.jsonl has changed since (the sha256 below is the one judged), so these "
        "figures may not hold for this build. Judge the changed samples again and score them to update it.\n"
    )
    return f"{heading}\n\n{note}\n{body}"


def _samples_sha256(benchmark: Path) -> str | None:
    """samples.jsonl's sha256 as the benchmark's manifest records it; None when it cannot be read (then
    the judgments count as made on another build)."""
    try:
        return read_manifest(benchmark).files.get(SAMPLES)
    except (BadInputError, OSError):
        return None

"""A scored audit sheet's judgments, kept beside the reviews as `irbgen review` lines.

Each line carries its sample's sha256 and the sheet's random draw, so `export --reviewed-only` reads
them and a rebuild can tell which went stale.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from irbgen.audit.records import AuditHeader, AuditItem
from irbgen.audit.sheet import SHEET
from irbgen.benchmark import SAMPLES
from irbgen.errors import BadInputError
from irbgen.io import write_jsonl
from irbgen.pipeline.rundir import make_directory
from irbgen.review.draws import Draw
from irbgen.review.index import BenchmarkIndex
from irbgen.review.store import AUDITS, REVIEWS, Review


def sheet_judgments(
    directory: Path, benchmark: Path, header: AuditHeader, items: Sequence[AuditItem]
) -> list[Review]:
    """The sheet's judgments as `irbgen review` lines, each with its sample's sha256 and the draw."""
    draw = Draw(order="random", seed=header.seed, size=header.requested, population=header.population)
    index = BenchmarkIndex.samples_only(benchmark)
    unknown = [item.id for item in items if item.id not in index.samples]
    if unknown:
        raise BadInputError(
            f"{Path(directory) / SHEET}: sample {unknown[0]!r} is not in {Path(benchmark) / SAMPLES}"
        )
    name = audit_name(header)
    return [
        # a sheet records no time: the same sheet gives the same file
        Review.of(item.id, item.judgment, name, "", index.digest(item.id), draw)
        for item in items
    ]


def audit_name(header: AuditHeader) -> str:
    """The name a sheet's judgments are kept under: one per draw (seed and size)."""
    return f"audit-seed{header.seed}-n{header.size}"


def keep_judgments(benchmark: Path, header: AuditHeader, judgments: Sequence[Review]) -> Path:
    """Write JUDGMENTS to BENCH/reviews/audits/audit-seedS-nN.jsonl, replacing the record of an earlier
    sheet of the same draw."""
    target = Path(benchmark) / REVIEWS / AUDITS / f"{audit_name(header)}.jsonl"
    make_directory(target.parent, "the judgments of scored audit sheets")
    write_jsonl(target, judgments)
    return target

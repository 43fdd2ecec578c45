"""Score a filled audit sheet: the valid share overall and per kind, with Wilson 95% score intervals.

A scored sheet's judgments are also kept in the benchmark (reviews/audits/), one line per sample as
`irbgen review` writes them, so `irbgen export --reviewed-only` reads them too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist

from pydantic import ValidationError

from irbgen.audit.publish import publish
from irbgen.audit.records import CRITERIA, KINDS, AuditHeader, AuditItem, AuditScore, Judgment, Rate
from irbgen.audit.sheet import HEADER, SHEET, check_benchmark, scan_samples
from irbgen.benchmark import SAMPLES, describe_error, iter_lines
from irbgen.errors import BadInputError
from irbgen.io import write_json

SCORE = "score.json"
Z95 = NormalDist().inv_cdf(0.975)


class SheetError(BadInputError):
    """A sheet that cannot be scored; `problems` holds one `FILE:LINE: message` per bad line."""

    def __init__(self, message: str, problems: list[str]) -> None:
        super().__init__(message)
        self.problems = problems


def wilson(valid: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of VALID successes in N trials (95% for the default z)."""
    if n <= 0 or not 0 <= valid <= n:
        raise ValueError(f"need 0 <= valid <= n and n > 0, got valid={valid}, n={n}")
    p = valid / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def rate_of(judgments: Sequence[Judgment], intervals: bool = True) -> Rate:
    """The valid share of fully judged JUDGMENTS, its interval (if INTERVALS: they are a random sample),
    and how often each criterion failed."""
    n = len(judgments)
    valid = sum(judgment.valid for judgment in judgments)
    failed = {name: sum(getattr(judgment, name) is False for judgment in judgments) for name in CRITERIA}
    if n == 0:
        return Rate(judged=0, valid=0, rate=None, low=None, high=None, failed=failed)
    if not intervals:
        return Rate(judged=n, valid=valid, rate=round(valid / n, 4), low=None, high=None, failed=failed)
    low, high = wilson(valid, n)
    return Rate(
        judged=n, valid=valid, rate=round(valid / n, 4), low=round(low, 4), high=round(high, 4), failed=failed
    )


def score_items(header: AuditHeader, items: Sequence[AuditItem], intervals: bool = True) -> AuditScore:
    """Score fully judged items overall and per kind (kinds absent from the sheet are left out); with
    INTERVALS (the items are a random sample), each rate has its Wilson interval."""
    by_kind = {
        kind: rate_of([item.judgment for item in items if item.kind == kind], intervals)
        for kind in KINDS
        if any(item.kind == kind for item in items)
    }
    overall = rate_of([item.judgment for item in items], intervals)
    return AuditScore(header=header, overall=overall, by_kind=by_kind)


def read_header(directory: Path) -> AuditHeader:
    """Read audit.json of an audit folder."""
    file = Path(directory) / HEADER
    if not file.is_file():
        raise BadInputError(f"{file}: no such file; is {directory} an audit folder made by irbgen audit?")
    try:
        return AuditHeader.model_validate_json(file.read_bytes())
    except ValidationError as e:
        raise BadInputError(f"{file}: {describe_error(e)}") from None


def read_judged(directory: Path, expected: int) -> list[AuditItem]:
    """Read audit.jsonl; SheetError naming every unreadable, repeated or not fully judged line."""
    file = Path(directory) / SHEET
    if not file.is_file():
        raise BadInputError(f"{file}: no such file")
    items: list[AuditItem] = []
    problems: list[str] = []
    unjudged = 0
    seen: set[str] = set()
    lines = 0
    for lineno, raw in iter_lines(file):
        if not raw.strip():
            continue
        lines += 1
        item, problem = _parse(raw)
        if item is None:
            problems.append(f"{file}:{lineno}: {problem}")
            continue
        if item.id in seen:
            problems.append(f"{file}:{lineno}: sample {item.id!r}: appears twice")
        seen.add(item.id)
        missing = item.judgment.missing()
        if missing:
            unjudged += 1
            problems.append(f"{file}:{lineno}: sample {item.id!r}: not judged: {', '.join(missing)}")
        items.append(item)
    if problems:
        raise SheetError(_summary(file, lines, unjudged, len(problems) - unjudged), problems)
    if len(items) != expected:
        raise BadInputError(f"{file}: {len(items)} items but {HEADER} says the sheet holds {expected}")
    return items


def _parse(raw: bytes) -> tuple[AuditItem | None, str]:
    try:
        record = json.loads(raw)
    except ValueError as e:
        return None, f"invalid JSON: {e}"
    try:
        return AuditItem.model_validate(record), ""
    except ValidationError as e:
        sample = record.get("id") if isinstance(record, dict) else None
        where = f"sample {sample!r}: " if isinstance(sample, str) else ""
        return None, where + _describe(e)


def _describe(error: ValidationError) -> str:
    parts = []
    for item in error.errors()[:3]:
        loc = ".".join(str(part) for part in item["loc"])
        shown = json.dumps(item["input"], ensure_ascii=False, default=str)[:40] if "input" in item else ""
        parts.append(f"{loc}: {item['msg']}" + (f" (got {shown})" if shown else ""))
    return "; ".join(parts)


def _summary(file: Path, lines: int, unjudged: int, bad: int) -> str:
    parts = []
    if unjudged:
        parts.append(f"{unjudged} of {lines} items are not fully judged")
    if bad:
        parts.append(f"{bad} line(s) cannot be used")
    return (
        f"{file}: " + " and ".join(parts) + "; set well_formed, answer_correct and supported to true or "
        "false on every line, then score again"
    )


def check_unchanged(benchmark: Path, header: AuditHeader) -> None:
    """Fail unless BENCHMARK's samples.jsonl is the one the sheet was drawn from."""
    check_benchmark(benchmark)
    _, digest = scan_samples(benchmark)
    if digest != header.samples_sha256:
        raise BadInputError(
            f"{benchmark / SAMPLES}: changed since the sheet was made (sha256 {digest[:12]}, the sheet has "
            f"{header.samples_sha256[:12]}); make a new sheet with irbgen audit"
        )


def read_sheet(directory: Path, benchmark: Path | None = None) -> tuple[AuditHeader, list[AuditItem], Path]:
    """A fully judged sheet's header and items, and its benchmark, checked unchanged since the draw."""
    directory = Path(directory)
    header = read_header(directory)
    items = read_judged(directory, header.size)
    bench = Path(benchmark) if benchmark is not None else Path(header.benchmark)
    check_unchanged(bench, header)
    return header, items, bench


def score_sheet(directory: Path, bench: Path, header: AuditHeader, items: Sequence[AuditItem]) -> AuditScore:
    """Score a read sheet, write score.json beside it and the Audit section into the card."""
    score = score_items(header.model_copy(update={"benchmark": str(Path(bench).resolve())}), items)
    publish(bench, score)
    write_json(Path(directory) / SCORE, score)
    return score

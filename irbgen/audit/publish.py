"""Record a scored audit in the benchmark's card (an "Audit" section) and keep its manifest checksum true."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from irbgen.audit.records import CRITERIA, KINDS, AuditScore, Rate
from irbgen.benchmark import CARD, MANIFEST, read_manifest
from irbgen.errors import BadInputError
from irbgen.io import write_atomic, write_manifest

HEADING = "## Audit"
BEFORE = "## How to load it"
KIND_LABELS = {"single_hop": "single-hop", "multi_hop": "multi-hop", "false_premise": "false premise"}
CRITERION_LABELS = {
    "well_formed": "well formed",
    "answer_correct": "answer correct",
    "supported": "supported",
}


def render_section(score: AuditScore) -> str:
    """The card's Audit section: deterministic, with no date, so re-scoring the same sheet changes nothing."""
    header = score.header
    judged = (
        f"all {header.size} samples"
        if header.size == header.population
        else f"{header.size} of the {header.population} samples"
    )
    intro = (
        f"A reviewer judged {judged} of `samples.jsonl` (sha256 `{header.samples_sha256[:12]}`) with "
        "`irbgen audit`, on three criteria: the question is well formed, the gold answer is correct (for a "
        "false premise: the premise really is false), and the evidence supports it. A sample is valid when "
        "all three hold.\n"
    )
    drawn = how_drawn(random_draw(header.size, header.seed), random=True)
    return "\n".join([f"{HEADING}\n", intro, drawn, *rate_tables(score)]) + "\n"


def random_draw(size: int, seed: int) -> str:
    """How a random draw is stated: "a random sample of N with seed S"."""
    return f"a random sample of {size} with seed {seed}"


def how_drawn(text: str, random: bool) -> str:
    """The card's sentence on how the judged samples were drawn, and whether intervals apply."""
    tail = " Intervals are Wilson 95% score intervals." if random else ""
    return f"How the samples were drawn: {text}.{tail}\n"


def rate_tables(score: AuditScore) -> list[str]:
    """The valid rate per kind (with its interval, if the score has intervals) and the failures per
    criterion, as Markdown table lines."""
    rows = [("all", score.overall)] + [
        (KIND_LABELS[kind], score.by_kind[kind]) for kind in KINDS if kind in score.by_kind
    ]
    if has_intervals(score):
        head = ["| kind | judged | valid | rate | 95% interval |", "|---|---|---|---|---|"]
        cells = [
            f"| {label} | {r.judged} | {r.valid} | {percent(r.rate)} | {interval(r)} |" for label, r in rows
        ]
    else:
        head = ["| kind | judged | valid | rate |", "|---|---|---|---|"]
        cells = [f"| {label} | {r.judged} | {r.valid} | {percent(r.rate)} |" for label, r in rows]
    return [
        *head,
        *cells,
        "",
        "| criterion | failed |",
        "|---|---|",
        *(f"| {CRITERION_LABELS[name]} | {score.overall.failed[name]} |" for name in CRITERIA),
    ]


def has_intervals(score: AuditScore) -> bool:
    """Whether the score carries intervals (only a random sample does)."""
    return score.overall.low is not None


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal; a dash when there is none."""
    return "–" if value is None else f"{value:.1%}"


def interval(rate: Rate) -> str:
    """A rate's interval as [low, high] in percent."""
    return f"[{percent(rate.low)}, {percent(rate.high)}]"


def splice_section(card: str, section: str) -> str:
    """CARD with its Audit section replaced by SECTION, or SECTION added before "How to load it"."""
    lines = card.splitlines(keepends=True)
    span = _span(lines, HEADING)
    if span is not None:
        lines[span[0] : span[1]] = []
    headings = _headings(lines)
    if BEFORE in headings:
        at = headings[BEFORE]
        return "".join(lines[:at]) + section + "\n" + "".join(lines[at:])
    return "".join(lines).rstrip("\n") + "\n\n" + section


def section_of(card: str, heading: str) -> str:
    """CARD's section under HEADING as `splice_section` takes it (up to the next heading), or ''."""
    lines = card.splitlines(keepends=True)
    span = _span(lines, heading)
    return "" if span is None else "".join(lines[span[0] : span[1]]).rstrip("\n") + "\n"


def _span(lines: list[str], heading: str) -> tuple[int, int] | None:
    """Line indices [start, end) of the section under HEADING, or None."""
    headings = _headings(lines)
    if heading not in headings:
        return None
    start = headings[heading]
    return start, min((i for i in headings.values() if i > start), default=len(lines))


def _headings(lines: list[str]) -> dict[str, int]:
    """Second-level headings outside code fences -> line index (first occurrence)."""
    found: dict[str, int] = {}
    fence = ""
    for index, line in enumerate(lines):
        stripped = line.rstrip("\n")
        if stripped.startswith("```"):
            ticks = stripped[: len(stripped) - len(stripped.lstrip("`"))]
            if not fence:
                fence = ticks
            elif stripped == fence:
                fence = ""
        elif not fence and stripped.startswith("## "):
            found.setdefault(stripped, index)
    return found


def publish(benchmark: Path, score: AuditScore) -> None:
    """Write the Audit section into BENCHMARK/README.md and its new sha256 and size into manifest.json."""
    publish_section(benchmark, render_section(score))


def publish_section(benchmark: Path, section: str) -> None:
    """Write SECTION (an Audit section) into BENCHMARK/README.md and its new sha256 and size into
    manifest.json."""
    read_manifest(benchmark)
    card_file, manifest_file = benchmark / CARD, benchmark / MANIFEST
    if not card_file.is_file():
        raise BadInputError(f"{card_file}: no such file")
    manifest = json.loads(manifest_file.read_bytes())
    files = manifest.setdefault("files", {})
    card = card_file.read_bytes()
    if files.get(CARD) != _sha256(card):
        raise BadInputError(
            f"{card_file}: its sha256 does not match {MANIFEST}; run irbgen validate {benchmark} first"
        )
    updated = splice_section(card.decode("utf-8"), section).encode()
    files[CARD] = _sha256(updated)
    if CARD in manifest.get("sizes", {}):  # readers check the listed sizes too
        manifest["sizes"][CARD] = len(updated)
    write_atomic(card_file, updated)
    write_manifest(manifest_file, manifest)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

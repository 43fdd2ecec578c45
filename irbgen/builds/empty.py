"""A build that fetched no page or made no sample fails: one line saying where everything was lost and why.

The run directory keeps its stage checkpoints, RUN/rejects.jsonl and a RUN/manifest.json whose `failed`
field holds the same line, so the cause stays on record and the build stays resumable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from irbgen.builds.output import BENCHMARK, BuildOutput, RunManifest, write_output
from irbgen.errors import IrbgenError
from irbgen.pipeline.runner import StageResult

MAIN_REASONS = 3  # reject reasons named in the line; the rest are summed


class EmptyBuildError(IrbgenError):
    """A build that got nothing to evaluate (exit 1); RUN/manifest.json records why."""


def main_reasons(results: Mapping[str, StageResult], stages: Iterable[str], *, prefix: bool = True) -> str:
    """The commonest reject reasons of STAGES with their counts: "26 fetch_cited:dns, 3 read:redirect"."""
    counts: Counter[str] = Counter()
    for stage in stages:
        if stage in results:
            for reason, count in results[stage].totals.rejects.items():
                counts[f"{stage}:{reason}" if prefix else reason] += count
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    words = [f"{count:,} {reason}" for reason, count in ordered[:MAIN_REASONS]]
    rest = sum(count for _, count in ordered[MAIN_REASONS:])
    if rest:
        words.append(f"{rest:,} other rejects")
    return ", ".join(words) or "no rejects"


def fail_empty(problem: str, manifest: RunManifest, run_dir: Path, shown: Path) -> None:
    """Record PROBLEM in RUN_DIR/manifest.json and raise EmptyBuildError; SHOWN is the path the user gave."""
    line = (
        f"{problem}; nothing to evaluate (every reject is in {shown / 'rejects.jsonl'}; "
        "fix the cause, then rerun with --force)"
    )
    failed = manifest.model_copy(update={"failed": line})
    write_output(BuildOutput([], [], failed, None), run_dir / BENCHMARK, run_dir)
    raise EmptyBuildError(line)

"""Per-stage counters that add up: shard stats merged with `+` equal a one-shard run on the same input."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ERROR_PREFIX = "error:"  # reason prefix of a reject made from an exception the stage raised
DUPLICATE_KEY = "duplicate_key"  # reason of an input whose key came earlier in the same input


@dataclass
class StageStats:
    """What one stage saw and did: inputs, resumed skips, outputs, rejects per reason, errors, wall time."""

    stage: str
    inputs: int = 0  # records read from the input iterator
    skipped: int = 0  # finished in an earlier run, so not processed again
    processed: int = 0  # handed to the stage
    outputs: int = 0
    rejects: Counter[str] = field(default_factory=Counter)  # reason -> count (errors included)
    errors: int = 0  # exceptions raised by the stage, each also a reject "error:<Type>"
    wall_seconds: float = 0.0

    def add_reject(self, reason: str) -> None:
        """Count one reject; reasons starting with "error:" also count as errors."""
        self.rejects[reason] += 1
        if reason.startswith(ERROR_PREFIX):
            self.errors += 1

    def __add__(self, other: StageStats) -> StageStats:
        if not isinstance(other, StageStats):
            return NotImplemented
        if other.stage != self.stage:
            raise ValueError(f"cannot merge stats of stage {other.stage!r} into stage {self.stage!r}")
        return StageStats(
            stage=self.stage,
            inputs=self.inputs + other.inputs,
            skipped=self.skipped + other.skipped,
            processed=self.processed + other.processed,
            outputs=self.outputs + other.outputs,
            rejects=self.rejects + other.rejects,
            errors=self.errors + other.errors,
            wall_seconds=self.wall_seconds + other.wall_seconds,
        )

    def __radd__(self, other: object) -> StageStats:
        # Lets `sum(shard_stats)` work: sum() starts from 0.
        if other == 0:
            return self
        return NotImplemented

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary for manifest.json; reject reasons sorted."""
        return {
            "stage": self.stage,
            "inputs": self.inputs,
            "skipped": self.skipped,
            "processed": self.processed,
            "outputs": self.outputs,
            "rejects": {reason: self.rejects[reason] for reason in sorted(self.rejects)},
            "errors": self.errors,
            "wall_seconds": round(self.wall_seconds, 3),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StageStats:
        """The inverse of `to_dict`."""
        return cls(
            stage=data["stage"],
            inputs=int(data.get("inputs", 0)),
            skipped=int(data.get("skipped", 0)),
            processed=int(data.get("processed", 0)),
            outputs=int(data.get("outputs", 0)),
            rejects=Counter({str(k): int(v) for k, v in data.get("rejects", {}).items()}),
            errors=int(data.get("errors", 0)),
            wall_seconds=float(data.get("wall_seconds", 0.0)),
        )


def reject_counts(stats: Iterable[StageStats]) -> dict[tuple[str, str], int]:
    """Rejects counted per (stage, reason) over several stages, sorted, as the manifest reports them."""
    counts: Counter[tuple[str, str]] = Counter()
    for one in stats:
        for reason, count in one.rejects.items():
            counts[(one.stage, reason)] += count
    return {pair: counts[pair] for pair in sorted(counts)}

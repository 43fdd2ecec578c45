"""Which properties a Wikidata benchmark asks about and which kinds of entity its questions start from.

Read from the samples alone, so the card and `irbgen compare` show the same numbers: each Wikidata
sample's chain steps name their property (`predicate`): the last is the final hop asked, the others are
bridges; the first entity's kind is its instance-of class label (`SUBJECT_KIND` in the sample's
attributes.extra, set by the build; "(none)" when it has none). Samples from other sources are not
counted. Tables list the top `TOP` values by count (ties by name), then "other".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from irbgen.schema import Sample

SUBJECT_KIND = "subject_kind"  # attributes.extra key: the first entity's instance-of class label
NO_KIND = "(none)"
TOP = 10
OTHER = "other"


@dataclass
class PropertySpread:
    """Counts of final-hop properties, bridge properties and subject kinds over Wikidata samples."""

    samples: int = 0
    final: Counter[str] = field(default_factory=Counter)
    bridges: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, sample: Sample) -> None:
        """Count one sample if it comes from Wikidata and has a chain."""
        if sample.source != "wikidata" or not sample.chain:
            return
        self.samples += 1
        predicates = [step.predicate or NO_KIND for step in sample.chain]
        self.final[predicates[-1]] += 1
        self.bridges.update(predicates[:-1])
        self.kinds[str(sample.attributes.extra.get(SUBJECT_KIND) or NO_KIND)] += 1

    def parts(self) -> dict[str, tuple[Counter[str], int]]:
        """Each part's counts and the total its shares are of: "final hop" (of the samples), "bridges"
        (of the bridge hops), "subject kind" (of the samples)."""
        return {
            "final hop": (self.final, self.samples),
            "bridges": (self.bridges, sum(self.bridges.values())),
            "subject kind": (self.kinds, self.samples),
        }


def top_rows(counts: Counter[str], top: int = TOP) -> list[tuple[str, int]]:
    """The `top` largest counts (ties by name), then ("other", the rest) if any is left."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    rows = ranked[:top]
    rest = sum(count for _, count in ranked[top:])
    return rows + [(OTHER, rest)] if rest else rows


def share(count: int, total: int) -> str:
    """ "12 (24.0%)"; the count alone for an empty total."""
    return f"{count} ({100 * count / total:.1f}%)" if total else str(count)

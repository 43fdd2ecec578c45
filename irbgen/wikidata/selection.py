"""Which items a Wikidata read keeps: at least `--min-sitelinks` sitelinks, and in the `--entities` list.

A full dump does not fit in memory as a knowledge base, so a build reads a subset. The test runs on the
raw JSON of each line, before qwikidata parses it, so a dropped item costs little more than its
`json.loads`. Properties are always kept: every statement needs its property's label and datatype.
Chains only walk items that are kept, so the subset is a closed graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.io import write_atomic
from irbgen.listfile import read_list_file

_ENTITY_ID = re.compile(r"[QP][1-9][0-9]*")


@dataclass(frozen=True)
class EntityFilter:
    """Items to keep; an empty filter keeps everything."""

    min_sitelinks: int = 0
    ids: frozenset[str] | None = None  # keep only these items (None: any)

    def __post_init__(self) -> None:
        if self.min_sitelinks < 0:
            raise BadInputError(f"--min-sitelinks must be >= 0, got {self.min_sitelinks}")

    def reason(self, obj: dict[str, Any], kind: str | None) -> tuple[str, str] | None:
        """(reject reason, detail) for an item the filter drops, else None."""
        if kind != "item":
            return None
        if self.ids is not None and obj["id"] not in self.ids:
            return "not_listed", "not in the --entities file"
        if self.min_sitelinks:
            sitelinks = obj.get("sitelinks")
            count = len(sitelinks) if isinstance(sitelinks, dict) else 0
            if count < self.min_sitelinks:
                return "few_sitelinks", f"{count} sitelinks, fewer than {self.min_sitelinks}"
        return None


def load_entity_ids(path: str | Path) -> frozenset[str]:
    """Q- and P-ids, one per line; blank lines and lines starting with "#" are skipped."""
    ids: set[str] = set()
    for number, text in read_list_file(path, "the entity list"):
        if not _ENTITY_ID.fullmatch(text):
            raise BadInputError(f"{path}:{number}: {text[:40]!r} is not a Wikidata item or property id")
        ids.add(text)
    return frozenset(ids)


def write_entity_ids(path: Path, ids: list[str]) -> None:
    """Write ids one per line (atomically), in the order given."""
    write_atomic(path, (f"{entity_id}\n" for entity_id in ids))

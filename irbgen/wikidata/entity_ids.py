"""Entity and property ids as integers: "Q42" and "P31" encoded as int64 codes, found by binary search.

A code is `2 * n` for Qn and `2 * n + 1` for Pn; any other id (never in a real dump, possible in a
hand-written one) gets no code and is looked up in a small dict instead. `IdIndex` maps ids to the rows
of the base's entity table without one Python object per entity.
"""

from __future__ import annotations

import re

import numpy as np

NO_CODE = -1
_CANONICAL = re.compile(r"[QP][1-9][0-9]{0,17}")


def id_code(entity_id: str) -> int:
    """The id's int64 code, or NO_CODE for an id that is not Q<n> or P<n>."""
    if not _CANONICAL.fullmatch(entity_id):
        return NO_CODE
    return 2 * int(entity_id[1:]) + (entity_id[0] == "P")


class IdIndex:
    """Id -> row, from the codes of every row (sorted once) and the few ids without a code."""

    def __init__(self, codes: np.ndarray, others: dict[str, int]) -> None:
        self.codes = codes
        self.order = np.argsort(codes, kind="stable").astype(np.int64 if len(codes) >= 2**31 else np.int32)
        self.sorted_codes = codes[self.order]
        self.others = others

    def row(self, entity_id: str) -> int:
        """The id's row, or -1 when the base never met it."""
        code = id_code(entity_id)
        if code == NO_CODE:
            return self.others.get(entity_id, -1)
        at = int(np.searchsorted(self.sorted_codes, code))
        if at < len(self.sorted_codes) and self.sorted_codes[at] == code:
            return int(self.order[at])
        return -1

    def rows(self, codes: np.ndarray) -> np.ndarray:
        """Rows for an array of codes, -1 where absent (vectorised)."""
        at = np.searchsorted(self.sorted_codes, codes)
        at = np.minimum(at, max(len(self.sorted_codes) - 1, 0))
        if not len(self.sorted_codes):
            return np.full(len(codes), -1, dtype=np.int64)
        found = self.sorted_codes[at] == codes
        return np.where(found, self.order[at], -1)


def split_half(entity_id: str) -> str | None:
    """The half of a real-data split an item is in, by its Q-number: "tuning" when even, "test" when odd.

    Rules are written looking at the tuning half only; audits report the test half. None for anything
    but an item id (properties are never the subject of a question)."""
    if not _CANONICAL.fullmatch(entity_id) or entity_id[0] != "Q":
        return None
    return "tuning" if int(entity_id[1:]) % 2 == 0 else "test"

"""String tables for the columnar knowledge base: UTF-8 bytes in one blob, with int64 offsets.

A table is two arrays, so it is saved as two `.npy` files and memory-mapped back; string `i` is
`blob[offsets[i]:offsets[i + 1]]`. `StringTableBuilder` appends (optionally sharing repeated strings).
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np


def as_plain(array: np.ndarray) -> np.ndarray:
    """A memory-mapped array as a plain ndarray view of the same pages (its `base` keeps the map).

    `np.memmap` indexes through Python-level `__getitem__` and `__array_finalize__`; reading one
    element at a time, as record making does, cost about 5 µs a read that way.
    """
    return array.view(np.ndarray) if isinstance(array, np.memmap) else array


class StringTable:
    """Immutable strings by index, over a bytes blob and its offsets (either may be memory-mapped)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self.blob = blob
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.blob[start:end].tobytes().decode("utf-8")

    @property
    def nbytes(self) -> int:
        return int(self.blob.nbytes + self.offsets.nbytes)

    def save(self, directory: Path, name: str) -> None:
        np.save(directory / f"{name}.blob.npy", self.blob)
        np.save(directory / f"{name}.offsets.npy", self.offsets)

    @classmethod
    def load(cls, directory: Path, name: str, mmap: bool = True) -> StringTable:
        mode = "r" if mmap else None
        return cls(
            as_plain(np.load(directory / f"{name}.blob.npy", mmap_mode=mode)),
            as_plain(np.load(directory / f"{name}.offsets.npy", mmap_mode=mode)),
        )


class StringTableBuilder:
    """Appends strings to one growing blob; with `shared`, a string seen before gets its first index back."""

    def __init__(self, shared: bool = False) -> None:
        self._blob = bytearray()
        self._lengths = array("q")
        self._seen: dict[str, int] | None = {} if shared else None

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, text: str) -> int:
        """The index of `text` in the table."""
        if self._seen is not None:
            index = self._seen.get(text)
            if index is not None:
                return index
        data = text.encode("utf-8")
        index = len(self._lengths)
        self._blob += data
        self._lengths.append(len(data))
        if self._seen is not None:
            self._seen[text] = index
        return index

    def finish(self) -> StringTable:
        offsets = np.zeros(len(self._lengths) + 1, dtype=np.int64)
        np.cumsum(np.frombuffer(self._lengths, dtype=np.int64), out=offsets[1:])
        blob = np.frombuffer(self._blob, dtype=np.uint8)  # the blob itself, not a copy
        self._blob, self._lengths, self._seen = bytearray(), array("q"), None
        return StringTable(blob, offsets)

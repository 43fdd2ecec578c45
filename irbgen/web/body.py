"""Response bodies: removing a gzip or deflate Content-Encoding within size and ratio caps.

`BodyDecoder` takes wire bytes as they stream in and stops with a labelled `FetchFailure`
("too_large", "bad_encoding", "content_encoding:<name>") as soon as the decoded body passes max_bytes
or its decoded / wire ratio looks like a decompression bomb.
`FetchFailure` is defined here because the decoder raises it; the fetcher raises it too.
"""

from __future__ import annotations

import zlib
from typing import Any

RATIO_FLOOR = 1 << 20  # below this many decoded bytes the compression ratio is not checked


class FetchFailure(Exception):
    """A labelled failure inside the fetcher (and from BodyDecoder); `fetch` turns it into an outcome."""

    def __init__(self, label: str, detail: str = "") -> None:
        super().__init__(f"{label}: {detail}")
        self.label = label
        self.detail = detail


class BodyDecoder:
    """Removes a Content-Encoding incrementally without ever holding more than max_bytes of output."""

    def __init__(self, encoding: str, max_bytes: int, max_ratio: float) -> None:
        self.encoding = encoding.strip().lower()
        self.max_bytes = max_bytes
        self.max_ratio = max_ratio
        self.wire = 0
        self.size = 0
        self._parts: list[bytes] = []
        self._d: Any = None
        self._started = False
        if self.encoding in ("gzip", "x-gzip"):
            self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.encoding == "deflate":
            self._d = zlib.decompressobj()  # zlib-wrapped; raw deflate is tried on the first error
        elif self.encoding not in ("", "identity"):
            raise FetchFailure(f"content_encoding:{self.encoding}", "unsupported Content-Encoding")

    def _limit(self) -> int:
        """How many more decoded bytes may be produced (plus one, to detect the overflow)."""
        ratio_cap = max(RATIO_FLOOR, int(self.max_ratio * self.wire)) if self.max_ratio else self.max_bytes
        return max(1, min(self.max_bytes, ratio_cap) - self.size + 1)

    def _append(self, out: bytes) -> None:
        self.size += len(out)
        if self.size > self.max_bytes:
            raise FetchFailure("too_large", f"decoded body over {self.max_bytes} bytes")
        if self.max_ratio and self.size > RATIO_FLOOR and self.size > self.max_ratio * self.wire:
            raise FetchFailure("too_large", f"decompression ratio over {self.max_ratio:g}")
        if out:
            self._parts.append(out)

    def feed(self, data: bytes) -> None:
        """Take the next wire bytes; raise FetchFailure("too_large") as soon as a cap is passed."""
        self.wire += len(data)
        if self.wire > self.max_bytes:
            raise FetchFailure("too_large", f"body over {self.max_bytes} bytes")
        if self._d is None:
            self._append(data)
            return
        while data:
            try:
                out = self._d.decompress(data, self._limit())
            except zlib.error as exc:
                if self.encoding == "deflate" and not self._started:
                    self._started = True
                    self._d = zlib.decompressobj(-zlib.MAX_WBITS)
                    continue
                raise FetchFailure("bad_encoding", str(exc)) from exc
            self._started = True
            self._append(out)
            data = self._d.unconsumed_tail
            if self._d.eof:
                rest = self._d.unused_data
                if rest and self.encoding in ("gzip", "x-gzip") and rest[:2] == b"\x1f\x8b":
                    self._d = zlib.decompressobj(16 + zlib.MAX_WBITS)  # another gzip member
                    data = rest
                else:
                    break  # trailing bytes after the stream are ignored, as browsers do

    def finish(self) -> bytes:
        """The decoded body; a stream cut short yields what was decoded so far."""
        if self._d is not None and not self._d.eof:
            try:
                self._append(self._d.flush(self._limit()))
            except zlib.error as exc:
                raise FetchFailure("bad_encoding", str(exc)) from exc
        return b"".join(self._parts)

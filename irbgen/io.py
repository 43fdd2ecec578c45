"""Atomic file writes: a temporary file beside the target, then a rename, so a reader never sees half."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path


@functools.cache
def _file_mode() -> int:
    """The mode open() gives a new file under this process's umask (mkstemp's own is 0600)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write DATA (text is written as UTF-8) to PATH atomically; the temporary file never stays behind."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""Atomic file writes, the one way irbgen writes a whole file: a temporary file beside the target, then a
rename, so a reader never sees half of it.

The temporary file is `.NAME.XXXXXXXX.tmp` in the target's folder (`rundir.remove_stale_temps` knows the
name); it never stays behind when the write fails. With `durable=True` the file is fsynced before the
rename and the folder after it, so the new content survives a power loss, not only a kill.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from irbgen.errors import BadInputError, redact

__all__ = [
    "atomic_path",
    "json_text",
    "manifest_text",
    "move_file",
    "write_atomic",
    "write_json",
    "write_jsonl",
    "write_manifest",
]


@functools.cache
def _file_mode() -> int:
    """The mode open() gives a new file under this process's umask (mkstemp's own is 0600)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def _sync(path: Path) -> None:
    """fsync a file or a folder by name (any descriptor of it will do)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_path(path: Path, *, durable: bool = False) -> Iterator[Path]:
    """A temporary path beside PATH for any writer to fill (it exists, empty); it replaces PATH when the
    block ends, and is removed when the block fails."""
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    tmp = Path(name)
    try:
        os.fchmod(fd, _file_mode())
        os.close(fd)
        yield tmp
        if durable:
            _sync(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if durable:
        _sync(path.parent)


def write_atomic(
    path: Path, data: bytes | str | Iterable[str] | Iterable[bytes], *, durable: bool = False
) -> None:
    """Write DATA to PATH atomically: bytes, text (UTF-8, newlines as given) or an iterable of either,
    which is streamed (the lines of a file too large to hold)."""
    with atomic_path(path, durable=durable) as tmp, open(tmp, "wb") as handle:
        if isinstance(data, bytes | str):
            data = (data,)
        for chunk in data:
            handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        handle.flush()


def move_file(source: Path, target: Path) -> bool:
    """Move a finished file to TARGET (replacing it) by renaming it; False, and SOURCE left where it
    is, when the two are on different file systems."""
    try:
        os.replace(source, target)
    except OSError as error:
        if error.errno == errno.EXDEV:
            return False
        raise
    return True


def json_text(data: Any, *, sort_keys: bool = False) -> str:
    """DATA as irbgen writes a JSON file: indented by 2, UTF-8 as is, one final newline.

    ValueError for NaN or Infinity (not JSON), TypeError for a value JSON has no type for.
    """
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=sort_keys, allow_nan=False) + "\n"


def manifest_text(data: Any) -> str:
    """A manifest's JSON text: json_text with every key given inside a URL (https://u:KEY@host) redacted,
    so no manifest ever carries one."""
    return redact(json_text(data))


def write_json(path: Path, data: Any, *, sort_keys: bool = False, durable: bool = False) -> None:
    """Write DATA (a dict, a list or a pydantic model) as a JSON file (see json_text), atomically."""
    text = _encoded(path, data, lambda value: json_text(value, sort_keys=sort_keys))
    write_atomic(path, text, durable=durable)


def write_manifest(path: Path, data: Any) -> None:
    """Write a manifest (a dict or a pydantic model) as JSON, atomically, with keys in URLs redacted."""
    write_atomic(path, _encoded(path, data, manifest_text))


def _encoded(path: Path, data: Any, encode: Callable[[Any], str]) -> str:
    try:
        return encode(data.model_dump(mode="json") if isinstance(data, BaseModel) else data)
    except (TypeError, ValueError) as error:  # NaN, a value of no JSON type, a failed model dump
        raise BadInputError(f"{path}: cannot be written as JSON: {error}") from None


def json_line(record: BaseModel | dict[str, Any]) -> str:
    """One record as a line of a JSONL file writes it (without the newline): a pydantic record's JSON-mode
    dump, UTF-8 as is."""
    if isinstance(record, BaseModel):
        record = record.model_dump(mode="json")
    return json.dumps(record, ensure_ascii=False)


def write_jsonl(path: Path, records: Iterable[BaseModel | dict[str, Any]], *, durable: bool = False) -> int:
    """Write one JSON object a line (pydantic records or dicts, streamed), atomically; how many."""
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for record in records:
            yield json_line(record) + "\n"
            count += 1

    write_atomic(path, lines(), durable=durable)
    return count

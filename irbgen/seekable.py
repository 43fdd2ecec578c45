"""Seekable reading of compressed dumps, so that k shards each decompress only their own part.

`.gz` is read through rapidgzip and `.bz2` through indexed_bzip2 (the `wikidata` and `wikipedia`
extras): Wikidata's JSON dumps and Wikipedia's XML exports.
Both need an index of the file (deflate windows, bzip2 block offsets) to seek to an uncompressed byte
offset; `build_index` makes it once, with every core, and saves it in a folder beside the run
(`<dump name>.gzindex` / `<dump name>.bz2index.npz`), so a rerun and every shard reuse it.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO

import numpy as np

from irbgen.errors import BadInputError

INDEX_FOLDER = "dump-index"  # where a build saves them, in the folder its workers read (worker_files)
BUFFER = 1 << 22  # bytes read from rapidgzip at a time: its readline costs about 40 ms a line


def is_seekable_format(path: Path | str) -> bool:
    """Whether the dump is compressed in a format with a seekable reader (gzip or bzip2)."""
    name = Path(path).name.lower()
    return name.endswith(".gz") or name.endswith(".bz2")


def index_path(path: Path | str, index_dir: Path | str) -> Path:
    """Where the dump's index is saved in `index_dir`."""
    name = Path(path).name
    suffix = ".gzindex" if name.lower().endswith(".gz") else ".bz2index.npz"
    return Path(index_dir) / f"{name}{suffix}"


def _modules():
    try:
        import indexed_bzip2
        import rapidgzip
    except ImportError as exc:  # pragma: no cover - the extra is installed in CI
        raise BadInputError(
            "sharded reading of a compressed dump needs rapidgzip and indexed_bzip2: "
            "pip install 'irbgen[wikipedia]' (or 'irbgen[wikidata]')"
        ) from exc
    return rapidgzip, indexed_bzip2


def open_seekable(path: Path | str, index: Path | None = None, parallelization: int = 1) -> IO[bytes]:
    """The dump opened for seeking, with its saved index when there is one (use it in a with-block)."""
    rapidgzip, indexed_bzip2 = _modules()
    path = Path(path)
    if path.name.lower().endswith(".gz"):
        handle = rapidgzip.open(str(path), parallelization=parallelization)
        if index is not None and index.is_file():
            handle.import_index(str(index))
            return io.BufferedReader(handle, buffer_size=BUFFER)  # its own readline is very slow
        return handle
    handle = indexed_bzip2.open(str(path), parallelization=parallelization)
    if index is not None and index.is_file():
        with np.load(index) as saved:
            handle.set_block_offsets(dict(zip(saved["bits"].tolist(), saved["bytes"].tolist(), strict=True)))
    return handle


def build_index(
    path: Path | str, index_dir: Path | str, parallelization: int | None = None
) -> tuple[Path, int]:
    """The dump's saved index (built and saved when missing) and its uncompressed size in bytes."""
    target = index_path(path, index_dir)
    size_file = target.with_name(target.name + ".size")
    if target.is_file() and size_file.is_file():
        return target, int(size_file.read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    cores = parallelization or os.cpu_count() or 1
    partial = target.with_name(target.name + ".partial")
    try:
        with open_seekable(path, None, cores) as handle:
            size = handle.seek(0, os.SEEK_END)  # decompresses the whole file once, with every core
            if target.name.endswith(".gzindex"):
                handle.export_index(str(partial))
            else:
                offsets = handle.block_offsets()
                bits, starts = np.fromiter(offsets, np.int64), np.fromiter(offsets.values(), np.int64)
                with partial.open("wb") as out:
                    np.savez(out, bits=bits, bytes=starts)
    except (ValueError, RuntimeError, EOFError) as exc:  # the decompressors' errors on a broken file
        raise BadInputError(f"{path}: cannot decompress it to index it (corrupt or cut?): {exc}") from exc
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read it to index it: {exc}") from exc
    partial.replace(target)
    size_file.write_text(str(size))
    return target, size


def seekable_opener(path: Path | str, index: Path | None) -> Callable[[], AbstractContextManager[IO[bytes]]]:
    """A function that opens the dump with its index, for one shard (one decompression thread)."""
    return lambda: open_seekable(path, index, 1)

"""A knowledge base saved beside the run: built once from the read stage, memory-mapped afterwards.

`saved_base(directory, source, entities)` maps the base saved in `directory` when its `meta.json`
records the same `source` (what the base was read from: dump files with size and mtime, filters,
entity count); otherwise it builds the base from `entities()`, saves it, and maps the saved copy, so
the records it was built from are freed.
"""

from __future__ import annotations

import gc
import logging
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from irbgen.wikidata.columns import read_meta
from irbgen.wikidata.knowledge import KnowledgeBase

logger = logging.getLogger(__name__)


def file_identity(path: Path | str | None) -> list[Any] | None:
    """A file's name, size and modification time: enough to tell a changed dump."""
    if path is None:
        return None
    stat = Path(path).stat()
    return [Path(path).name, stat.st_size, stat.st_mtime_ns]


def saved_base(
    directory: Path,
    source: dict[str, Any],
    entities: Callable[[], Iterable[Any]],
    properties: Callable[[], Iterable[Any]] = lambda: (),
    table: Callable[[], Iterable[Any]] = lambda: (),
) -> KnowledgeBase:
    """The base saved for `source`, else one built from `entities()`, `properties()` and the property
    table's rows `table()`, and saved."""
    meta = read_meta(directory)
    if meta is not None and meta.get("source") == source:
        logger.info("%s: mapping the saved knowledge base", directory.name)
        return KnowledgeBase.load(directory)
    started = time.perf_counter()
    if directory.exists():
        shutil.rmtree(directory)
    was_enabled = gc.isenabled()
    gc.disable()  # the builder allocates only objects that live until it finishes
    try:
        built = KnowledgeBase(entities(), properties(), table=table())
    finally:
        if was_enabled:
            gc.enable()
    built.save(directory, {"source": source})
    del built
    kb = KnowledgeBase.load(directory)
    columns, seconds = kb.columns, time.perf_counter() - started
    logger.info(
        "%s: %d statements, %d entities, %.1f bytes/statement resident (+%.1f in strings), built in %.1f s",
        directory.name, columns.statement_count, len(columns.order),
        columns.resident_bytes() / max(columns.statement_count, 1),
        columns.string_bytes() / max(columns.statement_count, 1), seconds,
    )  # fmt: skip
    return kb

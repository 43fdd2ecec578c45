"""An on-disk cache of model replies: one SQLite file, keyed by model + messages + parameters.

Only successful replies are stored, so a rerun repeats exactly the calls that failed. The file holds
the request hash, the model name, the reply text and its token usage; never a key or a header.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError, IrbgenError
from irbgen.llm.types import Usage

CACHE_FILENAME = "llm-cache.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(model: str, messages: list[dict[str, Any]], parameters: dict[str, Any]) -> str:
    """The sha256 of the canonical JSON of {model, messages, parameters}."""
    canonical = json.dumps(
        {"model": model, "messages": messages, "parameters": parameters},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedReply:
    """A stored reply: its text and the tokens it cost when it was made."""

    text: str
    usage: Usage
    model: str


class ResponseCache:
    """Replies in `cache_dir/llm-cache.sqlite` (WAL mode); opened on first use, safe from one event loop."""

    def __init__(self, cache_dir: Path | str) -> None:
        self.path = Path(cache_dir) / CACHE_FILENAME
        self._connection: sqlite3.Connection | None = None
        # One connection shared by worker threads: every use is serialized by this lock, so reads and
        # writes from concurrent coroutines never interleave on it.
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def _connect(self) -> sqlite3.Connection:
        if self._connection is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                connection = sqlite3.connect(self.path, check_same_thread=False, timeout=30.0)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_SCHEMA)
                connection.commit()
            except sqlite3.DatabaseError as error:
                raise BadInputError(f"{self.path}: cannot open the LLM cache: {error}") from error
            self._connection = connection
        return self._connection

    def get_sync(self, key: str) -> CachedReply | None:
        """The stored reply for `key`, or None (blocking)."""
        sql = "SELECT text, prompt_tokens, completion_tokens, model FROM replies WHERE key = ?"
        with self._lock:
            try:
                row = self._connect().execute(sql, (key,)).fetchone()
            except sqlite3.Error as error:
                raise IrbgenError(f"{self.path}: cannot read the LLM cache: {error}") from error
        if row is None:
            return None
        return CachedReply(text=row[0], usage=Usage(row[1], row[2]), model=row[3])

    def put_sync(self, key: str, model: str, text: str, usage: Usage) -> None:
        """Store a successful reply under `key`, replacing any older one (blocking)."""
        row = (key, model, text, usage.prompt_tokens, usage.completion_tokens, time.time())
        with self._lock:
            connection = self._connect()
            try:
                connection.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?, ?)", row)
                connection.commit()
            except sqlite3.Error as error:
                raise IrbgenError(f"{self.path}: cannot write the LLM cache: {error}") from error

    async def get(self, key: str) -> CachedReply | None:
        """The stored reply for `key`, or None; the disk read runs off the event loop."""
        return await asyncio.to_thread(self.get_sync, key)

    async def put(self, key: str, model: str, text: str, usage: Usage) -> None:
        """Store a successful reply; writes are serialized and run off the event loop."""
        await asyncio.to_thread(self.put_sync, key, model, text, usage)

    def __len__(self) -> int:
        with self._lock:
            return self._connect().execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        """Close the database file (it is reopened on next use)."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None

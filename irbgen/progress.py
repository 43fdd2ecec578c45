"""Progress reports: progress(stage, done, total or None), and the callback that reports nothing."""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int | None], None]


def silent(stage: str, done: int, total: int | None) -> None:
    """The progress callback that reports nothing."""

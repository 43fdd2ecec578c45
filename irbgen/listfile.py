"""Files that list one item a line (titles, entity ids): the one reader every such option uses."""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable
from pathlib import Path

from irbgen.errors import BadInputError


def read_list_file(path: str | Path | Traversable, what: str) -> list[tuple[int, str]]:
    """(line number, stripped line) for each item; blank lines and lines starting with "#" are skipped.

    `what` names the list in the error raised when the file cannot be read ("titles", "the entity list").
    """
    path = Path(path) if isinstance(path, str | os.PathLike) else path  # else a file irbgen ships
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInputError(f"{path}: cannot read {what}: {error}") from None
    items = ((number, line.strip()) for number, line in enumerate(lines, start=1))
    return [(number, text) for number, text in items if text and not text.startswith("#")]

"""Settings files: the TOML file a command's `--config` names, between the built-in defaults and the flags.

A file holds a table per command, `[phantom]`, `[wikipedia-dump]` or `[wikidata-dump]` (the build's
--source), whose keys are the command's flags with underscores (`per_host` for --per-host); one file may
hold several. Settings apply in this order, each over the one before: the config model's defaults, the
file's table, then the flags given on the command line. A value must have the field's own TOML type (a
number for a number, true or false for a switch; a TOML date is read as its ISO text); anything else,
an unknown key or table, or a missing table is one line naming the file and the key (exit 2).
"""

from __future__ import annotations

import datetime
import json
import tomllib
from collections.abc import Collection
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from irbgen.errors import BadInputError

M = TypeVar("M", bound=BaseModel)
TABLES = ("phantom", "wikipedia-dump", "wikidata-dump")  # every command's table: one file may hold them all


def read_settings(path: Path, table: str, model: type[BaseModel], tables: Collection[str] = TABLES) -> dict:
    """The [TABLE] of the TOML file PATH, each key a field of MODEL with a value of its type."""
    document = _read_toml(Path(path))
    for key in document:
        if key not in tables:
            raise BadInputError(f"{path}: unknown key {key!r} (the tables are {', '.join(tables)})")
    if table not in document:
        raise BadInputError(f"{path}: no [{table}] table")
    values = document[table]
    if not isinstance(values, dict):
        raise BadInputError(f"{path}: [{table}] must be a table")
    values = json.loads(json.dumps(values, default=_iso))  # TOML dates and times as their ISO text
    for key in values:
        if key not in model.model_fields:
            raise BadInputError(f"{path}: unknown key {key!r} in [{table}]")
    try:  # strict: "2" is not a number, "yes" not a switch; a field the file leaves out is no error
        model.model_validate_json(json.dumps(values), strict=True)
    except ValidationError as error:
        problems = [item for item in error.errors() if item["type"] != "missing" and item["loc"]]
        if problems:
            where = ".".join(str(part) for part in problems[0]["loc"])
            raise BadInputError(f"{path}: {where}: {problems[0]['msg']}") from None
    return values


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BadInputError(f"{path}: cannot read config ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise BadInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise BadInputError(f"{path}: not valid TOML ({error})") from None


def _iso(value: Any) -> str:
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not a TOML value")


def load_settings(model: type[M], path: Path | None, table: str, flags: dict[str, Any]) -> M:
    """MODEL from its defaults, then the [TABLE] of the file PATH (if given), then FLAGS (those given)."""
    from_file = read_settings(path, table, model) if path is not None else {}
    try:
        return model(**{**from_file, **flags})
    except ValidationError as error:
        raise BadInputError(describe(error, path, set(from_file) - set(flags))) from None


def describe(error: ValidationError, path: Path | None = None, from_file: Collection[str] = ()) -> str:
    """The first problem of a config model, named as the user wrote it: FILE: key for a value the file
    PATH set (the keys FROM_FILE), else the flag."""
    first = error.errors()[0]
    if not first["loc"]:
        return first["msg"]
    field = str(first["loc"][0])
    if field in from_file:
        return f"{path}: {'.'.join(str(part) for part in first['loc'])}: {first['msg']}"
    return f"--{field.replace('_', '-')}: {first['msg']}"

"""Settings of a synthetic world and its questions, with defaults from PhantomWiki's benchmark runs."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from irbgen.errors import BadInputError


class PhantomConfig(BaseModel):
    """Everything that decides a phantom benchmark; together with the vocabulary it fixes the output."""

    model_config = ConfigDict(extra="forbid")

    n: int = Field(500, ge=1, le=10_000_000, description="number of people in the world")
    seed: int = Field(0, ge=0, description="drives every random choice")
    depth: int = Field(20, ge=1, description="recursion depth of the question grammar")
    questions_per_template: int = Field(10, ge=1, le=10_000_000)
    tree_size: int = Field(50, ge=1, le=10_000_000, description="maximum people per family tree")
    tree_depth: int = Field(
        20, ge=0, le=100_000, description="maximum generations in a family tree, minus one"
    )
    max_children: int = Field(5, ge=0, le=10_000, description="maximum children per couple")
    friendship_k: float = Field(
        3.0, ge=0, le=10_000_000, description="mean friends per person (Erdos-Renyi p = k / n)"
    )
    duplicate_names: bool = False
    easy_mode: bool = Field(False, description="sample only relations of difficulty 1 (and friend)")
    sampling_attempts: int = Field(
        200, ge=1, le=1_000_000, description="random-walk attempts per wanted question"
    )


def _describe(error: ValidationError, flags: dict[str, Any], path: Path | None) -> str:
    """The first problem, named as the user wrote it: the flag, or the key of the --config file."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "config"
    if where in flags or path is None:
        where = "--" + where.replace("_", "-")
    else:
        where = f"{path}: {where}"
    return f"{where}: {first['msg']}"


def load_config(path: Path | None, overrides: dict[str, Any]) -> PhantomConfig:
    """Defaults, then the [phantom] table of a TOML file, then `overrides` (the flags given)."""
    values: dict[str, Any] = {}
    if path is not None:
        try:
            document = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as error:
            raise BadInputError(f"{path}: cannot read config ({error.strerror})") from error
        except UnicodeDecodeError as error:
            raise BadInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        except tomllib.TOMLDecodeError as error:
            raise BadInputError(f"{path}: not valid TOML ({error})") from error
        table = document.get("phantom", {})
        if not isinstance(table, dict):
            raise BadInputError(f"{path}: [phantom] must be a table")
        values.update(table)
    flags = {key: value for key, value in overrides.items() if value is not None}
    values.update(flags)
    try:
        return PhantomConfig(**values)
    except ValidationError as error:
        raise BadInputError(_describe(error, flags, path)) from None

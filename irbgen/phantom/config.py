"""Settings of a synthetic world and its questions, with defaults from PhantomWiki's benchmark runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from irbgen.configfile import load_settings


class PhantomConfig(BaseModel):
    """Everything that decides a phantom benchmark; together with the vocabulary it fixes the output."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # inf and nan: refused, naming the option

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


def load_config(path: Path | None, overrides: dict[str, Any]) -> PhantomConfig:
    """Defaults, then the [phantom] table of a TOML file, then `overrides` (the flags given)."""
    flags = {key: value for key, value in overrides.items() if value is not None}
    return load_settings(PhantomConfig, path, "phantom", flags)

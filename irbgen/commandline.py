"""The command line that reproduces a benchmark: its generator's command with every non-default option.

Manifests record input files by the relative path they were given as, so the command runs in the folder
the first build ran in; a path given in full is recorded by its file name alone, so a manifest never
holds a local absolute path. The command writes to OUT (phantom) or RUN (builds).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel

# source -> (command, output placeholder, "module:Config" whose defaults the command leaves out)
COMMANDS = {
    "phantom": ("irbgen phantom", "OUT", "irbgen.phantom.config:PhantomConfig"),
    "wikipedia": (
        "irbgen build --source wikipedia-dump", "RUN", "irbgen.builds.wikipedia:WikipediaBuildConfig"
    ),
    "wikidata": ("irbgen build --source wikidata-dump", "RUN", "irbgen.builds.wikidata:WikidataBuildConfig"),
}
_UNSET = object()  # a field without a default: always written


def _defaults(path: str) -> dict[str, Any]:
    import importlib

    module, name = path.split(":")
    model: type[BaseModel] = getattr(importlib.import_module(module), name)
    return {
        key: field.get_default(call_default_factory=True) if not field.is_required() else _UNSET
        for key, field in model.model_fields.items()
    }


def _flags(name: str, value: Any) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if value is True:
        return [flag]
    if value is False:  # only when the default is on
        return ["--no-" + name.replace("_", "-")]
    if isinstance(value, list):
        return [part for item in value for part in (flag, str(item))]
    return [flag, str(value)]


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, float | int) and isinstance(default, float | int) and not isinstance(value, bool):
        return float(value) == float(default)
    if isinstance(default, tuple):
        default = list(default)
    return value == default


def recorded_path(path: str | Path) -> str:
    """An input file as a manifest records it: a relative path as given, an absolute one by its name."""
    path = Path(path)
    return path.name if path.is_absolute() else path.as_posix()


def base_command(source: str) -> str | None:
    """The generator's command without options ("irbgen build --source wikipedia-dump"), if known."""
    return COMMANDS[source][0] if source in COMMANDS else None


def reproducing_command(source: str, config: dict[str, Any]) -> str | None:
    """The command that rebuilds a benchmark of SOURCE from its recorded CONFIG; None for other sources.

    Builders that know only their bare command (see base_command) get this one from write_benchmark.
    """
    if source not in COMMANDS:
        return None
    command, out, model = COMMANDS[source]
    defaults = _defaults(model)
    words = shlex.split(command)
    for name, value in config.items():
        if name not in defaults:  # a recorded value that is not an option (a count, a version)
            continue
        default = defaults[name]
        if value is None or _same(value, default):
            continue
        words += _flags(name, value)
    return shlex.join([*words, "--out", out])

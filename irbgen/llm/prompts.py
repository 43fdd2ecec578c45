"""Prompt files: one TOML file per prompt, `<name>.toml`, with a name, a version and templates.

    name = "keypoints"
    version = "1"
    description = "Split a citing sentence into atomic keypoints."
    output = "Keypoints"            # optional: a pydantic model the caller registers under this name
    system = "You extract ..."      # sent as is
    user = "Sentence: {sentence}"   # {placeholders} filled by str.format_map; write {{ }} for braces

Placeholders are plain names. The system text is not formatted, so it may hold JSON examples freely.
irbgen's own prompts are in irbgen/resources/prompts/; every loader also takes a folder of one's own.
"""

from __future__ import annotations

import os
import re
import string
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from importlib.resources.abc import Traversable
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel

from irbgen.errors import BadInputError
from irbgen.resources import resource_dir
from irbgen.schema import PromptRef

PROMPT_SUFFIX = ".toml"
REQUIRED_KEYS = ("name", "version", "description", "system", "user")
OPTIONAL_KEYS = ("output",)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def default_prompt_dir() -> Traversable:
    """irbgen's own prompts: irbgen/resources/prompts, as installed."""
    return resource_dir("prompts")


def _folder(directory: Path | str | Traversable | None) -> Path | Traversable:
    if directory is None:
        return default_prompt_dir()
    return Path(directory) if isinstance(directory, str | os.PathLike) else directory


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt: metadata, templates and (if resolved) the pydantic model of its output."""

    name: str
    version: str
    description: str
    system: str
    user: str
    path: Path | Traversable
    placeholders: tuple[str, ...]  # in order of first use in `user`
    output: str | None = None
    output_model: type[BaseModel] | None = None

    @property
    def ref(self) -> PromptRef:
        """The name and version recorded in a sample's provenance."""
        return PromptRef(name=self.name, version=self.version)

    def render(self, **values: Any) -> list[dict[str, str]]:
        """The chat messages with every {placeholder} filled; a missing value raises BadInputError."""
        missing = [name for name in self.placeholders if name not in values]
        if missing:
            names = ", ".join("{" + name + "}" for name in missing)
            raise BadInputError(f"{self.path}: prompt {self.name!r} needs a value for {names}")
        try:
            user = self.user.format_map(values)
        except (ValueError, TypeError) as error:
            raise BadInputError(f"{self.path}: prompt {self.name!r} cannot be filled: {error}") from error
        messages = [{"role": "system", "content": self.system}] if self.system else []
        messages.append({"role": "user", "content": user})
        return messages

    def resolve_output(self, models: Mapping[str, type[BaseModel]]) -> type[BaseModel] | None:
        """The output model named by this prompt, looked up in `models` (None for free text)."""
        if self.output is None:
            return None
        model = models.get(self.output)
        if model is None:
            known = ", ".join(sorted(models)) or "none"
            raise BadInputError(
                f"{self.path}: output model {self.output!r} is not registered (registered: {known})"
            )
        return model


def _placeholders(template: str, path: Path | Traversable) -> tuple[str, ...]:
    names: list[str] = []
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
    except ValueError as error:
        hint = "write {{ }} for literal braces"
        raise BadInputError(f"{path}: 'user' is not a valid template ({error}); {hint}") from error
    for field in fields:
        if not field.isidentifier():
            raise BadInputError(
                f"{path}: placeholder {{{field}}} in 'user' must be a plain name (no index, attribute "
                "or position); write {{ }} for literal braces"
            )
        if field not in names:
            names.append(field)
    return tuple(names)


def parse_prompt(data: Mapping[str, Any], path: Path | Traversable) -> Prompt:
    """Check a prompt file's table and build the Prompt; errors name the file."""
    unknown = sorted(set(data) - set(REQUIRED_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        allowed = ", ".join(sorted(REQUIRED_KEYS + OPTIONAL_KEYS))
        raise BadInputError(f"{path}: unknown key(s) {', '.join(unknown)} (allowed: {allowed})")
    missing = [key for key in REQUIRED_KEYS if key not in data]
    if missing:
        raise BadInputError(f"{path}: missing key(s) {', '.join(missing)}")
    for key in (*REQUIRED_KEYS, *OPTIONAL_KEYS):
        if key in data and not isinstance(data[key], str):
            hint = ' (quote it: version = "1")' if key == "version" else ""
            raise BadInputError(f"{path}: {key!r} must be a string{hint}")
    stem = PurePath(path.name).stem
    if data["name"] != stem:
        raise BadInputError(f"{path}: name {data['name']!r} does not match the file name {stem!r}")
    if not data["version"].strip():
        raise BadInputError(f"{path}: 'version' is empty")
    output = data.get("output")
    if output is not None and not output.isidentifier():
        raise BadInputError(f"{path}: 'output' must name a model, got {output!r}")
    return Prompt(
        name=data["name"],
        version=data["version"],
        description=data["description"],
        system=data["system"],
        user=data["user"],
        path=path,
        placeholders=_placeholders(data["user"], path),
        output=output,
    )


def list_prompts(directory: Path | str | Traversable | None = None) -> list[str]:
    """The names of the prompts in `directory` (default: irbgen's own), sorted."""
    folder = _folder(directory)
    if not folder.is_dir():
        return []
    files = [path.name for path in folder.iterdir() if path.name.endswith(PROMPT_SUFFIX)]
    names = (name.removesuffix(PROMPT_SUFFIX) for name in files)
    return sorted(name for name in names if _NAME.match(name))


def load_prompt(
    name: str,
    directory: Path | str | Traversable | None = None,
    *,
    models: Mapping[str, type[BaseModel]] | None = None,
) -> Prompt:
    """Load `<directory>/<name>.toml`; with `models`, also resolve the output model it names."""
    folder = _folder(directory)
    if not _NAME.match(name):
        raise BadInputError(f"bad prompt name {name!r}: use letters, digits, '_', '-' and '.'")
    path = folder / f"{name}{PROMPT_SUFFIX}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        available = ", ".join(list_prompts(folder)) or "none"
        raise BadInputError(f"{path}: no such prompt file (prompts in {folder}: {available})") from None
    except OSError as error:
        raise BadInputError(f"{path}: cannot read the prompt file: {error}") from error
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise BadInputError(f"{path}: not UTF-8 text: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise BadInputError(f"{path}: invalid TOML: {error}") from error
    prompt = parse_prompt(data, path)
    if models is not None:
        prompt = replace(prompt, output_model=prompt.resolve_output(models))
    return prompt

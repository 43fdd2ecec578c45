"""The Wikidata word lists in irbgen/resources/wikidata/: property wording, unit names, denied properties.

- `properties.toml`: per property how a question asks for it, and its English label where the property
  table `properties.tsv` (`irbgen.wikidata.property_table`) has none (see the file's head);
- `units.tsv`: how an answer names a quantity's unit ("square kilometres", "km²");
- `denied_properties.txt`: meta and maintenance properties that never make a question;
- `trivial_properties.txt`: properties whose answer is easy to guess (sex or gender), capped in chains;
- `changing_properties.txt`: properties whose value changes over time, asked only at a date
  (`irbgen.wikidata.dating`).

Each loader takes the folder, so a test or a user can point it at their own copy.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path

from irbgen.errors import BadInputError
from irbgen.listfile import read_list_file
from irbgen.resources import resource_dir

DEFAULT_DATA_DIR = resource_dir("wikidata")  # irbgen/resources/wikidata, as installed
PROPERTIES_FILE = "properties.toml"
PROPERTY_TABLE_FILE = "properties.tsv"  # read by irbgen.wikidata.property_table
UNITS_FILE = "units.tsv"
DENIED_FILE = "denied_properties.txt"
TRIVIAL_FILE = "trivial_properties.txt"
CHANGING_FILE = "changing_properties.txt"
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")
_FIELDS = {"label", "phrase", "question", "event", "text", "any_language"}


@dataclass(frozen=True)
class Wording:
    """How questions ask for one property's value; {x} is the subject."""

    label: str = ""  # only where properties.tsv has none
    phrase: str = ""  # "the capital of {x}"
    question: str = ""  # "What is the capital of {x}?"
    event: str = ""  # dates: "was {x} founded"
    text: bool = False  # a string or monolingual value may be an answer
    any_language: bool = False  # a monolingual answer may be in any language (a native name); else English


@dataclass(frozen=True)
class Unit:
    """A quantity unit as answers write it."""

    singular: str
    plural: str
    symbol: str = ""


def _folder(folder: Path | str | Traversable) -> Path | Traversable:
    return Path(folder) if isinstance(folder, str | os.PathLike) else folder


def _check_wording(pid: str, fields: dict, path: Path | Traversable) -> Wording:
    unknown = set(fields) - _FIELDS
    if not _PROPERTY_ID.fullmatch(pid) or unknown or not isinstance(fields.get("label", ""), str):
        detail = f"needs a P-id name and a text label if any; unknown fields {sorted(unknown)}"
        raise BadInputError(f"{path}: [{pid}] {detail}")
    for name in ("phrase", "question", "event"):
        if fields.get(name) and "{x}" not in fields[name]:
            raise BadInputError(f"{path}: [{pid}] {name} has no {{x}}: {fields[name]!r}")
    return Wording(**fields)


@cache
def load_wordings(folder: Path | Traversable = DEFAULT_DATA_DIR) -> dict[str, Wording]:
    """P-id -> Wording from properties.toml."""
    path = _folder(folder) / PROPERTIES_FILE
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise BadInputError(f"{path}: cannot read the property wording: {error}") from None
    return {pid: _check_wording(pid, fields, path) for pid, fields in table.items()}


@cache
def load_units(folder: Path | Traversable = DEFAULT_DATA_DIR) -> dict[str, Unit]:
    """Q-id -> Unit from units.tsv (tab-separated: id, singular, plural, symbol)."""
    path = _folder(folder) / UNITS_FILE
    units = {}
    for number, line in read_list_file(path, "the unit names"):
        fields = [field.strip() for field in line.split("\t")]
        if len(fields) < 3 or not re.fullmatch(r"Q[1-9][0-9]*", fields[0]):
            raise BadInputError(f"{path}:{number}: expected 'Q-id<TAB>singular<TAB>plural[<TAB>symbol]'")
        units[fields[0]] = Unit(*fields[1:4])
    return units


def _property_list(path: Path | Traversable, what: str) -> frozenset[str]:
    """The P-ids of a list file (the first word of each line)."""
    pids = set()
    for number, line in read_list_file(path, what):
        pid = line.split()[0]
        if not _PROPERTY_ID.fullmatch(pid):
            raise BadInputError(f"{path}:{number}: {pid!r} is not a property id")
        pids.add(pid)
    return frozenset(pids)


@cache
def load_denied(folder: Path | Traversable = DEFAULT_DATA_DIR) -> frozenset[str]:
    """The denied P-ids from denied_properties.txt (the first word of each line)."""
    return _property_list(_folder(folder) / DENIED_FILE, "the denied properties")


@cache
def load_trivial(folder: Path | Traversable = DEFAULT_DATA_DIR) -> frozenset[str]:
    """The trivial P-ids from trivial_properties.txt (sex or gender, ...; the first word of each line)."""
    return _property_list(_folder(folder) / TRIVIAL_FILE, "the trivial properties")


@cache
def load_changing(folder: Path | Traversable = DEFAULT_DATA_DIR) -> frozenset[str]:
    """The P-ids whose value changes over time, from changing_properties.txt (the first word of each line)."""
    return _property_list(_folder(folder) / CHANGING_FILE, "the changing properties")

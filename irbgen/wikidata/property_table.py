"""Property labels and datatypes from a table, for dumps that hold no property entities.

A table is tab-separated text, one property a line: `id<TAB>label<TAB>datatype` (`P17<TAB>country<TAB>
wikibase-item`), datatypes as dumps write them. Blank lines, lines starting with "#" and a first line
`id<TAB>label<TAB>datatype` (after any comments) are skipped. irbgen ships one
(`irbgen/resources/wikidata/properties.tsv`: 4,068 properties of a 2017 Wikidata snapshot, CC0) and reads
it in every Wikidata build; a table given with `--properties FILE.tsv` comes before it. Property entities
of a dump come before both.
"""

from __future__ import annotations

import os
import re
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.listfile import read_list_file
from irbgen.wikidata.vocabulary import DEFAULT_DATA_DIR, PROPERTY_TABLE_FILE

SHIPPED_TABLE = DEFAULT_DATA_DIR / PROPERTY_TABLE_FILE
HEADER = ("id", "label", "datatype")
DATATYPES = frozenset(
    "commonsMedia external-id geo-shape globe-coordinate math monolingualtext musical-notation quantity "
    "string tabular-data time url wikibase-form wikibase-item wikibase-lexeme wikibase-property "
    "wikibase-sense entity-schema".split()
)
_PROPERTY_ID = re.compile(r"P[1-9][0-9]*")


def is_property_table(path: Path | str) -> bool:
    """Whether `--properties` names a table (a .tsv file) rather than a properties-only dump."""
    return Path(path).name.lower().endswith(".tsv")


def read_property_table(path: Path | str | Traversable) -> list[dict[str, Any]]:
    """The table's properties as property-entity rows (id, kind, label, datatype); a bad line raises
    naming the file and line."""
    where = Path(path) if isinstance(path, str | os.PathLike) else path
    if isinstance(where, Path) and not where.is_file():
        raise BadInputError(f"{where}: property table not found (--properties)")
    rows, seen = [], set()
    for index, (number, line) in enumerate(read_list_file(where, "the property table")):
        fields = [field.strip() for field in line.split("\t")]
        if index == 0 and tuple(fields) == HEADER:
            continue
        problem = _problem(fields, seen)
        if problem:
            raise BadInputError(f"{where}:{number}: {problem}")
        seen.add(fields[0])
        rows.append({"id": fields[0], "kind": "property", "label": fields[1], "datatype": fields[2]})
    return rows


def _problem(fields: list[str], seen: set[str]) -> str:
    if len(fields) != 3:
        return f"expected 'id<TAB>label<TAB>datatype', got {len(fields)} field(s)"
    pid, label, datatype = fields
    if not _PROPERTY_ID.fullmatch(pid):
        return f"{pid!r} is not a property id (P<number>)"
    if not label:
        return f"{pid} has an empty label"
    if datatype not in DATATYPES:
        return f"{pid}: unknown datatype {datatype!r} (one of {', '.join(sorted(DATATYPES))})"
    return f"{pid} is listed twice" if pid in seen else ""


@cache
def shipped_table() -> tuple[dict[str, Any], ...]:
    """irbgen's own table, read once."""
    return tuple(read_property_table(SHIPPED_TABLE))


@cache
def shipped_labels() -> dict[str, str]:
    """P-id -> label from irbgen's own table."""
    return {row["id"]: row["label"] for row in shipped_table()}


def table_rows(path: Path | None) -> list[dict[str, Any]]:
    """The rows a build adds where the dump has no property entity: the given table's (when `path` is a
    table), then irbgen's."""
    given = read_property_table(path) if path is not None and is_property_table(path) else []
    return [*given, *shipped_table()]

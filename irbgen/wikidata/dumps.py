"""Streaming reader for Wikidata JSON dumps (`.json`, `.json.gz`, `.json.bz2`) into `WikidataEntity` records.

A dump is one JSON array with one entity per line ("[" and "]" on their own lines, a comma after each
entity). Entities are read through qwikidata's `WikidataItem` / `WikidataProperty`, their truthy claim
groups and datavalue classes, and reduced to what the build needs:

- items with an English label (or a language-neutral "mul" label); others become `no_english_label`
  rejects keyed by the entity id. Properties are always kept, with their label ("" if none) and datatype;
  their own statements are dropped, since chains only walk items.
- only statements a question can use: a denied property (`denied_properties.txt`) or a statement whose
  own `mainsnak.datatype` is excluded (external ids, URLs, media, coordinates, ...) is dropped from the
  raw JSON before qwikidata parses it, so passages never state it (`answerable.never_asked`; instance of
  and coordinate location stay, the rules wording reads them). Qualifiers are filtered the same way by
  their own snak datatype (`answerable.never_qualifies`, with no exception). `keep_all_statements`
  keeps them all.
- truthy statements only: per property, the preferred-rank claims if there are any, else the normal-rank
  ones; deprecated never. This is qwikidata's `get_truthy_claim_group` rule (and Wikidata's RDF "truthy"
  rule); claims with any other rank string are dropped as well. A preferred somevalue/novalue claim still
  hides the normal ones, as in Wikidata. somevalue/novalue snaks give no statement or qualifier.
- values: items -> `Value(type="entity")`; times -> text by precision ("12 March 2019", "March 2019",
  "2019", "1990s", "13th century", "44 BCE"); quantities -> the amount without "+" (decimals kept), the
  unit's Q-id in `unit` and never in `text` (the parser knows no unit labels; a realiser appends
  `label(unit)`); string, url and external-id -> "string"; monolingual text -> its text, and when a
  property has English values the other languages are dropped; coordinates -> "lat, lon" rounded to
  their precision; everything else (commonsMedia, math, property or lexeme ids, ...) -> "other".

Errors: a line that is not JSON, not an object, has no "id", or whose claims qwikidata cannot read (for
instance a datavalue type it does not know) becomes a `Reject` ("bad_line" / "bad_entity") keyed
"<file>:<line>", and reading goes on. A compressed file that ends early raises `BadInputError` naming
the file and the last line read: a truncated dump is a broken input, not a bad record.

Sharding: a plain `.json` is cut into byte ranges aligned to line starts, so each shard reads only its
part. A `.json.gz` or `.json.bz2` given a saved index (`irbgen.wikidata.seekable`, built once by
`wikidata_shards(index_dir=...)`) is cut the same way in uncompressed bytes, and each shard
decompresses only its range. Without an index, shard k of n decompresses the whole file and keeps
every n-th entity line (it saves parsing only). Either way the shards together yield exactly the
records of a one-shard read; byte ranges keep the file's order, every n-th line does not.
"""

from __future__ import annotations

import bz2
import gzip
import json
import math
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field
from qwikidata.claim import WikidataClaim
from qwikidata.entity import WikidataItem, WikidataProperty
from qwikidata.snak import WikidataSnak

from irbgen.errors import BadInputError
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.seekable import build_index, is_seekable_format, seekable_opener
from irbgen.wikidata.answerable import never_asked, never_qualifies
from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikidata.selection import EntityFilter, load_entity_ids

STAGE = "read"
MAX_BAD_LINES_IN_A_ROW = 100  # more consecutive bad lines means the file is not a Wikidata JSON dump
_COUNT_CHUNK = 1 << 20
_ENGLISH = ("en", "mul")  # "mul": the language-neutral label Wikidata added in 2024, read like English
_OPENERS: dict[str, Callable[[Path], IO[bytes]] | None] = {
    ".json": None,
    ".json.bz2": lambda path: bz2.open(path, "rb"),
    ".json.gz": lambda path: gzip.open(path, "rb"),
}
_MONTHS = "January February March April May June July August September October November December".split()
_TIME = re.compile(r"([+-]?)(\d+)-(\d\d)-(\d\d)T")
_STRING_TYPES = frozenset({"string", "external-id", "url"})
_ID_PREFIXES = {"item": "Q", "property": "P", "lexeme": "L"}


# --- values ---------------------------------------------------------------------------------------------


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def time_text(time: str, precision: int) -> str:
    """A Wikidata time string as a reader would write it, to its precision; the raw string if unparsable."""
    match = _TIME.match(time)
    if match is None:
        return time
    sign, year, month, day = match.group(1), int(match.group(2)), int(match.group(3)), int(match.group(4))
    era = " BCE" if sign == "-" and year > 0 else ""  # historical numbering: -0044 is 44 BCE
    if precision >= 11 and 1 <= month <= 12 and day >= 1:
        return f"{day} {_MONTHS[month - 1]} {year}{era}"
    if precision >= 10 and 1 <= month <= 12:
        return f"{_MONTHS[month - 1]} {year}{era}"
    if precision == 8:
        return f"{year - year % 10}s{era}"
    if precision == 7:
        return f"{_ordinal((year - 1) // 100 + 1)} century{era}"
    if precision == 6:
        return f"{_ordinal((year - 1) // 1000 + 1)} millennium{era}"
    return f"{year}{era}"


def quantity_text(amount: str) -> str:
    """A quantity amount as written, without the leading "+" ("+1.50" -> "1.50")."""
    return amount[1:] if amount.startswith("+") else amount


def coordinate_text(latitude: float, longitude: float, precision: float | None) -> str:
    """ "lat, lon" with the decimals the coordinate's precision supports (4 when unknown, at most 6)."""
    decimals = 4
    if precision and precision > 0:
        decimals = min(6, max(0, round(-math.log10(precision))))

    def fmt(number: float) -> str:
        text = f"{number:.{decimals}f}"
        text = text.rstrip("0").rstrip(".") if "." in text else text
        return "0" if text in ("-0", "") else text

    return f"{fmt(latitude)}, {fmt(longitude)}"


def _entity_value(datatype: str, value: Any) -> Value:
    entity_id = value.get("id") or f"{_ID_PREFIXES[value['entity-type']]}{value['numeric-id']}"  # old dumps
    if value.get("entity-type", "item") == "item" and entity_id.startswith("Q"):
        return Value(type="entity", id=entity_id, text=entity_id)
    return Value(type="other", text=entity_id, raw=entity_id)


def _time_value(datatype: str, value: Any) -> Value:
    precision = int(value.get("precision", 11))
    return Value(
        type="time", text=time_text(value["time"], precision), raw=value["time"], precision=precision
    )


def _quantity_value(datatype: str, value: Any) -> Value:
    amount = str(value["amount"])
    unit_uri = str(value.get("unit", "1"))
    unit = None if unit_uri == "1" else unit_uri.rsplit("/", 1)[-1]
    return Value(type="quantity", text=quantity_text(amount), raw=amount, unit=unit)


def _string_value(datatype: str, value: Any) -> Value:
    return Value(type="string" if datatype in _STRING_TYPES else "other", text=str(value), raw=str(value))


def _monolingual_value(datatype: str, value: Any) -> Value:
    text, language = str(value["text"]), str(value["language"])
    return Value(type="monolingualtext", text=text, raw=f"{text}@{language}")


def _coordinate_value(datatype: str, value: Any) -> Value:
    latitude, longitude = float(value["latitude"]), float(value["longitude"])
    text = coordinate_text(latitude, longitude, value.get("precision"))
    return Value(type="globecoordinate", text=text, raw=f"{latitude!r},{longitude!r}")


def _other_value(datatype: str, value: Any) -> Value:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return Value(type="other", text=text, raw=text)


# datavalue type (qwikidata's datavalue classes) -> converter
_CONVERTERS: dict[str, Callable[[str, Any], Value]] = {
    "wikibase-entityid": _entity_value,
    "time": _time_value,
    "quantity": _quantity_value,
    "string": _string_value,
    "monolingualtext": _monolingual_value,
    "globecoordinate": _coordinate_value,
}


def snak_value(snak: WikidataSnak) -> Value | None:
    """The value of a qwikidata snak, None for somevalue/novalue; ValueError for a malformed datavalue."""
    if snak.snaktype != "value" or snak.datavalue is None:
        return None
    convert = _CONVERTERS.get(snak.datavalue.datatype, _other_value)
    try:
        return convert(snak.snak_datatype or "", snak.datavalue.value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"{snak.property_id}: unreadable {snak.datavalue.datatype} value: {exc}") from exc


# --- entities -------------------------------------------------------------------------------------------


def _prefer_english(pairs: list[tuple[WikidataClaim, Value]]) -> list[tuple[WikidataClaim, Value]]:
    """For a property of monolingual texts, only the English ones when there are some."""
    if not pairs or any(value.type != "monolingualtext" for _, value in pairs):
        return pairs
    return [pair for pair in pairs if pair[1].is_english] or pairs


def _qualifiers(claim: WikidataClaim, keep_all: bool = False) -> dict[str, list[str]]:
    """Qualifier P-id -> readable values (qwikidata reads the qualifiers listed in "qualifiers-order");
    unless `keep_all`, without the qualifiers `never_qualifies` drops (by each snak's own datatype)."""
    out: dict[str, list[str]] = {}
    for property_id, qualifiers in claim.qualifiers.items():
        texts = [
            value.text
            for q in qualifiers
            if (keep_all or not never_qualifies(property_id, q.snak.snak_datatype or ""))
            and (value := snak_value(q.snak)) is not None
        ]
        if texts:
            out[property_id] = texts
    return out


def _statements(item: WikidataItem, keep_all: bool = False) -> list[Statement]:
    """The item's truthy statements that have a value, property by property in the dump's order."""
    statements: list[Statement] = []
    for property_id, group in item.get_truthy_claim_groups().items():
        pairs = [
            (claim, value)
            for claim in group
            if claim.rank.lower() in ("preferred", "normal")
            and (value := snak_value(claim.mainsnak)) is not None
        ]
        for claim, value in _prefer_english(pairs):
            statements.append(
                Statement(
                    head=item.entity_id,
                    property=property_id,
                    tail=value,
                    rank=claim.rank.lower(),
                    qualifiers=_qualifiers(claim, keep_all),
                    datatype=claim.mainsnak.snak_datatype or "",
                )
            )
    return statements


def _english_label(entity: WikidataItem | WikidataProperty) -> str:
    for language in _ENGLISH:
        if label := entity.get_label(language):
            return label
    return ""


def _aliases(entity: WikidataItem | WikidataProperty, label: str) -> list[str]:
    names = [alias for language in _ENGLISH for alias in entity.get_aliases(language)]
    return [name for name in dict.fromkeys(names) if name and name != label]


def _entity_kind(obj: dict[str, Any]) -> str | None:
    kind = obj.get("type")
    if kind is None and isinstance(obj.get("id"), str):
        kind = {"Q": "item", "P": "property"}.get(obj["id"][:1])
    return kind


def _never_asked(property_id: str, claim: Any) -> bool:
    """Whether a raw claim is one no question can use; a malformed claim is left for qwikidata to refuse."""
    snak = claim.get("mainsnak") if isinstance(claim, dict) else None
    own = snak.get("datatype") if isinstance(snak, dict) else None
    return never_asked(property_id, own if isinstance(own, str) else "")


def _claims_to_read(claims: dict[str, Any], keep_all: bool = False) -> dict[str, Any]:
    """Claims minus their references, which irbgen never reads (qwikidata would parse them all), and
    minus the claims no question can use unless `keep_all`."""
    if not isinstance(claims, dict):
        return claims
    return {
        pid: [{k: v for k, v in claim.items() if k != "references"} if isinstance(claim, dict) else claim
              for claim in group if keep_all or not _never_asked(pid, claim)]
        if isinstance(group, list) else group
        for pid, group in claims.items()
    }  # fmt: skip


def _parse(obj: dict[str, Any], keep_all: bool = False) -> WikidataEntity | Reject:
    """An entity, or a Reject for one we do not keep; raises when the JSON breaks the Wikibase data model.

    Unless `keep_all`, the statements no question can use are left out (`_claims_to_read`)."""
    entity_id = str(obj["id"])
    kind = _entity_kind(obj)
    if kind not in ("item", "property"):
        return Reject(stage=STAGE, reason="unsupported_type", key=entity_id, detail=f"entity type {kind!r}")
    full = {
        "labels": {},
        "descriptions": {},
        "aliases": {},
        "sitelinks": {},
        **obj,
        "claims": _claims_to_read(obj.get("claims") or {}, keep_all),
        "type": kind,
    }
    entity = WikidataItem(full) if kind == "item" else WikidataProperty(full)
    label = _english_label(entity)
    common = {"id": entity_id, "kind": kind, "label": label, "aliases": _aliases(entity, label)}
    common["description"] = entity.get_description("en")
    if isinstance(entity, WikidataProperty):
        return WikidataEntity(**common, datatype=obj.get("datatype"))
    if not label:
        languages = sorted(full["labels"]) if isinstance(full["labels"], dict) else []
        return Reject(
            stage=STAGE, reason="no_english_label", key=entity_id, detail=f"labels in: {languages[:10]}"
        )
    sitelinks = full["sitelinks"]
    return WikidataEntity(
        **common,
        enwiki=entity.get_enwiki_title() or None,
        sitelinks=len(sitelinks) if isinstance(sitelinks, dict) else 0,
        statements=_statements(entity, keep_all),
    )


def parse_entity(
    obj: dict[str, Any], *, where: str, keep_all_statements: bool = False
) -> WikidataEntity | Reject:
    """One dump entity as a WikidataEntity, or a Reject saying why not (`where` locates it in rejects).

    Statements no question can use are dropped unless `keep_all_statements` (see the module docstring).
    """
    return _entity_or_reject(obj, lambda: where, keep_all=keep_all_statements)


def _entity_or_reject(
    obj: Any, where: Callable[[], str], keep: EntityFilter | None = None, keep_all: bool = False
) -> WikidataEntity | Reject:
    """Like parse_entity; `where` is only called for a reject (a line number may cost a scan)."""
    if not isinstance(obj, dict):
        return _bad_line(where(), f"a JSON {type(obj).__name__}, not an entity object")
    if not isinstance(obj.get("id"), str) or not obj["id"]:
        return _bad_line(where(), f"no entity id: {json.dumps(obj, ensure_ascii=False)[:80]}")
    dropped = keep.reason(obj, _entity_kind(obj)) if keep is not None else None
    if dropped is not None:
        return Reject(stage=STAGE, reason=dropped[0], key=obj["id"], detail=dropped[1])
    try:
        return _parse(obj, keep_all)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # qwikidata's checks, pydantic's too
        detail = f"{obj['id']}: {type(exc).__name__}: {exc}"
        return Reject(stage=STAGE, reason="bad_entity", key=where(), detail=detail[:300])


# --- reading --------------------------------------------------------------------------------------------


def _bad_line(where: str, detail: str) -> Reject:
    return Reject(stage=STAGE, reason="bad_line", key=where, detail=detail)


def _line_record(
    line: bytes, where: Callable[[], str], keep: EntityFilter | None = None, keep_all: bool = False
) -> WikidataEntity | Reject:
    """The record for one entity line of the array (the trailing comma already removed)."""
    try:
        obj = json.loads(line)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        return _bad_line(where(), f"not JSON ({exc}): {line[:80]!r}")
    return _entity_or_reject(obj, where, keep, keep_all)


def _entity_line(raw: bytes) -> bytes | None:
    """The JSON of an entity line without its comma; None for "[", "]" and blank lines."""
    line = raw.strip()
    if line in (b"[", b"]", b""):
        return None
    return line[:-1] if line.endswith(b",") else line


class _LineNumbers:
    """Line numbers inside a byte-range shard, counted from the file start only when first asked for."""

    def __init__(self, opener: Callable[[], Any], first_byte: int) -> None:
        self.opener = opener
        self.first_byte = first_byte
        self.first_line: int | None = None

    def __call__(self, index: int) -> int:
        if self.first_line is None:
            newlines, left = 0, self.first_byte
            with self.opener() as f:
                while left > 0 and (chunk := f.read(min(_COUNT_CHUNK, left))):
                    newlines += chunk.count(b"\n")
                    left -= len(chunk)
            self.first_line = newlines + 1
        return self.first_line + index


def _range_lines(
    opener: Callable[[], Any], size: int, shard: int, shards: int
) -> Iterator[tuple[Callable[[], int], bytes]]:
    """The lines whose first byte lies in this shard's byte range, each with its (lazy) line number.

    `opener` opens the (uncompressed or seekable compressed) file, `size` is its uncompressed size.
    """
    start, end = size * shard // shards, size * (shard + 1) // shards
    with opener() as f:
        if start > 0:
            f.seek(start - 1)
            f.readline()  # the rest of the line holding byte start-1 belongs to the previous shard
        position = f.tell()
        numbers = _LineNumbers(opener, position)
        index = 0
        while position < end and (raw := f.readline()):
            yield (lambda i=index: numbers(i)), raw
            position += len(raw)
            index += 1


def _stream_lines(
    path: Path, opener: Callable[[Path], IO[bytes]]
) -> Iterator[tuple[Callable[[], int], bytes]]:
    """Every line of a compressed dump with its number; a broken or truncated container raises."""
    number = 0
    try:
        with opener(path) as f:
            for raw in f:
                number += 1
                yield (lambda n=number: n), raw
    except EOFError as exc:
        raise BadInputError(
            f"{path}: compressed data ends early after line {number} (truncated file?)"
        ) from exc
    except (OSError, zlib.error) as exc:
        raise BadInputError(f"{path}: cannot decompress after line {number}: {exc}") from exc


def _seekable_lines(
    path: Path, opener: Callable[[], Any], size: int, shard: int, shards: int
) -> Iterator[tuple[Callable[[], int], bytes]]:
    """A byte range of a compressed dump read through its index; a broken container raises."""
    try:
        yield from _range_lines(opener, size, shard, shards)
    except (OSError, ValueError, RuntimeError) as exc:
        raise BadInputError(f"{path}: cannot decompress shard {shard} of {shards}: {exc}") from exc


def _round_robin(
    lines: Iterable[tuple[Callable[[], int], bytes]], shard: int, shards: int
) -> Iterator[tuple[Callable[[], int], bytes]]:
    """Every `shards`-th entity line, starting at entity line `shard` (brackets and blanks not counted)."""
    index = -1
    for number, raw in lines:
        if _entity_line(raw) is None:
            continue
        index += 1
        if index % shards == shard:
            yield number, raw


def dump_compression(path: str | Path) -> str:
    """The dump's suffix (".json", ".json.gz", ".json.bz2"); BadInputError for anything else."""
    name = Path(path).name.lower()
    for suffix in sorted(_OPENERS, key=len, reverse=True):
        if name.endswith(suffix):
            return suffix
    raise BadInputError(f"{path}: not a Wikidata JSON dump name; expected one of {sorted(_OPENERS)}")


def read_wikidata_dump(
    path: str | Path,
    *,
    shard: int = 0,
    shards: int = 1,
    limit: int | None = None,
    keep: EntityFilter | None = None,
    index: str | Path | None = None,
    size: int | None = None,
    keep_all_statements: bool = False,
) -> Iterator[WikidataEntity | Reject]:
    """Entities (or per-line Rejects) of one shard of a Wikidata JSON dump, streamed line by line.

    With `index` (a saved index of a compressed dump, `seekable.build_index`) and its uncompressed
    `size`, a shard of a `.gz` or `.bz2` dump decompresses only its own byte range.

    `limit` caps the entity lines this shard reads (each gives one entity or one reject). Items that
    `keep` drops become rejects with its reason ("few_sitelinks", "not_listed"). Arguments are checked at
    once; the file is opened on the first `next()`. Statements no question can use are dropped unless
    `keep_all_statements` (see the module docstring).
    """
    path = Path(path)
    if shards < 1 or not 0 <= shard < shards:
        raise BadInputError(
            f"shard must be in 0..{shards - 1} and shards >= 1, got shard {shard} of {shards}"
        )
    if limit is not None and limit < 0:
        raise BadInputError(f"--limit must be 0 or more, got {limit}")
    opener = _OPENERS[dump_compression(path)]
    if not path.is_file():
        raise BadInputError(f"{path}: no such dump file")
    if opener is None:
        lines = _range_lines(lambda: path.open("rb"), path.stat().st_size, shard, shards)
    elif shards > 1 and index is not None:
        size = size if size is not None else build_index(path, Path(index).parent)[1]
        lines = _seekable_lines(path, seekable_opener(path, Path(index)), size, shard, shards)
    else:
        lines = _round_robin(_stream_lines(path, opener), shard, shards)
    return _records(path, lines, limit, keep, keep_all_statements)


def _records(
    path: Path,
    lines: Iterable[tuple[Callable[[], int], bytes]],
    limit: int | None,
    keep: EntityFilter | None = None,
    keep_all: bool = False,
) -> Iterator[WikidataEntity | Reject]:
    """Parse entity lines up to `limit`, stopping if too many lines in a row are not JSON entities."""
    taken = bad_in_a_row = 0
    for number, raw in lines:
        line = _entity_line(raw)
        if line is None:
            continue
        if limit is not None and taken >= limit:
            return
        taken += 1
        record = _line_record(line, lambda number=number: f"{path.name}:{number()}", keep, keep_all)
        bad_in_a_row = bad_in_a_row + 1 if isinstance(record, Reject) and record.reason == "bad_line" else 0
        if bad_in_a_row > MAX_BAD_LINES_IN_A_ROW:
            raise BadInputError(
                f"{path}: over {MAX_BAD_LINES_IN_A_ROW} lines in a row are not entities "
                f"(last at {record.key}); is it a Wikidata JSON dump?"
            )
        yield record


# --- stage ----------------------------------------------------------------------------------------------


class WikidataShard(BaseModel):
    """One shard of a Wikidata dump to read: the unit the read stage checkpoints."""

    model_config = ConfigDict(extra="forbid")

    path: str
    shard: int = Field(0, ge=0)
    shards: int = Field(1, ge=1)
    limit: int | None = Field(None, ge=0)
    min_sitelinks: int = Field(0, ge=0)
    entities: str | None = None  # a file of the items to keep, one id per line
    index: str | None = None  # the saved index of a compressed dump, so the shard seeks to its range
    size: int | None = Field(None, ge=0)  # the dump's uncompressed size, with `index`
    keep_all_statements: bool = False  # also the statements no question can use (identifiers, ...)

    @property
    def key(self) -> str:
        return f"{Path(self.path).name}#{self.shard}/{self.shards}"

    def entity_filter(self) -> EntityFilter | None:
        """The items this shard keeps (None: all)."""
        if not self.min_sitelinks and self.entities is None:
            return None
        ids = load_entity_ids(self.entities) if self.entities is not None else None
        return EntityFilter(min_sitelinks=self.min_sitelinks, ids=ids)


def wikidata_shards(
    path: str | Path, shards: int = 1, index_dir: str | Path | None = None, **options: Any
) -> list[WikidataShard]:
    """The `shards` WikidataShard records that together read the whole dump (options: limit, filters).

    With `index_dir`, a compressed dump read in several shards is indexed once (saved there), so that
    each shard decompresses only its own byte range.
    """
    if shards > 1 and index_dir is not None and is_seekable_format(path):
        index, size = build_index(path, index_dir)
        options = {**options, "index": str(index), "size": size}
    return [WikidataShard(path=str(path), shard=k, shards=shards, **options) for k in range(shards)]


class ReadEntities:
    """WikidataShard -> WikidataEntity for every kept item and property; the rest become rejects.

    Rejects (reason, key): "bad_line" / "bad_entity" ("<file>:<line>") for a line that is not a readable
    entity, "no_english_label" (entity id) for an item without an English or "mul" label,
    "unsupported_type" (entity id) for lexemes and other entity types, and "few_sitelinks" /
    "not_listed" (entity id) for items the shard's filter drops.
    """

    name = "read"
    input_model = WikidataShard
    output_model = WikidataEntity

    def key(self, record: WikidataShard) -> str:
        """The shard's name: "<file name>#<shard>/<shards>"."""
        return record.key

    def process(self, record: WikidataShard, context: StageContext) -> Iterator[WikidataEntity | Reject]:
        """Stream the shard's entities."""
        yield from read_wikidata_dump(
            record.path,
            shard=record.shard,
            shards=record.shards,
            limit=record.limit,
            keep=record.entity_filter(),
            index=record.index,
            size=record.size,
            keep_all_statements=record.keep_all_statements,
        )

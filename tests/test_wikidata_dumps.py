"""Wikidata dump reader: value types, ranks, qualifiers, label filter, bad lines, compressions, shards."""

from __future__ import annotations

import bz2
import gzip
import importlib.util
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from qwikidata.entity import WikidataItem

from irbgen.errors import BadInputError
from irbgen.pipeline.runner import run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.wikidata.dumps import (
    MAX_BAD_LINES_IN_A_ROW,
    ReadEntities,
    WikidataShard,
    parse_entity,
    read_wikidata_dump,
    wikidata_shards,
)
from irbgen.wikidata.records import Statement, WikidataEntity
from irbgen.wikidata.selection import EntityFilter, load_entity_ids

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "wikidata"
OLD_DUMP = SAMPLES / "wikidata-old.json.gz"
NEW_DUMP = SAMPLES / "wikidata-new.json.bz2"


# --- building entity JSON ---------------------------------------------------------------------------------


def snak(prop: str, datatype: str, kind: str | None, value: Any, snaktype: str = "value") -> dict:
    out = {"snaktype": snaktype, "property": prop, "hash": f"h-{prop}", "datatype": datatype}
    if snaktype == "value":
        out["datavalue"] = {"value": value, "type": kind}
    return out


def ref(qid: str) -> tuple[str, str, dict]:
    return (
        "wikibase-item",
        "wikibase-entityid",
        {"entity-type": "item", "numeric-id": int(qid[1:]), "id": qid},
    )


def when(text: str, precision: int) -> tuple[str, str, dict]:
    calendar = "http://www.wikidata.org/entity/Q1985727"
    value = {
        "time": text,
        "timezone": 0,
        "before": 0,
        "after": 0,
        "precision": precision,
        "calendarmodel": calendar,
    }
    return "time", "time", value


def claim(
    prop: str, value: tuple[str, str, Any], rank: str = "normal", qualifiers=(), snaktype="value"
) -> dict:
    out = {
        "mainsnak": snak(prop, *value, snaktype=snaktype),
        "type": "statement",
        "id": f"Q1${prop}",
        "rank": rank,
    }
    if qualifiers:
        grouped: dict[str, list[dict]] = {}
        for qprop, qvalue, *qtype in qualifiers:
            grouped.setdefault(qprop, []).append(
                snak(qprop, *qvalue, snaktype=qtype[0] if qtype else "value")
            )
        out["qualifiers"] = grouped
        out["qualifiers-order"] = list(grouped)
    return out


def item(
    qid: str = "Q1", claims: list[dict] = (), labels: dict[str, str] | None = None, **extra: Any
) -> dict:
    labels = {"en": "Thing"} if labels is None else labels
    grouped: dict[str, list[dict]] = {}
    for c in claims:
        grouped.setdefault(c["mainsnak"]["property"], []).append(c)
    return {
        "type": "item",
        "id": qid,
        "labels": {lang: {"language": lang, "value": text} for lang, text in labels.items()},
        "descriptions": extra.pop("descriptions", {}),
        "aliases": extra.pop("aliases", {}),
        "claims": grouped,
        "sitelinks": extra.pop("sitelinks", {}),
        **extra,
    }


def parsed(obj: dict, keep_all_statements: bool = False) -> WikidataEntity:
    entity = parse_entity(obj, where="test:1", keep_all_statements=keep_all_statements)
    assert isinstance(entity, WikidataEntity), entity
    return entity


def tails(entity: WikidataEntity, prop: str) -> list[str]:
    return [s.tail.text for s in entity.statements if s.property == prop]


# --- values ---------------------------------------------------------------------------------------------

UNIT = "http://www.wikidata.org/entity/Q712226"
ITEM_7 = {"entity-type": "item", "numeric-id": 7}  # no "id", as in old dumps
PROPERTY_17 = {"entity-type": "property", "numeric-id": 17, "id": "P17"}
NEAR_LONDON = {"latitude": 51.50722, "longitude": -0.1275, "precision": 0.0001}
NO_PRECISION = {"latitude": 10.0, "longitude": 20.5, "precision": None}
URL = "https://x.example.org/"
VALUES = [
    # ((datatype, datavalue type, value), (type, text, raw, precision, unit))
    (ref("Q42"), ("entity", "Q42", "", None, None)),
    (("wikibase-item", "wikibase-entityid", ITEM_7), ("entity", "Q7", "", None, None)),
    (when("+2019-03-12T00:00:00Z", 11), ("time", "12 March 2019", "+2019-03-12T00:00:00Z", 11, None)),
    (when("+2019-03-00T00:00:00Z", 10), ("time", "March 2019", "+2019-03-00T00:00:00Z", 10, None)),
    (when("+2019-00-00T00:00:00Z", 9), ("time", "2019", "+2019-00-00T00:00:00Z", 9, None)),
    (when("+1987-00-00T00:00:00Z", 8), ("time", "1980s", "+1987-00-00T00:00:00Z", 8, None)),
    (when("+1950-00-00T00:00:00Z", 7), ("time", "20th century", "+1950-00-00T00:00:00Z", 7, None)),
    (when("+1900-00-00T00:00:00Z", 7), ("time", "19th century", "+1900-00-00T00:00:00Z", 7, None)),
    (when("+2001-00-00T00:00:00Z", 6), ("time", "3rd millennium", "+2001-00-00T00:00:00Z", 6, None)),
    (when("-0044-03-15T00:00:00Z", 11), ("time", "15 March 44 BCE", "-0044-03-15T00:00:00Z", 11, None)),
    (when("-0350-00-00T00:00:00Z", 9), ("time", "350 BCE", "-0350-00-00T00:00:00Z", 9, None)),
    (when("-0350-00-00T00:00:00Z", 7), ("time", "4th century BCE", "-0350-00-00T00:00:00Z", 7, None)),
    (when("+2019-00-00T00:00:00Z", 11), ("time", "2019", "+2019-00-00T00:00:00Z", 11, None)),  # day unknown
    (
        ("quantity", "quantity", {"amount": "+18400", "unit": "1"}),
        ("quantity", "18400", "+18400", None, None),
    ),
    (
        ("quantity", "quantity", {"amount": "+4.70", "unit": UNIT}),
        ("quantity", "4.70", "+4.70", None, "Q712226"),
    ),
    (("quantity", "quantity", {"amount": "-4", "unit": "1"}), ("quantity", "-4", "-4", None, None)),
    (("string", "string", "Tarn Valley"), ("string", "Tarn Valley", "Tarn Valley", None, None)),
    (("external-id", "string", "tt9123456"), ("string", "tt9123456", "tt9123456", None, None)),
    (("url", "string", URL), ("string", URL, URL, None, None)),
    (
        ("monolingualtext", "monolingualtext", {"text": "Orrin", "language": "fr"}),
        ("monolingualtext", "Orrin", "Orrin@fr", None, None),
    ),
    (
        ("globe-coordinate", "globecoordinate", NEAR_LONDON),
        ("globecoordinate", "51.5072, -0.1275", "51.50722,-0.1275", None, None),
    ),
    (
        ("globe-coordinate", "globecoordinate", NO_PRECISION),
        ("globecoordinate", "10, 20.5", "10.0,20.5", None, None),
    ),
    (("commonsMedia", "string", "Harbour.jpg"), ("other", "Harbour.jpg", "Harbour.jpg", None, None)),
    (("math", "string", "E = m c^2"), ("other", "E = m c^2", "E = m c^2", None, None)),
    (("a-future-type", "string", "abc"), ("other", "abc", "abc", None, None)),
    (("wikibase-property", "wikibase-entityid", PROPERTY_17), ("other", "P17", "P17", None, None)),
]


@pytest.mark.parametrize(
    ("value", "expected"), VALUES, ids=lambda v: str(v[1])[:30] if isinstance(v, tuple) else ""
)
def test_every_datavalue_type_becomes_a_value(value: tuple, expected: tuple) -> None:
    statement = parsed(item(claims=[claim("P9", value)]), keep_all_statements=True).statements[0]
    kind, text, raw, precision, unit = expected
    tail = statement.tail
    assert (tail.type, tail.text, tail.precision, tail.unit) == (kind, text, precision, unit)
    assert tail.raw == raw
    assert tail.id == (text if kind == "entity" else None)


def test_somevalue_and_novalue_give_no_statement() -> None:
    claims = [
        claim("P19", ref("Q5"), snaktype="somevalue"),
        claim("P40", ref("Q5"), snaktype="novalue"),
        claim("P27", ref("Q6")),
    ]
    entity = parsed(item(claims=claims))
    assert [(s.property, s.tail.text) for s in entity.statements] == [("P27", "Q6")]


# --- what the reader keeps -------------------------------------------------------------------------------

NEVER_ASKED = [
    claim("P214", ("external-id", "string", "113230702")),  # VIAF ID: an identifier
    claim("P856", ("url", "string", URL)),  # official website: a denied property, and a URL
    claim("P18", ("commonsMedia", "string", "Harbour.jpg")),  # image: media
    claim("P1889", ref("Q8")),  # different from: a denied property with an item value
    claim("P99999", ("external-id", "string", "x-1")),  # no list names it: its own datatype says id
    claim("P1332", ("globe-coordinate", "globecoordinate", NEAR_LONDON)),  # northernmost point
    claim("P2534", ("math", "string", "E = m c^2")),  # defining formula
]
ASKED = [
    claim("P17", ref("Q6")),
    claim("P31", ref("Q5")),  # denied, yet kept: the rules wording asks "Who ...?" of a human
    claim("P625", ("globe-coordinate", "globecoordinate", NEAR_LONDON)),  # kept: "Which place ...?"
    claim("P1448", ("monolingualtext", "monolingualtext", {"text": "Orrin", "language": "en"})),
]


def properties(entity: WikidataEntity) -> list[str]:
    return [s.property for s in entity.statements]


def test_the_reader_drops_the_statements_no_question_can_use() -> None:
    obj = item(claims=[*NEVER_ASKED[:3], *ASKED, *NEVER_ASKED[3:]])
    assert properties(parsed(obj)) == ["P17", "P31", "P625", "P1448"]
    everything = properties(parsed(obj, keep_all_statements=True))
    assert everything == [c["mainsnak"]["property"] for c in [*NEVER_ASKED[:3], *ASKED, *NEVER_ASKED[3:]]]


def test_the_reader_keeps_what_the_rules_wording_reads() -> None:
    from irbgen.wikidata.answerable import KEPT_FOR_WORDING, never_asked
    from irbgen.wikidata.rules.questions import ORGANISATION_PROPERTIES, PLACE_PROPERTIES
    from irbgen.wikidata.vocabulary import load_denied

    read = {"P31"} | PLACE_PROPERTIES | ORGANISATION_PROPERTIES  # entity_kind reads these
    assert read & load_denied() <= KEPT_FOR_WORDING
    assert not any(never_asked(p, {"P625": "globe-coordinate"}.get(p, "wikibase-item")) for p in read)


def test_the_read_stage_drops_them_unless_its_shard_keeps_all(tmp_path: Path) -> None:
    obj = item("Q7", claims=[*NEVER_ASKED, *ASKED])
    path = write(tmp_path / "dump.json", "[\n" + json.dumps(obj) + "\n]\n")
    kept = {}
    for keep_all in (False, True):
        shards = wikidata_shards(path, keep_all_statements=keep_all)
        result = run_stage(ReadEntities(), shards, StageContext(run_dir=tmp_path / f"run-{keep_all}"))
        (row,) = result.rows()
        kept[keep_all] = [s["property"] for s in row["statements"]]
    assert kept == {False: properties(parsed(obj)), True: properties(parsed(obj, keep_all_statements=True))}
    assert len(kept[True]) == len(NEVER_ASKED) + len(ASKED) and "P214" not in kept[False]


# --- ranks ----------------------------------------------------------------------------------------------

RANK_CASES = [
    (["preferred", "normal"], ["Q10"]),
    (["normal", "preferred", "preferred"], ["Q11", "Q12"]),
    (["normal", "normal"], ["Q10", "Q11"]),
    (["deprecated", "normal"], ["Q11"]),
    (["preferred", "deprecated"], ["Q10"]),
    (["deprecated"], []),
    (["deprecated", "deprecated"], []),
]


@pytest.mark.parametrize(("ranks", "expected"), RANK_CASES)
def test_truthy_statements_follow_the_rank_rule(ranks: list[str], expected: list[str]) -> None:
    obj = item(claims=[claim("P6", ref(f"Q{10 + n}"), rank) for n, rank in enumerate(ranks)])
    entity = parsed(obj)
    assert tails(entity, "P6") == expected
    assert all(s.rank == ranks[int(s.tail.text[1:]) - 10] for s in entity.statements)
    # qwikidata's own truthy group gives the same claims: the rule is theirs, not re-implemented
    group = WikidataItem(obj).get_truthy_claim_group("P6")
    assert [c.mainsnak.datavalue.value["id"] for c in group] == expected


def test_a_preferred_novalue_hides_the_normal_values() -> None:
    entity = parsed(
        item(claims=[claim("P6", ref("Q5"), "preferred", snaktype="novalue"), claim("P6", ref("Q6"))])
    )
    assert entity.statements == []


def test_unknown_rank_strings_are_not_truthy() -> None:
    entity = parsed(item(claims=[claim("P6", ref("Q5"), "normal"), claim("P6", ref("Q6"), "dubious")]))
    assert tails(entity, "P6") == ["Q5"]


# --- qualifiers, monolingual texts, labels --------------------------------------------------------------


def test_qualifiers_become_readable_values() -> None:
    qualifiers = [
        ("P580", when("+2015-00-00T00:00:00Z", 9)),
        ("P582", when("+2023-06-01T00:00:00Z", 11)),
        ("P1686", ref("Q77")),
        ("P1686", ref("Q78")),
        ("P642", ref("Q1"), "somevalue"),
    ]
    statement = parsed(item(claims=[claim("P6", ref("Q5"), "preferred", qualifiers)])).statements[0]
    assert statement == Statement(
        head="Q1",
        property="P6",
        tail=statement.tail,
        rank="preferred",
        qualifiers={"P580": ["2015"], "P582": ["1 June 2023"], "P1686": ["Q77", "Q78"]},
        datatype="wikibase-item",  # the statement's own mainsnak.datatype
    )


def test_qualifiers_are_filtered_like_statements_unless_all_are_kept() -> None:
    viaf = ("external-id", "string", "113230702")
    qualifiers = [
        ("P585", when("+2016-00-00T00:00:00Z", 9)),
        ("P1343", ref("Q538377")),  # described by source: denied
        ("P31", ref("Q26961029")),  # instance of: denied, and no wording reads a qualifier's class
        ("P214", viaf),  # an identifier, by the qualifier snak's own datatype
        ("P854", ("url", "string", "https://example.org/a")),
        ("P518", ref("Q27177113")),  # applies to part: kept, `answerable.select` reads it
    ]
    population = ("quantity", "quantity", {"amount": "+5", "unit": "1"})
    obj = item(claims=[claim("P1082", population, "normal", qualifiers)])
    (statement,) = parsed(obj).statements
    assert statement.qualifiers == {"P585": ["2016"], "P518": ["Q27177113"]}
    (everything,) = parsed(obj, keep_all_statements=True).statements
    assert list(everything.qualifiers) == ["P585", "P1343", "P31", "P214", "P854", "P518"]


def test_english_monolingual_texts_win_over_other_languages() -> None:
    def name(text: str, language: str) -> dict:
        return claim("P1448", ("monolingualtext", "monolingualtext", {"text": text, "language": language}))

    mixed = parsed(item(claims=[name("République", "fr"), name("Republic", "en"), name("Realm", "en-gb")]))
    assert tails(mixed, "P1448") == ["Republic", "Realm"]
    foreign = parsed(item(claims=[name("République", "fr"), name("Republik", "de")]))
    assert tails(foreign, "P1448") == ["République", "Republik"]


def test_items_keep_english_labels_aliases_description_and_sitelinks() -> None:
    sitelinks = {
        site: {"site": site, "title": "Orrin (lake)", "badges": []} for site in ("enwiki", "dewiki", "frwiki")
    }
    aliases = {"en": ["Orrin Water"], "mul": ["Orrin"], "de": ["Orrin-See"]}
    obj = item(
        labels={"en": "Lake Orrin", "de": "Orrinsee"},
        aliases={lang: [{"language": lang, "value": a} for a in names] for lang, names in aliases.items()},
        descriptions={
            lang: {"language": lang, "value": text} for lang, text in (("en", "glacial lake"), ("de", "See"))
        },
        sitelinks=sitelinks,
    )
    entity = parsed(obj)
    assert (entity.id, entity.kind, entity.label, entity.description) == (
        "Q1",
        "item",
        "Lake Orrin",
        "glacial lake",
    )
    assert entity.aliases == ["Orrin Water", "Orrin"]
    assert (entity.enwiki, entity.sitelinks) == ("Orrin (lake)", 3)


def test_items_without_an_english_label_are_rejected_but_mul_labels_count() -> None:
    reject = parse_entity(item("Q8", labels={"fr": "Saint-Aubin", "de": "Sankt Aubin"}), where="f.json:9")
    assert isinstance(reject, Reject)
    assert (reject.stage, reject.reason, reject.key) == ("read", "no_english_label", "Q8")
    assert "de" in reject.detail and "fr" in reject.detail
    kept = parsed(item("Q9", labels={"mul": "Saga Lindqvist", "sv": "Saga Lindqvist"}))
    assert (kept.label, kept.enwiki, kept.sitelinks) == ("Saga Lindqvist", None, 0)


def test_properties_keep_label_and_datatype_but_not_statements() -> None:
    obj = {"type": "property", "datatype": "wikibase-item", "id": "P57", "descriptions": {}}
    obj["labels"] = {"en": {"language": "en", "value": "director"}}
    obj["aliases"] = {"en": [{"language": "en", "value": "directed by"}]}
    obj["claims"] = {"P31": [claim("P31", ref("Q5"))]}
    entity = parsed(obj)
    assert (entity.kind, entity.label, entity.datatype, entity.aliases) == (
        "property",
        "director",
        "wikibase-item",
        ["directed by"],
    )
    assert entity.statements == []
    unlabelled = parsed({"type": "property", "datatype": "time", "id": "P9", "labels": {}})
    assert (unlabelled.label, unlabelled.datatype) == ("", "time")


def test_other_entity_types_are_rejected() -> None:
    reject = parse_entity({"type": "lexeme", "id": "L7", "lemmas": {}}, where="f.json:3")
    assert isinstance(reject, Reject) and (reject.reason, reject.key) == ("unsupported_type", "L7")


@pytest.mark.parametrize(
    "bad_claims",
    [
        {"P6": [{"type": "statement", "id": "x", "rank": "normal"}]},  # no mainsnak
        {"P6": [claim("P6", ("time", "time", {"precision": 11}))]},  # a time without its time string
        {"P6": [claim("P6", ("string", "an-unknown-datavalue-type", "x"))]},
        {"P6": "not a list"},
    ],
)
def test_malformed_claims_make_a_bad_entity_reject(bad_claims: dict) -> None:
    obj = item("Q3")
    obj["claims"] = bad_claims
    reject = parse_entity(obj, where="dump.json:12")
    assert isinstance(reject, Reject)
    assert (reject.reason, reject.key) == ("bad_entity", "dump.json:12")
    assert reject.detail.startswith("Q3: ")


# --- reading files --------------------------------------------------------------------------------------


def entity_line(n: int) -> str:
    claims = [claim("P57", ref(f"Q{200 + n}")), claim("P577", when(f"+{1990 + n}-00-00T00:00:00Z", 9))]
    film = item(f"Q{100 + n}", claims, labels={"en": f"Film {n}"})
    return json.dumps(film, separators=(",", ":"))


BAD_LINES = {
    7: '{"type":"item","id":"Q1","labels":{',
    12: '"Q55"',
    18: '{"type":"item","labels":{}}',
    20: "[1, 2]",
}


def dump_text(count: int = 20, bad: dict[int, str] | None = None) -> str:
    """A JSON dump: "[" on line 1, then `count` entity lines with the `bad` ones replaced (by line number)."""
    bad = BAD_LINES if bad is None else bad
    lines = [entity_line(n) for n in range(count)]
    for line_number, text in bad.items():
        lines[line_number - 2] = text
    return "[\n" + ",\n".join(lines) + "\n]\n"


def write(path: Path, text: str) -> Path:
    data = text.encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    elif path.name.endswith(".bz2"):
        data = bz2.compress(data)
    path.write_bytes(data)
    return path


def signature(records: list) -> list[str]:
    return sorted(json.dumps(r.model_dump(mode="json"), sort_keys=True) for r in records)


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".json.bz2"])
def test_each_compression_reads_the_same_records_with_per_line_rejects(tmp_path: Path, suffix: str) -> None:
    path = write(tmp_path / f"dump{suffix}", dump_text())
    records = list(read_wikidata_dump(path))
    entities = [r for r in records if isinstance(r, WikidataEntity)]
    rejects = [r for r in records if isinstance(r, Reject)]
    assert [e.id for e in entities] == [f"Q{100 + n}" for n in range(20) if n + 2 not in BAD_LINES]
    assert [(r.reason, r.key) for r in rejects] == [
        ("bad_line", f"dump{suffix}:{n}") for n in sorted(BAD_LINES)
    ]
    assert (
        "not JSON" in rejects[0].detail and "str" in rejects[1].detail and "no entity id" in rejects[2].detail
    )
    assert tails(entities[0], "P577") == ["1990"]
    plain = [
        r
        for r in read_wikidata_dump(write(tmp_path / "plain.json", dump_text()))
        if isinstance(r, WikidataEntity)
    ]
    assert entities == plain


def test_lines_without_commas_blank_lines_and_crlf_are_read(tmp_path: Path) -> None:
    text = "[\r\n" + entity_line(0) + ",\r\n\r\n" + entity_line(1) + "\r\n]\r\n"
    records = list(read_wikidata_dump(write(tmp_path / "crlf.json", text)))
    assert [r.id for r in records] == ["Q100", "Q101"]


@pytest.mark.parametrize("suffix", [".json.gz", ".json.bz2"])
def test_a_truncated_compressed_dump_raises_naming_the_file(tmp_path: Path, suffix: str) -> None:
    full = write(tmp_path / f"whole{suffix}", dump_text(count=400, bad={})).read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(full[: len(full) * 2 // 3])
    with pytest.raises(BadInputError, match=rf"cut{suffix}.*ends early after line \d+"):
        list(read_wikidata_dump(cut))


def test_a_file_of_garbage_stops_with_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "junk.json", "\n".join("<html>" for _ in range(MAX_BAD_LINES_IN_A_ROW + 5)))
    with pytest.raises(BadInputError, match="not entities"):
        list(read_wikidata_dump(path))


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("dump.xml", {}, "expected one of"),
        ("missing.json", {}, "no such dump file"),
        ("dump.json", {"shard": 2, "shards": 2}, "shard must be"),
        ("dump.json", {"shards": 0}, "shard must be"),
        ("dump.json", {"limit": -1}, "limit must be"),
    ],
)
def test_bad_arguments_raise_bad_input(tmp_path: Path, name: str, options: dict, message: str) -> None:
    write(tmp_path / "dump.json", dump_text())
    with pytest.raises(BadInputError, match=message):
        read_wikidata_dump(tmp_path / name, **options)  # checked before any reading


def test_limit_caps_the_entity_lines_read(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json.gz", dump_text())
    assert [r.id for r in read_wikidata_dump(path, limit=3)] == ["Q100", "Q101", "Q102"]
    assert list(read_wikidata_dump(path, limit=0)) == []


@pytest.mark.parametrize("suffix", [".json", ".json.gz", ".json.bz2"])
@pytest.mark.parametrize("shards", [2, 3, 7, 64])
def test_shards_together_read_exactly_the_single_read(tmp_path: Path, suffix: str, shards: int) -> None:
    path = write(tmp_path / f"dump{suffix}", dump_text())
    single = list(read_wikidata_dump(path))
    parts = [list(read_wikidata_dump(path, shard=k, shards=shards)) for k in range(shards)]
    assert signature([r for part in parts for r in part]) == signature(single)
    assert sum(1 for part in parts if part) > 1


@pytest.mark.parametrize("suffix", [".json.gz", ".json.bz2"])
@pytest.mark.parametrize("shards", [2, 3, 7])
def test_indexed_shards_of_a_compressed_dump_keep_the_file_order(tmp_path, suffix: str, shards: int) -> None:
    path = write(tmp_path / f"dump{suffix}", dump_text())
    single = list(read_wikidata_dump(path))
    records = wikidata_shards(path, shards=shards, index_dir=tmp_path / "index")
    n = shards
    assert records[0].index and records[0].size == len(dump_text().encode())
    assert sorted(p.name for p in (tmp_path / "index").iterdir())[0].startswith(path.name)
    parts = [
        list(read_wikidata_dump(path, shard=r.shard, shards=n, index=r.index, size=r.size)) for r in records
    ]
    keys = [getattr(r, "id", r.key) for part in parts for r in part]
    assert keys == [getattr(r, "id", r.key) for r in single]
    assert sum(1 for part in parts if part) > 1
    assert wikidata_shards(path, shards=shards, index_dir=tmp_path / "index") == records  # saved index


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=300), min_size=0, max_size=25),
    shards=st.integers(min_value=1, max_value=12),
)
def test_byte_range_shards_split_any_line_layout(sizes: list[int], shards: int) -> None:
    lines = [json.dumps(item(f"Q{n + 1}", labels={"en": "x" * size + "."})) for n, size in enumerate(sizes)]
    text = "[\n" + ",\n".join(lines) + "\n]\n"
    with tempfile.TemporaryDirectory() as folder:
        path = write(Path(folder) / "dump.json", text)
        ids = [r.id for k in range(shards) for r in read_wikidata_dump(path, shard=k, shards=shards)]
    assert sorted(ids, key=lambda q: int(q[1:])) == [f"Q{n + 1}" for n in range(len(sizes))]


def test_read_stage_checkpoints_entities_and_rejects(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.json.bz2", dump_text())
    stage = ReadEntities()
    shards = wikidata_shards(path, shards=3)
    assert [stage.key(s) for s in shards] == ["dump.json.bz2#0/3", "dump.json.bz2#1/3", "dump.json.bz2#2/3"]
    assert WikidataShard.model_validate_json(shards[1].model_dump_json()) == shards[1]
    result = run_stage(stage, shards, StageContext(run_dir=tmp_path / "run"))
    assert result.stats.outputs == 20 - len(BAD_LINES)
    assert result.stats.rejects == Counter({"bad_line": len(BAD_LINES)})
    assert sorted(row["id"] for row in result.rows()) == sorted(
        f"Q{100 + n}" for n in range(20) if n + 2 not in BAD_LINES
    )


# --- the sample dumps -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def samples() -> dict[str, tuple[dict[str, WikidataEntity], list[Reject]]]:
    out = {}
    for name, path in (("old", OLD_DUMP), ("new", NEW_DUMP)):
        records = list(read_wikidata_dump(path))
        out[name] = (
            {r.id: r for r in records if isinstance(r, WikidataEntity)},
            [r for r in records if isinstance(r, Reject)],
        )
    return out


def find(entities: dict[str, WikidataEntity], label: str, description: str = "") -> WikidataEntity:
    (match,) = [e for e in entities.values() if e.label == label and e.description.startswith(description)]
    return match


def truthy(entities: dict[str, WikidataEntity], entity: WikidataEntity, prop: str) -> list[str]:
    return [
        entities[s.tail.id].label if s.tail.type == "entity" else s.tail.text
        for s in entity.statements
        if s.property == prop
    ]


def test_sample_dumps_hold_the_expected_counts(samples: dict) -> None:
    old, old_rejects = samples["old"]
    new, new_rejects = samples["new"]
    assert Counter(e.kind for e in old.values()) == Counter({"item": 300, "property": 58})
    assert Counter(e.kind for e in new.values()) == Counter({"item": 356, "property": 58})
    assert Counter(r.reason for r in old_rejects) == Counter({"no_english_label": 3})
    assert Counter(r.reason for r in new_rejects) == Counter({"no_english_label": 3, "bad_line": 3})
    items = [e for e in new.values() if e.kind == "item"]
    assert all(int(e.id[1:]) >= 9000001 for e in items)
    shared = [e for e in items if e.id in old]
    assert 0.75 <= len(shared) / len(items) <= 0.9
    assert min(e.sitelinks for e in items) == 0 and max(e.sitelinks for e in items) == 60
    assert sum(1 for e in items if e.enwiki) > 0.75 * len(items)


def test_sample_dumps_cover_every_value_type_rank_and_qualifiers(samples: dict) -> None:
    new = [r for r in read_wikidata_dump(NEW_DUMP, keep_all_statements=True) if isinstance(r, WikidataEntity)]
    statements = [s for e in new for s in e.statements]
    types = Counter(s.tail.type for s in statements)
    assert set(types) == {
        "entity",
        "time",
        "quantity",
        "string",
        "monolingualtext",
        "globecoordinate",
        "other",
    }
    assert {s.tail.precision for s in statements if s.tail.type == "time"} >= {7, 8, 9, 10, 11}
    assert any(s.tail.unit for s in statements) and any(
        s.tail.type == "quantity" and not s.tail.unit for s in statements
    )
    assert any(s.rank == "preferred" for s in statements)
    assert {q for s in statements for q in s.qualifiers} >= {"P580", "P582", "P585", "P291", "P1686", "P4633"}


def test_sample_dumps_differ_the_way_the_readme_says(samples: dict) -> None:
    old, _ = samples["old"]
    new, _ = samples["new"]
    assert truthy(old, find(old, "Vellmouth", "town"), "P1082") == ["17900"]
    assert truthy(new, find(new, "Vellmouth", "town"), "P1082") == ["18400"]
    old_pm, new_pm = (truthy(d, find(d, "Aldermark"), "P6") for d in (old, new))
    assert len(old_pm) == len(new_pm) == 1 and old_pm != new_pm
    assert [s.rank for s in find(new, "Aldermark").statements if s.property == "P6"] == ["preferred"]
    assert len(truthy(new, find(new, "Corvenna"), "P6")) == 2  # both heads normal: no single answer
    assert truthy(old, find(old, "Lunesse"), "P1082") == ["1210507"]
    assert truthy(new, find(new, "Lunesse"), "P1082") == ["121050"]  # the typo is deprecated
    bridge = find(new, "Vellmouth Harbour Bridge")
    assert bridge.id not in old and truthy(new, bridge, "P1619") == ["12 March 2024"]
    assert truthy(new, bridge, "P631") == ["Ilse Marrow"]
    assert truthy(new, find(new, "Sundria"), "P36") == ["Halmstrand"]
    assert truthy(new, find(new, "Portavelle"), "P571") == ["350 BCE"]
    assert truthy(new, find(new, "Aldermark"), "P1448") == ["Kingdom of Aldermark"]
    assert (
        truthy(new, find(new, "Skarra"), "P6") == []
        and truthy(new, find(new, "The Salt Road Tapes"), "P57") == []
    )
    assert any(e.label == "Brennholt Engine Company" for e in old.values())
    assert find(new, "Brennholt Motorenwerke").id in old


def test_sample_dumps_have_four_hop_chains_with_single_answers(samples: dict) -> None:
    new, _ = samples["new"]

    def only(head: str, prop: str) -> str | None:
        found = [s.tail.id for s in new[head].statements if s.property == prop and s.tail.type == "entity"]
        return found[0] if len(found) == 1 and found[0] in new else None

    chains = []
    for film in (e for e in new.values() if e.description.split(" ")[1:3] == ["Aldish", "film"]):
        path = [film.id]
        for prop in ("P57", "P19", "P17", "P36"):
            nxt = only(path[-1], prop)
            if nxt is None or nxt in path:
                break
            path.append(nxt)
        if len(path) == 5:
            chains.append(path)
    assert len(chains) >= 3


def test_the_generator_reproduces_the_sample_files_byte_for_byte() -> None:
    spec = importlib.util.spec_from_file_location("wikidata_make_samples", SAMPLES / "make_samples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    try:
        spec.loader.exec_module(module)
        rendered = module.render()
    finally:
        del sys.modules[spec.name]
    assert sorted(rendered) == ["wikidata-new.json.bz2", "wikidata-old.json.gz"]
    for name, data in rendered.items():
        assert data == (SAMPLES / name).read_bytes(), name


# --- selection ------------------------------------------------------------------------------------------


def test_a_filter_drops_items_before_parsing_and_keeps_every_property(tmp_path: Path) -> None:
    everything = [r for r in read_wikidata_dump(NEW_DUMP) if isinstance(r, WikidataEntity)]
    kept = list(read_wikidata_dump(NEW_DUMP, keep=EntityFilter(min_sitelinks=3)))
    items = {e.id for e in kept if isinstance(e, WikidataEntity) and e.kind == "item"}
    assert items == {e.id for e in everything if e.kind == "item" and e.sitelinks >= 3}
    properties = {e.id for e in everything if e.kind == "property"}
    assert properties and properties <= {e.id for e in kept if isinstance(e, WikidataEntity)}
    dropped = [r for r in kept if isinstance(r, Reject) and r.reason == "few_sitelinks"]
    assert dropped and all(r.stage == "read" and r.key.startswith("Q") for r in dropped)
    assert dropped[0].detail.endswith("fewer than 3")

    listed = tmp_path / "ids.txt"
    wanted = sorted(items)[:5]
    listed.write_text("# five items\n\n" + "\n".join(wanted) + "\n", encoding="utf-8")
    shard = WikidataShard(path=str(NEW_DUMP), entities=str(listed), min_sitelinks=3)
    records = list(ReadEntities().process(shard, StageContext(run_dir=tmp_path)))
    assert sorted(r.id for r in records if isinstance(r, WikidataEntity) and r.kind == "item") == wanted
    assert Counter(r.reason for r in records if isinstance(r, Reject))["not_listed"] > 0


@pytest.mark.parametrize(
    ("text", "message"),
    [("Q1\nQ01\n", r"ids.txt:2: 'Q01' is not"), ("Q1\nL5\n", r"ids.txt:2: 'L5' is not"), ("Q1 Q2\n", ":1:")],
)
def test_an_entity_list_names_its_bad_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "ids.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInputError, match=message):
        load_entity_ids(path)


def test_an_entity_list_skips_blanks_and_comments_and_the_filter_checks_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "ok.txt"
    path.write_text("Q1\n  P31 \n\n#Q9\n", encoding="utf-8")
    assert load_entity_ids(path) == {"Q1", "P31"}
    with pytest.raises(BadInputError, match="cannot read the entity list"):
        load_entity_ids(tmp_path / "missing.txt")
    with pytest.raises(BadInputError, match="--min-sitelinks"):
        EntityFilter(min_sitelinks=-1)

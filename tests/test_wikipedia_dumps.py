"""Dump readers: XML (plain, bz2, multistream shards), CirrusSearch, filters, skips, broken files."""

from __future__ import annotations

import bz2
import gzip
import json
import shutil
from pathlib import Path

import pytest

from irbgen.errors import BadInputError
from irbgen.records import Reject
from irbgen.wikipedia.dumps import (
    PageFilter,
    ReadStats,
    cirrus_topics,
    count_refs,
    dump_format,
    find_multistream_index,
    is_disambiguation,
    load_titles,
    normalize_title,
    plan_shards,
    read_cirrus_dump,
    read_dump,
    read_multistream_index,
    read_xml_dump,
)
from irbgen.wikipedia.records import Page

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "wiki"
XML = SAMPLES / "sample-pages-articles.xml"
XML_BZ2 = SAMPLES / "sample-pages-articles.xml.bz2"
MULTI = SAMPLES / "sample-pages-articles-multistream.xml.bz2"
INDEX = SAMPLES / "sample-pages-articles-multistream-index.txt"
CIRRUS = SAMPLES / "sample-cirrus.json.gz"
ARTICLE_IDS = [1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1012]
XML_SKIPS = {"redirect": 1, "namespace": 1, "disambiguation": 1}


def pages(records: object) -> list[Page]:
    out = list(records)  # type: ignore[call-overload]
    assert all(isinstance(r, Page) for r in out), [r for r in out if not isinstance(r, Page)]
    return out


def signature(p: Page) -> tuple[int, str, str, str | None]:
    return (p.page_id, p.title, p.wikitext, p.revision_timestamp)


@pytest.mark.parametrize("path", [XML, XML_BZ2, MULTI, CIRRUS], ids=lambda p: p.name)
def test_every_format_gives_the_same_articles(path: Path) -> None:
    reference = [signature(p) for p in pages(read_xml_dump(XML))]
    got = pages(read_dump(path))
    assert [p.page_id for p in got] == ARTICLE_IDS
    assert [signature(p) for p in got] == reference
    assert all(p.dump == path.name for p in got)


def test_xml_page_fields() -> None:
    bridge = pages(read_xml_dump(XML))[1]
    assert bridge.title == "Vellmouth Harbour Bridge"
    assert bridge.revision_timestamp == "2025-01-20T09:15:40Z"
    assert bridge.wikitext.startswith("{{Short description|Road bridge")
    assert bridge.created is None and bridge.popularity is None and bridge.topics == []


def test_cirrus_page_fields() -> None:
    bridge = pages(read_cirrus_dump(CIRRUS))[1]
    assert bridge.created == "2024-03-13T07:45:12Z"
    assert bridge.popularity == pytest.approx(2.6e-7)
    assert bridge.wikidata_id == "Q98760002"
    assert bridge.topics == [
        "STEM.Engineering",
        "Geography.Regions.Europe.Northern Europe",
        "STEM.Technology",
    ]


def test_cirrus_topic_formats() -> None:
    doc = {
        "ores_articletopics": ["Culture.Media.Media*|529", "articletopic/STEM.Space|0.93"],
        "weighted_tags": ["classification.ores.articletopic/History and Society.Politics|900", "other/x|1"],
    }
    assert cirrus_topics(doc) == ["History and Society.Politics", "Culture.Media.Media*", "STEM.Space"]
    assert cirrus_topics({}) == []


def test_skipped_pages_are_counted_by_reason() -> None:
    stats = ReadStats()
    assert len(pages(read_xml_dump(XML, stats=stats))) == 9
    assert stats.seen == 12 and stats.pages == 9
    assert dict(stats.skipped) == XML_SKIPS
    cirrus = ReadStats()  # Cirrus has no redirect documents
    list(read_cirrus_dump(CIRRUS, stats=cirrus))
    assert dict(cirrus.skipped) == {"namespace": 1, "disambiguation": 1}
    assert cirrus.as_dict() == {
        "seen": 11,
        "pages": 9,
        "skipped": {"disambiguation": 1, "namespace": 1},
        "rejected": {},
    }


def test_skipped_pages_as_rejects() -> None:
    records = list(read_xml_dump(XML, emit_skipped=True))
    rejects = [r for r in records if isinstance(r, Reject)]
    assert {(r.key, r.reason) for r in rejects} == {
        ("1009", "redirect"),
        ("1010", "disambiguation"),
        ("1011", "namespace"),
    }
    assert all(r.stage == "read_dump" for r in rejects)


@pytest.mark.parametrize("shards", [2, 3])
def test_multistream_shards_cover_every_page_once(shards: int) -> None:
    assert find_multistream_index(MULTI) == INDEX
    whole = ReadStats()
    expected = [p.page_id for p in pages(read_xml_dump(MULTI, stats=whole))]
    seen: list[int] = []
    merged = ReadStats()
    for shard in range(shards):
        stats = ReadStats()
        seen += [p.page_id for p in pages(read_xml_dump(MULTI, shard, shards, stats=stats))]
        merged = merged + stats
    assert sorted(seen) == sorted(expected) == ARTICLE_IDS
    assert len(seen) == len(set(seen))
    assert merged == whole


def test_each_multistream_shard_reads_only_its_streams() -> None:
    offsets = read_multistream_index(INDEX)
    plan = plan_shards(offsets, MULTI.stat().st_size, 3)
    assert sorted(o for shard in plan for o in shard) == offsets
    assert all(shard for shard in plan)
    first = pages(read_xml_dump(MULTI, 0, 3))
    assert [p.page_id for p in first] == [1001, 1002, 1003, 1004]  # the streams at offsets 450 and 3470


def test_plan_shards_balances_bytes() -> None:
    plan = plan_shards([100, 200, 300, 1000, 1100], 1200, 2)  # a stream goes where it starts
    assert plan == [[100, 200, 300], [1000, 1100]]
    assert plan_shards([100], 500, 4) == [[100], [], [], []]


@pytest.mark.parametrize("path", [XML_BZ2, CIRRUS], ids=lambda p: p.name)
def test_round_robin_shards_for_other_files(path: Path) -> None:
    """A compressed XML dump without a block index, and a Cirrus dump (a plain XML file: byte ranges,
    tests/test_xml_byte_ranges.py)."""
    parts = [[p.page_id for p in pages(read_dump(path, k, 2))] for k in range(2)]
    assert sorted(parts[0] + parts[1]) == ARTICLE_IDS
    assert not set(parts[0]) & set(parts[1])


def test_bad_shard_arguments() -> None:
    with pytest.raises(BadInputError, match="shard"):
        read_xml_dump(XML, 2, 2)
    with pytest.raises(BadInputError, match="shard"):
        read_cirrus_dump(CIRRUS, 0, 0)


def test_title_filter_from_file(tmp_path: Path) -> None:
    titles = tmp_path / "titles.txt"
    titles.write_text("# wanted\nLake_Orrin\nilse Marrow\n\nNo Such Page\n", encoding="utf-8")
    wanted = load_titles(titles)
    assert wanted == {"Lake Orrin", "Ilse Marrow", "No Such Page"}
    stats = ReadStats()
    got = pages(read_xml_dump(XML, filters=PageFilter(titles=wanted), stats=stats))
    assert [p.title for p in got] == ["Lake Orrin", "Ilse Marrow"]
    assert stats.skipped["title_filter"] == 7
    with pytest.raises(BadInputError, match="missing.txt"):
        load_titles(tmp_path / "missing.txt")


def test_limit_and_min_citations() -> None:
    assert [p.page_id for p in pages(read_xml_dump(XML, filters=PageFilter(limit=3)))] == [1001, 1002, 1003]
    assert list(read_xml_dump(XML, filters=PageFilter(limit=0))) == []
    stats = ReadStats()
    got = pages(read_xml_dump(XML, filters=PageFilter(min_citations=5), stats=stats))
    assert 1012 not in [p.page_id for p in got]  # Fennick Bay has one <ref>
    assert stats.skipped["min_citations"] == 1
    assert count_refs('a<ref name="x">b</ref> c<ref name=x/> <references/> <REF>d</REF>') == 3


def test_creation_filters_on_cirrus() -> None:
    stats = ReadStats()
    in_2024 = PageFilter(created_after="2024-01-01", created_before="2025-01-01")
    got = pages(read_cirrus_dump(CIRRUS, filters=in_2024, stats=stats))
    assert [p.title for p in got] == ["Vellmouth Harbour Bridge", "Lake Orrin", "Ilse Marrow", "Fennick Bay"]
    assert stats.skipped["created_filter"] == 5
    late = pages(read_cirrus_dump(CIRRUS, filters=PageFilter(created_after="2025-04-09T12:00:00Z")))
    assert [p.title for p in late] == ["Brightwater Robotics", "Vellmouth Orchid Festival"]  # inclusive bound


def test_creation_filters_are_impossible_on_xml() -> None:
    with pytest.raises(BadInputError, match="creation dates"):
        read_xml_dump(XML, filters=PageFilter(created_after="2024-01-01"))
    with pytest.raises(BadInputError, match="ISO 8601"):
        PageFilter(created_before="last year")


def test_disambiguation_and_redirect_detection() -> None:
    for text in [
        "{{disambiguation}}",
        "x\n{{Disambig|geo}}",
        "{{hndis|Smith}}",
        "{{Place name disambiguation}}",
        "{{dab}}",
        "list\n__DISAMBIG__",
        "{{ Disambiguation | surname }}",
    ]:
        assert is_disambiguation(text), text
    for text in [
        "{{Disambiguation needed|date=May 2024}}",
        "{{About|the lake|other uses|Orrin (disambiguation)}}",
        "See [[Orrin (disambiguation)]].",
        "{{dablink|x}}",
    ]:
        assert not is_disambiguation(text), text


def test_redirect_without_redirect_tag(tmp_path: Path) -> None:
    xml = XML.read_text(encoding="utf-8").replace('    <redirect title="Vellmouth Harbour Bridge" />\n', "")
    assert "<redirect" not in xml
    path = tmp_path / "no-redirect-tag.xml"
    path.write_text(xml, encoding="utf-8")
    stats = ReadStats()
    list(read_xml_dump(path, stats=stats))
    assert dict(stats.skipped) == XML_SKIPS


def test_normalize_title() -> None:
    assert normalize_title("lake_orrin ") == "Lake orrin"
    assert normalize_title("  Ilse   Marrow") == "Ilse Marrow"


def test_dump_format() -> None:
    assert dump_format("enwiki-20250929-cirrussearch-content.json.gz") == "cirrus"
    assert dump_format(MULTI) == "xml"


# --- broken input --------------------------------------------------------------------------------------


def test_truncated_bz2_names_the_file(tmp_path: Path) -> None:
    data = XML_BZ2.read_bytes()
    path = tmp_path / "truncated.xml.bz2"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInputError, match=r"truncated\.xml\.bz2.*(ends early|truncated)"):
        list(read_xml_dump(path))


def test_corrupt_bz2_names_the_file(tmp_path: Path) -> None:
    data = bytearray(XML_BZ2.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    path = tmp_path / "corrupt.xml.bz2"
    path.write_bytes(bytes(data))
    with pytest.raises(BadInputError, match=r"corrupt\.xml\.bz2"):
        list(read_xml_dump(path))


def test_broken_xml_names_file_and_line(tmp_path: Path) -> None:
    xml = XML.read_text(encoding="utf-8")
    broken = xml.replace(
        "</title>\n    <ns>0</ns>\n    <id>1003</id>", "\n    <ns>0</ns>\n    <id>1003</id>", 1
    )
    path = tmp_path / "broken.xml"
    path.write_text(broken, encoding="utf-8")
    records = read_xml_dump(path)
    got: list[int] = []
    with pytest.raises(BadInputError, match=r"broken\.xml: .*line \d+, column \d+"):
        for record in records:
            got.append(record.page_id)  # type: ignore[union-attr]
    assert got == [1001, 1002]  # the pages before the break were read


def test_not_a_mediawiki_export(tmp_path: Path) -> None:
    path = tmp_path / "other.xml"
    path.write_text("<html><body>hello</body></html>", encoding="utf-8")
    with pytest.raises(BadInputError, match="other.xml"):
        list(read_xml_dump(path))


def test_truncated_multistream_names_the_offset(tmp_path: Path) -> None:
    data = MULTI.read_bytes()
    offsets = read_multistream_index(INDEX)
    path = tmp_path / "cut-multistream.xml.bz2"
    shutil.copy(INDEX, tmp_path / "cut-multistream-index.txt")
    path.write_bytes(data[: offsets[-1] + 100])  # the last page stream is cut
    with pytest.raises(
        BadInputError, match=rf"cut-multistream\.xml\.bz2: .*offset {offsets[-1]}.*ends early"
    ):
        list(read_xml_dump(path))
    path.write_bytes(data[: offsets[2] + 100])  # the index now points past the end of the file
    with pytest.raises(BadInputError, match="beyond the end of"):
        read_xml_dump(path)


def test_index_that_does_not_match_the_file(tmp_path: Path) -> None:
    bad_index = tmp_path / "index.txt"
    bad_index.write_text("455:1001:Vellmouth\n", encoding="utf-8")  # not the start of a stream
    with pytest.raises(BadInputError, match="offset 455"):
        list(read_xml_dump(MULTI, index=bad_index))
    bad_index.write_text("99999999:1001:Vellmouth\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="beyond the end"):
        read_xml_dump(MULTI, index=bad_index)
    bad_index.write_text("450:1001:Vellmouth\nnot an index line\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"index\.txt:2"):
        read_xml_dump(MULTI, index=bad_index)


def test_compressed_index(tmp_path: Path) -> None:
    shutil.copy(MULTI, tmp_path / "x-multistream.xml.bz2")
    (tmp_path / "x-multistream-index.txt.bz2").write_bytes(bz2.compress(INDEX.read_bytes()))
    assert [p.page_id for p in pages(read_xml_dump(tmp_path / "x-multistream.xml.bz2"))] == ARTICLE_IDS


def _cirrus_lines() -> list[bytes]:
    return gzip.decompress(CIRRUS.read_bytes()).splitlines()


def test_bad_cirrus_document_is_a_reject(tmp_path: Path) -> None:
    lines = _cirrus_lines()
    lines[5] = lines[5][:40]  # the third document (Lake Orrin) is cut short
    lines[9] = json.dumps({"namespace": 0, "page_id": 1005}).encode()  # no title or text
    path = tmp_path / "bad-line.json.gz"
    path.write_bytes(gzip.compress(b"\n".join(lines) + b"\n"))
    stats = ReadStats()
    records = list(read_cirrus_dump(path, stats=stats))
    rejects = [r for r in records if isinstance(r, Reject)]
    assert [(r.reason, r.key) for r in rejects] == [("bad_document", "1003"), ("bad_document", "1005")]
    assert "bad-line.json.gz:6" in rejects[0].detail
    assert [p.page_id for p in records if isinstance(p, Page)] == [
        i for i in ARTICLE_IDS if i not in (1003, 1005)
    ]
    assert dict(stats.rejected) == {"bad_document": 2}


def test_cirrus_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "garbage.json.gz"
    path.write_bytes(gzip.compress(b"this is not json\nnor is this\n"))
    with pytest.raises(BadInputError, match=r"garbage\.json\.gz:1"):
        list(read_cirrus_dump(path))


def test_truncated_cirrus_gzip(tmp_path: Path) -> None:
    data = CIRRUS.read_bytes()
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInputError, match=r"cut\.json\.gz"):
        list(read_cirrus_dump(path))


def test_missing_file() -> None:
    with pytest.raises(BadInputError, match="nope.xml"):
        read_xml_dump(SAMPLES / "nope.xml")

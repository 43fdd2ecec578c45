"""An XML dump read in byte ranges: plain, or compressed through a saved block index (irbgen.seekable).

Each shard reads the pages whose <page> tag starts in its part of the uncompressed file, so the shards
in order hold every page once, in the file's order, whatever the number of shards."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pytest

from irbgen.builds.wikipedia import WikipediaBuildConfig, dump_shards
from irbgen.errors import BadInputError
from irbgen.records import Reject
from irbgen.seekable import build_index
from irbgen.wikipedia import dumps
from irbgen.wikipedia.dumps import read_xml_dump
from irbgen.wikipedia.records import Page
from irbgen.wikipedia.stages import ReadPages

HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
    "  <siteinfo><sitename>Test</sitename><dbname>testwiki</dbname><base>https://test.invalid/</base>"
    "<generator>MediaWiki 1.40</generator><case>first-letter</case><namespaces>"
    '<namespace key="0" case="first-letter" /><namespace key="4" case="first-letter">Project</namespace>'
    "</namespaces></siteinfo>\n"
)


def page(number: int) -> str:
    """A page whose text says "<page>" and "</mediawiki>" (escaped, as in every export) and is long or
    short by its number, so that pages fall across range and chunk boundaries."""
    namespace = 4 if number % 7 == 3 else 0
    text = f"Page {number} writes &lt;page&gt; and &lt;/mediawiki&gt; in its text. "
    text += "x" * (number * 37 % 400)
    return (
        f"  <page>\n    <title>{'Project:' if namespace else ''}Page {number}</title>\n"
        f"    <ns>{namespace}</ns>\n    <id>{number}</id>\n"
        f"    <revision>\n      <id>{number + 1000}</id>\n"
        f"      <timestamp>2024-01-0{number % 9 + 1}T00:00:00Z</timestamp>\n"
        f'      <text bytes="{len(text)}" xml:space="preserve">{text}</text>\n'
        "    </revision>\n  </page>\n"
    )


def export(pages: int) -> bytes:
    return (HEADER + "".join(page(n) for n in range(1, pages + 1)) + "</mediawiki>\n").encode()


def read(path: Path, shard: int, shards: int, **options: object) -> list[tuple[str, object]]:
    return [
        ("page", r.page_id) if isinstance(r, Page) else (r.reason, r.key)
        for r in read_xml_dump(path, shard, shards, emit_skipped=True, **options)  # type: ignore[arg-type]
    ]


def in_shards(path: Path, shards: int, **options: object) -> list[list[tuple[str, object]]]:
    return [read(path, shard, shards, **options) for shard in range(shards)]


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    path = tmp_path / "pages-articles.xml"
    path.write_bytes(export(40))
    return path


@pytest.mark.parametrize("shards", [2, 3, 7, 40, 90])
def test_plain_xml_shards_hold_every_page_once_in_order(plain: Path, shards: int) -> None:
    whole = read(plain, 0, 1)
    assert len(whole) == 40 and ("namespace", "3") in whole
    parts = in_shards(plain, shards, size=plain.stat().st_size)
    assert [item for part in parts for item in part] == whole
    if shards <= 7:
        assert all(parts)  # every shard has pages to read


def test_pages_across_chunk_boundaries(plain: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = read(plain, 0, 1)
    for chunk in (3, 7, 64):  # smaller than a tag, about a tag, a few lines
        monkeypatch.setattr(dumps, "CHUNK", chunk)
        parts = in_shards(plain, 5, size=plain.stat().st_size)
        assert [item for part in parts for item in part] == whole, chunk


@pytest.mark.parametrize("suffix", [".xml.bz2", ".xml.gz"])
def test_compressed_shards_read_through_the_block_index(tmp_path: Path, suffix: str) -> None:
    data = export(60)
    path = tmp_path / f"pages-articles{suffix}"
    path.write_bytes(bz2.compress(data) if suffix.endswith("bz2") else gzip.compress(data))
    index, size = build_index(path, tmp_path / "index")
    assert size == len(data)
    whole = read(path, 0, 1)
    parts = in_shards(path, 4, size=size, seek_index=index)
    assert [item for part in parts for item in part] == whole
    assert all(parts)


def test_a_file_without_pages_gives_none(tmp_path: Path) -> None:
    path = tmp_path / "empty.xml"
    path.write_bytes((HEADER + "</mediawiki>\n").encode())
    assert in_shards(path, 3, size=path.stat().st_size) == [[], [], []]


def test_a_file_that_is_not_an_export_is_named(tmp_path: Path) -> None:
    path = tmp_path / "notes.xml"
    path.write_bytes(b"<notes>" + b"n" * (dumps.MAX_HEADER_BYTES + 10) + b"</notes>")
    with pytest.raises(BadInputError, match=r"notes\.xml: no <page>"):
        read(path, 1, 2, size=path.stat().st_size)


def test_a_cut_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "cut.xml"
    data = export(20)
    path.write_bytes(data[: len(data) * 3 // 4])  # the last shard's XML ends inside a page
    read(path, 0, 2, size=path.stat().st_size)
    with pytest.raises(BadInputError, match=r"cut\.xml: broken XML in uncompressed bytes"):
        read(path, 1, 2, size=path.stat().st_size)


def test_a_corrupt_compressed_range_is_named(tmp_path: Path) -> None:
    data = export(300)
    good = tmp_path / "good.xml.bz2"
    good.write_bytes(bz2.compress(data))
    index, size = build_index(good, tmp_path / "index")
    broken = bytearray(good.read_bytes())
    broken[len(broken) // 2 : len(broken) // 2 + 64] = b"\x00" * 64
    bad = tmp_path / "bad.xml.bz2"
    bad.write_bytes(bytes(broken))
    with pytest.raises(BadInputError, match=r"bad\.xml\.bz2"):
        for shard in range(2):
            read(bad, shard, 2, size=size, seek_index=index)


def test_the_build_indexes_a_compressed_dump_once_and_shards_by_range(tmp_path: Path) -> None:
    data = export(30)
    path = tmp_path / "pages-articles.xml.bz2"
    path.write_bytes(bz2.compress(data))
    config = WikipediaBuildConfig(dump=path, shards=3, offline=True)
    shards = dump_shards(config, tmp_path / "dump-index")
    assert [s.size for s in shards] == [len(data)] * 3
    assert all(s.seek_index and Path(s.seek_index).parent == tmp_path / "dump-index" for s in shards)
    assert [s.key for s in shards] == [f"pages-articles.xml.bz2#{k}/3@{len(data)}" for k in range(3)]
    stage = ReadPages()
    read_back = [r for s in shards for r in stage.process(s, None) if not isinstance(r, Reject)]  # type: ignore[arg-type]
    assert [p.page_id for p in read_back] == [n for n in range(1, 31) if n % 7 != 3]
    # without a folder for the index, or with one shard, the shards are as before: round-robin keys
    assert [s.key for s in dump_shards(config)] == [f"pages-articles.xml.bz2#{k}/3" for k in range(3)]
    one = WikipediaBuildConfig(dump=path, shards=1, offline=True)
    assert dump_shards(one, tmp_path / "dump-index")[0].size is None


@pytest.mark.parametrize("suffix", [".xml.bz2", ".xml.gz"])
def test_a_broken_dump_stops_the_index_with_its_name(tmp_path: Path, suffix: str) -> None:
    """Indexing decompresses the whole file in the driver: a corrupt or cut file is a clear error there."""
    data = export(300) * 20
    packed = bytearray(bz2.compress(data, 1) if suffix.endswith("bz2") else gzip.compress(data))
    packed[len(packed) // 2 : len(packed) // 2 + 200] = bytes(range(200))
    broken = tmp_path / f"broken{suffix}"
    broken.write_bytes(bytes(packed))
    with pytest.raises(BadInputError, match=r"broken\.xml\.(bz2|gz): cannot decompress it to index it"):
        build_index(broken, tmp_path / "index")
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(bytes(packed[: len(packed) // 3]))
    with pytest.raises(BadInputError, match=r"cut\.xml\.(bz2|gz): cannot decompress it to index it"):
        build_index(cut, tmp_path / "index")
    assert not list((tmp_path / "index").glob("*.size"))  # nothing a rerun would take for an index

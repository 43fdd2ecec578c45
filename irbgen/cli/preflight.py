"""Checks a build makes before its first stage: every value option parsed, every input file sniffed.

A WARC is read to its first record, a dump to its first page or entity, a list file in full; a bad
one is refused with one line (exit 2) before any stage, lock or model call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.listfile import read_list_file
from irbgen.llm.settings import check_endpoint_url

# Counts that size loops, pools or lists before any record is read: beyond these a run cannot finish.
MAXIMA = {
    "shards": 100_000,
    "processes": 1024,
    "llm_concurrency": 10_000,
    "fetch_concurrency": 10_000,
    "per_host": 10_000,
    "per_hop": 10_000_000,
    "chunk_tokens": 1_000_000,
    "answers_per_fact": 4,
    "ray_io_actors": 1024,
    "ray_max_retries": 100,
}


def check_counts(config: Any) -> None:
    """Refuse counts no run could honour (a pool of 10**30 processes), naming the flag and the limit."""
    for name, limit in MAXIMA.items():
        count = getattr(config, name, None)
        if isinstance(count, int) and count > limit:
            raise BadInputError(f"--{name.replace('_', '-')} {count}: at most {limit:,}")


def check_build_inputs(config: Any) -> None:
    """Parse the value options and sniff the input files of a Wikipedia or Wikidata build config."""
    check_counts(config)
    check_endpoint_url(getattr(config, "base_url", None))
    if config.llm != "rules":
        from irbgen.llm.run_client import run_settings

        run_settings(config, None)  # model, key variable, limits and budget, before any directory
    if hasattr(config, "from_facts"):
        _check_wikipedia(config)
    else:
        _check_wikidata(config)


def _check_wikipedia(config: Any) -> None:
    from irbgen.builds.wikipedia import parse_reference_date
    from irbgen.wikipedia.dumps import PageFilter

    PageFilter(created_after=config.created_after, created_before=config.created_before)
    if config.reference_date is not None:
        parse_reference_date(config.reference_date)
        if len(config.reference_date.strip()) != 10:
            raise BadInputError(f"--reference-date {config.reference_date!r}: expected YYYY-MM-DD")
    if config.titles is not None:
        _list_file(config.titles, "--titles")
    if config.index is not None:
        _readable(config.index, "--index")
    if config.dump is not None:
        sniff_wikipedia_dump(config.dump)
    for path in config.warc:
        sniff_warc(path)


def _check_wikidata(config: Any) -> None:
    from irbgen.builds.wikidata import _check_inputs
    from irbgen.wikidata.labels import parse_mix

    _check_inputs(config)  # files exist, options that need each other, --hops
    if config.mix is not None:
        parse_mix(config.mix)
    if config.entities is not None:
        _list_file(config.entities, "--entities")
    if config.counts_file is not None:
        _readable(config.counts_file, "--counts-file")
    for name in ("dump", "old_dump"):
        path = getattr(config, name)
        if path is not None:
            sniff_wikidata_dump(path, "--" + name.replace("_", "-"))
    if config.wikipedia_dump is not None:
        sniff_wikipedia_dump(config.wikipedia_dump, "--wikipedia-dump")


def _readable(path: Path, flag: str) -> None:
    try:
        with open(path, "rb") as file:
            file.read(1)
    except OSError as error:
        raise BadInputError(f"{path}: cannot read {flag}: {error.strerror}") from None


def _list_file(path: Path, flag: str) -> None:
    _readable(path, flag)
    read_list_file(path, flag)


def sniff_wikipedia_dump(path: Path, flag: str = "--dump") -> None:
    """Read a Wikipedia dump to its first page (kept or skipped); BadInputError if that fails."""
    from irbgen.wikipedia.dumps import read_dump

    _readable(path, flag)
    try:
        first = next(iter(read_dump(path, 0, 1, emit_skipped=True)), None)
    except BadInputError:
        raise
    except Exception as error:  # a broken archive: EOFError, OSError, XML errors, ...
        raise BadInputError(f"{path}: not a readable Wikipedia dump ({flag}): {_reason(error)}") from None
    if first is None:
        raise BadInputError(f"{path}: no page in the Wikipedia dump ({flag})")


def sniff_wikidata_dump(path: Path, flag: str = "--dump") -> None:
    """Read a Wikidata JSON dump to its first entity line; BadInputError if that fails."""
    from irbgen.wikidata.dumps import read_wikidata_dump

    _readable(path, flag)
    try:
        first = next(iter(read_wikidata_dump(path, limit=1)), None)
    except BadInputError:
        raise
    except Exception as error:  # a broken archive: EOFError, OSError, ...
        raise BadInputError(f"{path}: not a readable Wikidata dump ({flag}): {_reason(error)}") from None
    if first is None:
        raise BadInputError(f"{path}: no entity in the Wikidata dump ({flag})")


def sniff_warc(path: Path) -> None:
    """Read a WARC file to the end of its first record and check its end; BadInputError if not.

    warcio reads a truncated file without complaint (it just stops), so the end is checked too: every
    gzip member of a compressed file must be whole, and an uncompressed file must end as a record does.
    """
    from warcio.archiveiterator import ArchiveIterator

    _readable(path, "--warc")
    try:
        with open(path, "rb") as handle:
            record = next(iter(ArchiveIterator(handle)), None)
            if record is None:
                raise BadInputError(f"{path}: no record in the WARC file (--warc)")
            record.content_stream().read()
        with open(path, "rb") as handle:
            gzipped = handle.read(2) == b"\x1f\x8b"
            handle.seek(max(0, path.stat().st_size - 4))
            tail = handle.read()
        if gzipped:
            _check_gzip_members(path)
        elif tail != b"\r\n\r\n":
            raise BadInputError(f"{path}: truncated WARC file (--warc): it does not end with a whole record")
    except BadInputError:
        raise
    except Exception as error:  # warcio raises ArchiveLoadFailed, and zlib/OS errors pass through
        raise BadInputError(f"{path}: not a readable WARC file (--warc): {_reason(error)}") from None


def _check_gzip_members(path: Path) -> None:
    import zlib

    with open(path, "rb") as file:
        decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        started = False
        while chunk := file.read(1 << 20):
            while chunk:
                started = True
                decoder.decompress(chunk, 0)
                if not decoder.eof:
                    break
                chunk = decoder.unused_data
                decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
                started = False
    if started:
        raise BadInputError(f"{path}: truncated WARC file (--warc): its last gzip member is cut short")


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    text = text.encode("ascii", "backslashreplace").decode("ascii")  # binary junk stays one short line
    return text if len(text) <= 120 else text[:117] + "..."

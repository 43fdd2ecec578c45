"""The floor under part 1's CPU an article: what its libraries alone cost, against the whole build.

    python bench/citing_warc.py /work/shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 cited.warc.gz
    python bench/part1_floor.py /work/shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 cited.warc.gz \
        --copies 20

Repeats DUMP's pages COPIES times (as bench/ray_speed.py does) and builds part 1 of that once on one
process (`--processes 1`, offline from WARC, facts only), recording every text the build hands to a spaCy
pipeline (and which pipeline) and every wikitext it parses. Then, in the same process, it times (best of
ROUNDS) what the libraries alone do for those articles:

- reading the dump: bz2 and mwxml, every page's text, nothing else;
- mwparserfromhell: the build's calls of `mwparserfromhell.parse`, recorded and made again;
- spaCy: the recorded texts parsed again, call by call, by the same pipelines, in the same batches.

Prints one JSON line: the build's CPU milliseconds an article (this process and its children) and each
floor part's. The difference is irbgen's own work: rules, gates, rendering, records and checkpoints.
At 10 articles per CPU-second an article may cost 100 ms in all.
"""

from __future__ import annotations

import argparse
import bz2
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ray_speed import cpu_seconds, repeat_dump  # noqa: E402

SpacyCall = tuple[Any, list[str], dict[str, Any]]


def record_spacy_calls() -> list[SpacyCall]:
    """Wrap spaCy's Language.pipe and Language.__call__ so that each call's pipeline, texts and batch size
    are kept."""
    from spacy.language import Language

    calls: list[SpacyCall] = []
    pipe, call = Language.pipe, Language.__call__

    def recorded_pipe(self: Any, texts: Any, *args: Any, **kwargs: Any) -> Any:
        texts = list(texts)
        calls.append((self, texts, {"batch_size": kwargs.get("batch_size")}))
        return pipe(self, texts, *args, **kwargs)

    def recorded_call(self: Any, text: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append((self, [text], {}))
        return call(self, text, *args, **kwargs)

    Language.pipe, Language.__call__ = recorded_pipe, recorded_call
    return calls


def record_wikitext_calls() -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Wrap mwparserfromhell.parse so that each call's arguments are kept."""
    import mwparserfromhell

    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    parse = mwparserfromhell.parse

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return parse(*args, **kwargs)

    mwparserfromhell.parse = recorded
    return calls


def build(dump: Path, warc: Path, run: Path) -> tuple[float, int]:
    """Part 1 of DUMP on one process: its CPU seconds and the kept articles."""
    from irbgen.builds.wikipedia import WikipediaBuildConfig, build_wikipedia

    config = WikipediaBuildConfig(dump=dump, warc=[warc], offline=True, facts_only=True, processes=1)
    started = cpu_seconds()
    output = build_wikipedia(config, run)
    return cpu_seconds() - started, output.manifest.counts["pages"]


def read_dump(dump: Path) -> int:
    """Every page's text of DUMP through bz2 and mwxml; the pages read."""
    import mwxml

    pages = 0
    with bz2.open(dump, "rb") as stream:
        for page in mwxml.Dump.from_file(stream):
            for revision in page:
                _ = revision.text
            pages += 1
    return pages


def parse_wikitexts(calls: list[tuple[tuple[Any, ...], dict[str, Any]]], parse: Any) -> None:
    for args, kwargs in calls:
        parse(*args, **kwargs)


def parse_again(calls: list[SpacyCall]) -> None:
    for nlp, texts, options in calls:
        for _ in nlp.pipe(texts, **options):
            pass


def best(rounds: int, work: Any) -> float:
    """The least CPU seconds WORK took in ROUNDS runs."""
    spent = []
    for _ in range(rounds):
        started = time.process_time()
        work()
        spent.append(time.process_time() - started)
    return min(spent)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dump", type=Path)
    parser.add_argument("warc", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import mwparserfromhell

    parse = mwparserfromhell.parse
    calls, wikitext_calls = record_spacy_calls(), record_wikitext_calls()
    work = Path(tempfile.mkdtemp(prefix="part1-floor-"))
    try:
        dump = work / "repeated.xml.bz2"
        repeat_dump(args.dump, dump, args.copies)
        build_cpu, articles = build(dump, args.warc, work / "run")
        recorded, wikitexts = list(calls), list(wikitext_calls)
        calls.clear()
        rounds = args.rounds
        spent = {
            "dump reading (bz2, mwxml)": best(rounds, lambda: read_dump(dump)),
            "wikitext parsing (mwparserfromhell)": best(rounds, lambda: parse_wikitexts(wikitexts, parse)),
            "spaCy parses": best(rounds, lambda: parse_again(recorded)),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    floor = sum(spent.values())
    per_article = {name: round(1000 * seconds / articles, 1) for name, seconds in spent.items()}
    print(json.dumps({
        "articles": articles,
        "spacy_calls": len(recorded),
        "spacy_texts": sum(len(texts) for _, texts, _ in recorded),
        "wikitext_parses": len(wikitexts),
        "build_cpu_ms_per_article": round(1000 * build_cpu / articles, 1),
        "floor_ms_per_article": per_article,
        "libraries_ms_per_article": round(1000 * floor / articles, 1),
        "irbgen_own_ms_per_article": round(1000 * (build_cpu - floor) / articles, 1),
    }))  # fmt: skip


if __name__ == "__main__":
    main()

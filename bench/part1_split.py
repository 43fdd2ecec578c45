"""Where an article's CPU goes in the citing-segments and keypoints stages (rules backend), in one process.

    python bench/part1_split.py /work/shared/realdata/enwiki-2016-pages-articles-106.xml.bz2

Runs both stages over the dump's kept pages inline (no checkpoint, no pool) and prints the CPU
milliseconds per article of each stage and of its main parts (process_time around each function):
wikitext parsing, spaCy's batched parse, the keypoint stage's single parses, rules and gates.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from irbgen.irb import keypoints  # noqa: E402
from irbgen.irb.rules.graph import load_graph_nlp  # noqa: E402
from irbgen.spacy_models import DEFAULT_MODEL  # noqa: E402
from irbgen.wikipedia import stages  # noqa: E402
from irbgen.wikipedia.dumps import read_dump  # noqa: E402
from irbgen.wikipedia.records import Page, Segment  # noqa: E402

SPENT: Counter[str] = Counter()


def timed(owner: Any, name: str, label: str | Callable[..., str]) -> None:
    """Replace owner.name by a wrapper that adds its CPU seconds to SPENT[label] (if there is one: a
    version before the parse was packed has no pack_parse)."""
    function = getattr(owner, name, None)
    if function is None:
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[label(*args) if callable(label) else label] += time.process_time() - started

    setattr(owner, name, wrapper)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dump")
    args = parser.parse_args()
    timed(stages, "parse_article", "citing: wikitext (mwparserfromhell, sentences, segments)")
    timed(stages.CitingSegments, "_parse", "citing: spaCy nlp.pipe over the lead and the segments")
    timed(stages.CitingSegments, "_missing", "citing: spaCy nlp.pipe over the segments")  # before: two calls
    timed(stages.CitingSegments, "_defining_noun", "citing: spaCy parse of the lead (and defining_noun)")
    timed(stages, "_lead_claims", "citing: lead claims")
    timed(stages, "pack_parse", "citing: packing each segment's parse")
    timed(keypoints, "keypoint_failure", "keypoints: gates (keypoint_failure)")
    timed(keypoints, "situate", "keypoints: situate")
    timed(keypoints, "unpack_parse", "keypoints: rebuilding a packed parse")

    def single(nlp: Any, text: str) -> str:
        with_ner = "ner" in nlp.pipe_names
        return "keypoints: spaCy single parse, " + (
            "tagger, parser and NER (referents)" if with_ner else "tagger and parser"
        )

    timed(keypoints, "_parse", single)  # a version before the parse cache
    if hasattr(keypoints, "PARSES"):
        timed(keypoints.PARSES, "parse", single)
        timed(keypoints._Gathering, "parse_wanted", "keypoints: spaCy batches of the texts a chunk needs")
    pages = [page for page in read_dump(args.dump) if isinstance(page, Page)]
    stages.load_parser(DEFAULT_MODEL), load_graph_nlp(DEFAULT_MODEL)  # loading is not an article's cost
    started = time.process_time()
    citing = stages.CitingSegments()
    segments = [r for page in pages for r in citing.process(page) if isinstance(r, Segment)]
    between = time.process_time()
    stage = keypoints.MakeKeypoints()
    if hasattr(stage, "process_many"):  # as the runner calls it: chunks of 32 segments
        for start in range(0, len(segments), 32):
            for results in stage.process_many(segments[start : start + 32], None):  # type: ignore[arg-type]
                list(results)
    else:
        for segment in segments:
            stage.process(segment, None)  # type: ignore[arg-type]
    ended = time.process_time()
    per_article = 1000 / len(pages)
    print(f"{len(pages)} articles, {len(segments)} segments")
    print(f"citing segments: {(between - started) * per_article:.1f} ms/article")
    print(f"keypoints: {(ended - between) * per_article:.1f} ms/article")
    for label, seconds in sorted(SPENT.items()):
        print(f"  {label}: {seconds * per_article:.1f} ms/article")


if __name__ == "__main__":
    main()

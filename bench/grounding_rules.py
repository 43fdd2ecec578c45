"""CPU of the grounding rules (`support`) on a finished build's keypoint-document pairs, in one process.

    python bench/grounding_rules.py RUN [--repeat 3]

RUN is the run directory of a Wikipedia build (offline, rules backend). Scores every pair its grounding
stage scored, as that stage does, with the code of the tree this file is in (to compare two trees, run
each tree's copy), and prints the best of REPEAT passes in CPU seconds and in milliseconds an article
with pairs, and a digest of the results: two trees that score alike print the same digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from irbgen.irb.grounding import MAX_RULES_CHARS  # noqa: E402
from irbgen.irb.rules.grounding import support  # noqa: E402


def records(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line)["record"] for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    stages = args.run / "stages"
    keypoints = {record["id"]: record for record in records(stages / "keypoints" / "outputs.jsonl")}
    documents = {record["id"]: record for record in records(stages / "fetch_cited" / "outputs.jsonl")}
    pairs = [
        (keypoints[grounding["keypoint_id"]], documents[grounding["document_id"]])
        for grounding in records(stages / "grounding" / "outputs.jsonl")
    ]
    articles = len({keypoint["page_id"] for keypoint, _ in pairs})
    best, digest = float("inf"), ""
    for _ in range(args.repeat):
        started = time.process_time()
        results = [
            support(
                keypoint["text"], (document["text"] or "")[:MAX_RULES_CHARS], title=document["title"] or ""
            )
            for keypoint, document in pairs
        ]
        best = min(best, time.process_time() - started)
        digest = hashlib.sha256(repr(results).encode()).hexdigest()[:16]
    print(
        f"{len(pairs)} pairs of {articles} articles: best of {args.repeat} {best:.2f} s CPU, "
        f"{best * 1000 / max(articles, 1):.1f} ms an article; results {digest}"
    )


if __name__ == "__main__":
    main()

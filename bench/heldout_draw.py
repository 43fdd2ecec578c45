"""Draw a held-out audit sheet: random samples of the test half (odd page ids) of one or more benchmarks.

    python bench/heldout_draw.py BENCH [BENCH ...] --sample 100 --seed 1130 [--kind multi_hop]
        [--exclude READ_IDS.txt] [--half tuning|all] > sheet.md

A sample's page is the first number in its id ("s:PAGE:...", "f:s:PAGE:...", "m:PAGE:..."); odd pages are
the test half, even ones the tuning half (issue 26). The sheet lists, for each drawn sample, its question,
answers and the keypoint of every hop, with an empty verdict column to fill by reading. `--exclude`
names a file of sample ids (one per line) already read in an earlier audit, left out of the draw.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path


def page(sample_id: str) -> int:
    """The page id a sample was made from (its hop-1 fact's page)."""
    return int(re.search(r"\d+", sample_id).group())


def half(bench: Path, parity: int) -> list[dict]:
    """The benchmark's samples made from page ids of this parity (1: test half, 0: tuning half), in file
    order."""
    samples = [json.loads(line) for line in (bench / "samples.jsonl").open(encoding="utf-8")]
    return [sample for sample in samples if page(sample["id"]) % 2 == parity]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="+", type=Path)
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--kind", choices=["single_hop", "multi_hop", "false_premise"])
    parser.add_argument("--exclude", type=Path, help="ids already read, one per line")
    parser.add_argument(
        "--half", choices=["test", "tuning", "all"], default="test", help="odd (test), even or all pages"
    )
    args = parser.parse_args()
    read = set(args.exclude.read_text(encoding="utf-8").split()) if args.exclude else set()
    pool = [
        (bench.parent.name, sample)
        for bench in args.benchmarks
        for parity in ((1, 0) if args.half == "all" else (1,) if args.half == "test" else (0,))
        for sample in half(bench, parity)
        if (args.kind is None or sample["attributes"]["question_type"] == args.kind)
        and sample["id"] not in read
    ]
    drawn = random.Random(args.seed).sample(pool, min(args.sample, len(pool)))
    left_out = f", {len(read)} ids already read left out" if read else ""
    drawn_from = f"{len(pool)} {args.half}-half samples{left_out}"
    print(f"{len(drawn)} of {drawn_from}, random.Random({args.seed}).sample\n")
    for number, (run, sample) in enumerate(drawn, 1):
        kind = sample["attributes"]["question_type"]
        answers = "; ".join(sample["answers"]) or "(false premise)"
        print(f"{number}. `{sample['id']}` ({run}, {kind}) **{sample['question']}** -> {answers}")
        for step, keypoint in zip(sample["chain"], sample["provenance"]["keypoints"], strict=False):
            print(f"   - hop {step['index']}: {keypoint} [{'; '.join(step['answers'])}]")
        for change in sample["attributes"]["extra"].get("changes", []):
            print(f"   - {change['kind']}: {change['node']} -> {change['replacement']}")
        print("   - verdict: \n")


if __name__ == "__main__":
    main()

"""What reading an XML dump in N shards costs: round-robin (every shard reads the whole file) against
byte ranges through a block index (each shard decompresses only its part).

    python bench/xml_shards.py /work/shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 --copies 20

Repeats DUMP's pages COPIES times into a `.xml.bz2` (as bench/ray_speed.py does), times building its
block index once (every core), then for each N reads all N shards one after the other in this process,
both ways, and prints one JSON line: the CPU seconds of all N shards together, the largest shard's, and
whether the shards gave the same pages in the same order as one shard.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ray_speed import repeat_dump  # noqa: E402

from irbgen.seekable import build_index  # noqa: E402
from irbgen.wikipedia.dumps import read_xml_dump  # noqa: E402
from irbgen.wikipedia.records import Page  # noqa: E402


def read_shards(dump: Path, shards: int, **ranges: object) -> tuple[list[float], list[int]]:
    """Each shard's CPU seconds, and the page ids of all shards in shard order."""
    spent, ids = [], []
    for shard in range(shards):
        started = time.process_time()
        ids += [p.page_id for p in read_xml_dump(dump, shard, shards, **ranges) if isinstance(p, Page)]  # type: ignore[arg-type]
        spent.append(time.process_time() - started)
    return spent, ids


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("dump", type=Path)
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 2, 4, 8])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xml-shards-"))
    try:
        dump = work / "repeated.xml.bz2"
        pages = repeat_dump(args.dump, dump, args.copies)
        started, wall = time.process_time(), time.perf_counter()
        index, size = build_index(dump, work / "index")
        indexing = {
            "cpu_s": round(time.process_time() - started, 2),
            "wall_s": round(time.perf_counter() - wall, 2),
        }
        _, whole = read_shards(dump, 1)
        result: dict[str, object] = {"pages": pages, "articles": len(whole), "index": indexing}
        for shards in args.shards:
            round_robin, _ = read_shards(dump, shards)
            by_range, ids = read_shards(dump, shards, size=size, seek_index=index)
            result[f"shards_{shards}"] = {
                "round_robin_cpu_s": round(sum(round_robin), 2),
                "round_robin_largest_shard_s": round(max(round_robin), 2),
                "byte_ranges_cpu_s": round(sum(by_range), 2),
                "byte_ranges_largest_shard_s": round(max(by_range), 2),
                "byte_ranges_same_pages_in_order": ids == whole,
            }
        print(json.dumps(result))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Read a compressed Wikidata dump in k shards, each in its own process, through the saved block index.

    python bench/dump_shards.py index DUMP INDEX_DIR          # build (or find) the index, print its size
    python bench/dump_shards.py lines DUMP INDEX_DIR K        # decompress only: each shard's lines
    python bench/dump_shards.py read DUMP INDEX_DIR K         # the full reader: entities per shard
    python bench/dump_shards.py shard DUMP INDEX_DIR K I      # the full reader, shard I of K only, in-process

Time each command as a whole process (for example with /usr/bin/time) and compare with `zcat` or
`bzip2 -dc` on the same file. With K = 1 the whole file is read by one process from the index.
`shard` times one shard alone, so its CPU seconds give the per-shard rate on a machine too loaded for
k shards to find k free cores: k shards on k free cores take about the slowest shard's time.
"""

from __future__ import annotations

import sys
from multiprocessing import get_context
from pathlib import Path

from irbgen.seekable import build_index, seekable_opener
from irbgen.wikidata.dumps import _range_lines, read_wikidata_dump


def lines(dump: str, index: str, size: int, shard: int, shards: int) -> int:
    return sum(1 for _ in _range_lines(seekable_opener(dump, Path(index)), size, shard, shards))


def read(dump: str, index: str, size: int, shard: int, shards: int) -> int:
    return sum(1 for _ in read_wikidata_dump(dump, shard=shard, shards=shards, index=index, size=size))


def main() -> None:
    mode, dump, index_dir = sys.argv[1:4]
    index, size = build_index(dump, index_dir)
    if mode == "index":
        print(index, size)
        return
    shards = int(sys.argv[4])
    if mode == "shard":
        print(read(dump, str(index), size, int(sys.argv[5]), shards))
        return
    work = lines if mode == "lines" else read
    if shards == 1 and mode == "read":
        print(sum(1 for _ in read_wikidata_dump(dump)))  # the one-shard reader streams without an index
        return
    with get_context("spawn").Pool(shards) as pool:
        counts = pool.starmap(work, [(dump, str(index), size, k, shards) for k in range(shards)])
    print(counts)


if __name__ == "__main__":
    main()

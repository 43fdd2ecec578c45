"""An I/O stage over URLs on the local pool: each host's URLs on one process, which fetches them and
writes its own checkpoint shards.

On the driver's event loop a fetch costs the driver about 1 ms of CPU (the URL checks, the WARC read,
handing the page to an extraction worker, writing the result): 12-17 ms an article of a full dump. A
stage that says `by_host = True` (its keys are URLs, its client the context's fetcher) runs this way
when the local executor has more than one process:

- each URL goes to one of `groups` processes by a stable hash of its host, so a host's per-host limit
  and delay hold as on one loop; the fetcher's global limit is shared out between the processes;
- each group's URLs, in input order, are cut into shards of at most `SHARD_ITEMS_PER_SLOT` times its
  share of the limit, numbered in turn across the groups so that every process has work;
- a process makes its fetcher from the driver's (`worker_recipe`: the same configuration, WARC files of
  its own, the shared WARC index), runs each shard on an event loop, hands each page's extraction to a
  worker process of its own (a page that kills or hangs it is a reject, as before), and writes the
  shard with the number of lines each input gave;
- the driver merges the shards back into input order from those numbers (irbgen.pipeline.shards), so
  the stage's files are the ones its own loop would write.

What runs on a group's process is `irbgen.pipeline.runner.run_host_shard`.
"""

from __future__ import annotations

import pickle
from array import array
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from irbgen.errors import IrbgenError
from irbgen.pipeline import shards as sharding
from irbgen.pipeline.shards import Shard
from irbgen.pipeline.stage import Stage, StageContext, is_io_stage

SHARD_ITEMS_PER_SLOT = 8  # a shard holds at most this many URLs per request its process has in flight


def spreads_by_host(stage: Stage) -> bool:
    """Whether STAGE is an I/O stage over URL keys that may run on several processes, a host on each."""
    return is_io_stage(stage) and bool(getattr(stage, "by_host", False))


def stable_hash(text: str) -> int:
    """FNV-1a of TEXT: the same on every run and process, unlike hash()."""
    value = 2166136261
    for byte in text.encode():
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return value


def host_group(url: str, groups: int) -> int | None:
    """The group (0 .. GROUPS-1) of URL's host; None for a key with no host."""
    host = urlsplit(url).hostname or ""
    return stable_hash(host) % groups if host else None


def split(total: int, parts: int) -> list[int]:
    """TOTAL divided into PARTS whole shares that add up to it, none zero (parts <= total)."""
    base, extra = divmod(total, parts)
    return [base + (1 if number < extra else 0) for number in range(parts)]


def fetch_shares(stage: Stage, context: StageContext, processes: int) -> list[int]:
    """Each of at most PROCESSES groups' share of the context's fetcher's requests in flight."""
    limit = getattr(getattr(context.fetcher, "config", None), "concurrency", None)
    if not isinstance(limit, int):
        raise IrbgenError(f"stage {stage.name} spreads by host, so it needs a fetcher in its StageContext")
    return split(limit, min(processes, limit))


def host_shards(root: Path, items: Sequence[Any], shares: Sequence[int]) -> tuple[list[Shard], array[int]]:
    """ITEMS (work items with URL keys) cut into shards by host group (one group per share of the
    concurrency), and the shard number of each item, by its index.

    A key without a host goes to a group by its position. The shards are numbered in turn across the
    groups (group 0's first, group 1's first, ... then each group's second), so that every process has
    work; each shard's items keep their input order."""
    groups = len(shares)
    by_group: list[list[Any]] = [[] for _ in range(groups)]
    for item in items:
        group = host_group(item.key, groups)
        by_group[item.index % groups if group is None else group].append(item)
    cuts: list[list[list[Any]]] = []
    for members, share in zip(by_group, shares, strict=True):
        size = max(1, share * SHARD_ITEMS_PER_SLOT)
        cuts.append([members[start : start + size] for start in range(0, len(members), size)])
    shards: list[Shard] = []
    shard_of = array("q", bytes(8 * len(items)))  # 8 bytes an input, however many the run cites
    for turn in range(max((len(cut) for cut in cuts), default=0)):
        for cut in cuts:
            if turn < len(cut):
                shard = sharding.new_shard(root, len(shards), cut[turn])
                for item in cut[turn]:
                    shard_of[item.index] = shard.number
                shards.append(shard)
    return shards, shard_of


def group_of(shard: Shard, groups: int) -> int:
    """The group (process) a shard of `host_shards` runs on."""
    item = shard.items[0]
    group = host_group(item.key, groups)
    return item.index % groups if group is None else group


def worker_job(stage: Stage, context: StageContext, share: int) -> bytes:
    """What a group's process needs, pickled once per stage: the stage and a context whose fetcher is the
    driver's recipe for one with SHARE requests in flight (no model client, no offload)."""
    fetcher = context.fetcher
    recipe = getattr(fetcher, "worker_recipe", None)
    if not callable(recipe):
        raise TypeError(f"stage {stage.name!r} spreads by host, so its fetcher needs a worker_recipe")
    portable = replace(context, llm=None, fetcher=recipe(share), offload=None)
    try:
        return pickle.dumps((stage, portable, share), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as error:
        raise TypeError(
            f"stage {stage.name!r} and its fetcher's configuration must pickle: {error}"
        ) from error

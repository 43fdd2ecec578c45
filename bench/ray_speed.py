"""Part 1 of the Wikipedia build on Ray against the local process pool, and Ray's cost per task.

    python bench/citing_warc.py /work/shared/realdata/enwiki-2016-pages-articles-106.xml.bz2 cited.warc.gz
    python bench/ray_speed.py part1 DUMP cited.warc.gz --copies 19 --cpus 2 --executor ray
    python bench/ray_speed.py overhead --items 10000 --cpus 2

`part1` repeats the dump's pages COPIES times (titles and page ids renumbered, so every key is new)
into a bigger dump, then times `build_wikipedia(..., facts_only=True)` in a fresh run directory: with
`--executor local` on a pool of CPUS processes, with `--executor ray` on a local Ray instance of CPUS
CPUs started before the clock starts. Prints one JSON line: seconds, pages, pages/s, the driver's own
CPU time (`time.process_time()`: every thread of the driver process, none of its workers) in all, per
kept article and per stage, and the CPU seconds of the whole build with the kept articles per
CPU-second (`--executor local` only: the pool's processes exit with the build, so their CPU counts; a
Ray worker's does not).

`overhead` runs a stage that does nothing over ITEMS items on Ray and inline, and prints the time per
item of each: on Ray once with one item per task (`--chunk-size 1`, Ray's own cost per task) and once
with the executor's chunks (1, 2, 4 ... up to 32 items per task).
"""

from __future__ import annotations

import argparse
import bz2
import json
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import BaseModel  # noqa: E402

PAGE = re.compile(rb"<page>.*?</page>", re.S)


def repeat_dump(source: Path, target: Path, copies: int) -> int:
    """SOURCE's pages COPIES times into TARGET (.xml.bz2); the count of pages written."""
    text = bz2.decompress(source.read_bytes())
    pages = PAGE.findall(text)
    head, tail = text[: text.index(pages[0])], text[text.rindex(pages[-1]) + len(pages[-1]) :]
    out = [head]
    for copy in range(copies):
        for page in pages:
            if copy:
                page = re.sub(rb"<title>(.*?)</title>", rb"<title>\1 (%d)</title>" % copy, page, count=1)
                number = re.search(rb"<id>(\d+)</id>", page)
                assert number is not None
                renumbered = b"<id>%d</id>" % (int(number[1]) + copy * 10**8)
                page = page[: number.start()] + renumbered + page[number.end() :]
            out.append(page + b"\n")
    out.append(tail)
    target.write_bytes(bz2.compress(b"".join(out), 9))
    return copies * len(pages)


def part1(args: argparse.Namespace) -> dict:
    from irbgen.builds.wikipedia import WikipediaBuildConfig, build_wikipedia

    work = Path(tempfile.mkdtemp(prefix="ray-speed-"))
    try:
        dump = work / "repeated.xml.bz2"
        pages = repeat_dump(Path(args.dump), dump, args.copies)
        config = WikipediaBuildConfig(
            dump=dump, warc=[Path(args.warc)], offline=True, facts_only=True, shards=args.cpus,
            processes=args.cpus if args.executor == "local" else 1,
        )  # fmt: skip
        executor = None
        if args.executor == "ray":
            from irbgen.pipeline.ray_executor import RayExecutor, init_local

            init_local(num_cpus=args.cpus)
            executor = RayExecutor(io_actors=args.io_actors)
            executor.start()
        driver_cpu_by_stage = _count_driver_cpu()
        started, driver_started, cpu_started = time.perf_counter(), time.process_time(), cpu_seconds()
        output = build_wikipedia(config, work / "run", executor=executor)
        seconds, driver_cpu = time.perf_counter() - started, time.process_time() - driver_started
        cpu = cpu_seconds() - cpu_started
        if executor is not None:
            executor.shutdown()
        stages = {
            path.parent.name: round(json.loads(path.read_text())["wall_seconds"], 2)
            for path in sorted((work / "run" / "stages").glob("*/stats.json"))
        }
        articles = output.manifest.counts["pages"]  # the kept articles the read stage passed on
        return {
            "executor": args.executor, "cpus": args.cpus, "pages": pages, "io_actors": args.io_actors,
            "articles": articles, "facts": output.manifest.counts["facts"], "seconds": round(seconds, 2),
            "pages_per_s": round(pages / seconds, 1), "driver_cpu_seconds": round(driver_cpu, 2),
            "driver_cpu_ms_per_article": round(1000 * driver_cpu / articles, 2),
            "driver_cpu_by_stage": {name: round(cpu, 2) for name, cpu in driver_cpu_by_stage.items()},
            "stage_seconds": stages, "cpu_seconds": round(cpu, 1),
            "articles_per_cpu_s": round(articles / cpu, 2),
        }  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)


def cpu_seconds() -> float:
    """User and system CPU seconds of this process and its finished children (the local pool's
    processes are counted once they exit, at the end of the build)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _count_driver_cpu() -> dict[str, float]:
    """The driver's CPU seconds per stage, filled in as the build runs (wraps the step runner's run_stage)."""
    from irbgen.pipeline import steps

    spent: dict[str, float] = {}
    run_stage = steps.run_stage

    def counted(stage, *args, **kwargs):  # type: ignore[no-untyped-def]
        before = time.process_time()
        try:
            return run_stage(stage, *args, **kwargs)
        finally:
            spent[stage.name] = time.process_time() - before

    steps.run_stage = counted
    return spent


class Item(BaseModel):
    id: str


class Nothing:
    """A stage that returns its input."""

    name = "nothing"
    input_model = Item
    output_model = Item

    def key(self, record: Item) -> str:
        return record.id

    def process(self, record: Item, context: object) -> list[Item]:
        return [record]


def overhead(args: argparse.Namespace) -> dict:
    import ray

    from irbgen.pipeline.ray_executor import RayExecutor, init_local
    from irbgen.pipeline.runner import run_stage
    from irbgen.pipeline.stage import StageContext

    init_local(num_cpus=args.cpus)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import this file
    items = [Item(id=f"i{number:06d}") for number in range(args.items)]
    result = {"items": args.items, "cpus": args.cpus}
    with tempfile.TemporaryDirectory() as work:
        one, chunked = RayExecutor(chunk_size=1), RayExecutor()
        for name, executor in (("inline", None), ("ray_one_per_task", one), ("ray_chunked", chunked)):
            started = time.perf_counter()
            run_stage(Nothing(), items, StageContext(run_dir=Path(work) / name), executor=executor)
            seconds = time.perf_counter() - started
            result[f"{name}_ms_per_item"] = round(1000 * seconds / args.items, 3)
    ray.shutdown()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("part1")
    one.add_argument("dump")
    one.add_argument("warc")
    one.add_argument("--copies", type=int, default=19)
    one.add_argument("--cpus", type=int, default=2)
    one.add_argument("--executor", choices=["local", "ray"], default="ray")
    one.add_argument("--io-actors", type=int, default=0, help="ray: I/O actors (0: I/O in the driver)")
    cost = sub.add_parser("overhead")
    cost.add_argument("--items", type=int, default=10_000)
    cost.add_argument("--cpus", type=int, default=2)
    args = parser.parse_args()
    print(json.dumps(part1(args) if args.what == "part1" else overhead(args)))


if __name__ == "__main__":
    main()

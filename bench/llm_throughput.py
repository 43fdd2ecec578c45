#!/usr/bin/env python3
"""Throughput of the LLM client against a loopback server with a fixed latency, vs the ideal.

With latency L per request and C requests in flight, no client can beat C / L calls per second
(32 / 0.2 s = 160 calls/s). The target is >= 90% of that for `LLMClient.complete` (no cache).

To tell whose overhead it is when the target is missed, the same calls are also made by:
  openai   AsyncOpenAI.chat.completions.create alone (max_retries=0): the openai package's cost
  httpx2   raw POSTs through the transport openai uses: the server and the transport alone
against two servers:
  thread   OpenAIStubServer in this process, as the tests run it (shares the GIL with the client)
  process  python -m irbgen.testing.openai_server in a child process
and, with --nagle, once more with the stub's TCP_NODELAY off, to show what that setting is worth.

Each (client, server) pair runs --runs times on a fresh server; the median counts. Every call must
succeed and the server must have seen exactly --calls requests, or the run fails.

    python bench/llm_throughput.py                          # irbgen client, both servers, 3 runs
    python bench/llm_throughput.py --all --nagle --write /tmp/llm.md   # section 2 of bench/RESULTS.md
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2  # imported up front so that no run pays for the first import
import openai

from irbgen.llm.client import LLMClient
from irbgen.llm.settings import LLMSettings
from irbgen.testing import OpenAIStubServer

MODEL = "stub-model"
REPO = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    calls_per_s: float
    cpu_ms_per_call: float  # CPU time of this process per call (includes the server in thread mode)


# --------------------------------------------------------------------------- servers


@contextmanager
def serve(kind: str, latency: float, nodelay: bool = True) -> Iterator[tuple[str, OpenAIStubServer | None]]:
    """A fresh stub server: (base_url, the in-process server or None for a child process)."""
    if kind == "thread":
        with OpenAIStubServer(latency=latency, nodelay=nodelay) as server:
            yield server.base_url, server
        return
    command = [sys.executable, "-m", "irbgen.testing.openai_server", "--latency", str(latency)]
    if not nodelay:
        command.append("--no-nodelay")
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    try:
        url = child.stdout.readline().strip() if child.stdout is not None else ""
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the stub server did not start: {url!r}")
        yield url, None
    finally:
        child.terminate()
        child.wait(timeout=10)


# --------------------------------------------------------------------------- clients


def _messages(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"distinct call number {i}"}]


async def _irbgen(url: str, calls: int, concurrency: int) -> int:
    settings = LLMSettings(base_url=url, model=MODEL, concurrency=concurrency, timeout=30)
    async with LLMClient(settings) as client:  # no cache: every call goes to the server
        results = await asyncio.gather(*(client.complete(_messages(i), stage="bench") for i in range(calls)))
    return sum(r.ok for r in results)


async def _openai(url: str, calls: int, concurrency: int) -> int:
    client = openai.AsyncOpenAI(api_key="unused", base_url=url, max_retries=0, timeout=30)
    limit = asyncio.Semaphore(concurrency)

    async def one(i: int) -> bool:
        async with limit:
            reply = await client.chat.completions.create(model=MODEL, messages=_messages(i), temperature=0.0)
        return isinstance(reply.choices[0].message.content, str)

    try:
        return sum(await asyncio.gather(*(one(i) for i in range(calls))))
    finally:
        await client.close()


async def _httpx2(url: str, calls: int, concurrency: int) -> int:
    limit = asyncio.Semaphore(concurrency)
    async with httpx2.AsyncClient(base_url=url, timeout=30) as client:

        async def one(i: int) -> bool:
            async with limit:
                body = {"model": MODEL, "messages": _messages(i), "temperature": 0.0}
                response = await client.post("/chat/completions", json=body)
            return response.status_code == 200 and isinstance(
                response.json()["choices"][0]["message"]["content"], str
            )

        return sum(await asyncio.gather(*(one(i) for i in range(calls))))


CLIENTS = {"irbgen": _irbgen, "openai": _openai, "httpx2": _httpx2}


def measure(client: str, server: str, args: argparse.Namespace, nodelay: bool = True) -> Run:
    """One timed run of `args.calls` distinct calls on a fresh server."""
    with serve(server, args.latency, nodelay) as (url, stub):
        wall, cpu = time.perf_counter(), time.process_time()
        ok = asyncio.run(CLIENTS[client](url, args.calls, args.concurrency))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if ok != args.calls or (stub is not None and stub.requests != args.calls):
            seen = stub.requests if stub is not None else "?"
            raise RuntimeError(f"{client}/{server}: {ok} of {args.calls} calls ok, server saw {seen}")
    return Run(calls_per_s=args.calls / wall, cpu_ms_per_call=1000 * cpu / args.calls)


# --------------------------------------------------------------------------- report


def machine() -> dict[str, str]:
    """CPU count and model, OS, Python and package versions, git commit."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib.metadata import version

    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], capture_output=True, text=True, cwd=REPO)
        return done.stdout.strip()

    dirty = " (with uncommitted changes)" if git("status", "--porcelain") else ""
    return {
        "CPU": f"{cpu}, {os.cpu_count()} cores",
        "OS": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
        "packages": f"openai {version('openai')}, httpx2 {version('httpx2')}, pydantic {version('pydantic')}",
        "irbgen": f"commit {git('rev-parse', '--short', 'HEAD')}{dirty}",
    }


def report(rows: list[dict], args: argparse.Namespace, command: str) -> str:
    """The results as Markdown."""
    ideal = args.concurrency / args.latency
    lines = [
        "# LLM client throughput",
        "",
        f"Measured {_dt.datetime.now(_dt.UTC):%Y-%m-%d %H:%M} UTC by `bench/llm_throughput.py`.",
        "",
        "## Machine",
        "",
        "| | |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in machine().items()),
        "",
        "## Command",
        "",
        "```",
        command,
        "```",
        "",
        f"{args.calls:,} distinct chat completions (no cache), {args.concurrency} in flight, "
        f"{args.latency} s server latency per request: the ideal is {args.concurrency} / {args.latency} s "
        f"= **{ideal:.0f} calls/s**. Target: `irbgen` client >= 90% of ideal. Median of {args.runs} runs, "
        "each on a fresh server. CPU ms/call is this process's CPU time per call (it includes the "
        "server's work when the server is a thread here).",
        "",
        "## Results",
        "",
        "| client | server | runs (calls/s) | median calls/s | % of ideal | CPU ms/call | target |",
        "|---|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        runs = ", ".join(f"{r.calls_per_s:.1f}" for r in row["runs"])
        median = statistics.median(r.calls_per_s for r in row["runs"])
        cpu = statistics.median(r.cpu_ms_per_call for r in row["runs"])
        counted = row["client"] == "irbgen" and "Nagle" not in row["server"]  # the others explain it
        verdict = ("PASS" if median >= 0.9 * ideal else "FAIL") if counted else "-"
        lines.append(
            f"| {row['client']} | {row['server']} | {runs} | {median:.1f} | {100 * median / ideal:.1f}% "
            f"| {cpu:.2f} | {verdict} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--calls", type=int, default=1600)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server holds each reply")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--servers", nargs="+", choices=["thread", "process"], default=["thread", "process"])
    parser.add_argument("--all", action="store_true", help="also time the openai and httpx2 clients alone")
    parser.add_argument("--nagle", action="store_true", help="also time irbgen with TCP_NODELAY off")
    parser.add_argument("--write", type=Path, help="write the Markdown report here")
    args = parser.parse_args()

    clients = list(CLIENTS) if args.all else ["irbgen"]
    plan = [(client, server, True) for client in clients for server in args.servers]
    if args.nagle:
        plan += [("irbgen", server, False) for server in args.servers]
    rows = []
    for client, server, nodelay in plan:
        label = server if nodelay else f"{server}, Nagle on"
        runs = []
        for n in range(args.runs):
            runs.append(measure(client, server, args, nodelay))
            print(f"{client:7s} {label:18s} run {n + 1}: {runs[-1].calls_per_s:7.1f} calls/s", flush=True)
        rows.append({"client": client, "server": label, "runs": runs})

    command = "python bench/llm_throughput.py " + " ".join(sys.argv[1:])
    text = report(rows, args, command.strip())
    print(text)
    if args.write is not None:
        args.write.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()

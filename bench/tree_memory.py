#!/usr/bin/env python3
"""Run a command and report the peak memory of its whole process tree (it and every descendant).

/usr/bin/time reports the largest single process only; a command that forks workers needs the sum.
Every INTERVAL seconds the tree's processes are found in /proc and two sums are taken: RSS (pages shared
after a fork are counted once per process, so an upper bound) and PSS (shared pages split between the
processes sharing them: the memory the tree really holds). Prints one line, after the command's output:

    tree peak: rss <KiB> KiB, pss <KiB> KiB, <processes> processes at most; wall <s> s, exit <code>

    python bench/tree_memory.py [--interval 0.2] -- irbgen phantom --n 1000000 --out /tmp/x --force
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time


def children(pid: int) -> list[int]:
    """Direct children of PID (Linux /proc/PID/task/*/children)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as file:
                found += [int(child) for child in file.read().split()]
        except OSError:
            pass
    return found


def tree(pid: int) -> list[int]:
    """PID and all its descendants."""
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += children(current)
    return pids


def memory(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of PID in KiB, from /proc/PID/smaps_rollup; (0, 0) once it has gone."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as file:
            for line in file:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except OSError:
        pass
    return rss, pss


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    started = time.perf_counter()
    process = subprocess.Popen(command)
    peak_rss = peak_pss = most = 0
    while process.poll() is None:
        pids = tree(process.pid)
        sizes = [memory(pid) for pid in pids]
        peak_rss = max(peak_rss, sum(rss for rss, _ in sizes))
        peak_pss = max(peak_pss, sum(pss for _, pss in sizes))
        most = max(most, len(pids))
        time.sleep(args.interval)
    wall = time.perf_counter() - started
    print(
        f"tree peak: rss {peak_rss} KiB, pss {peak_pss} KiB, {most} processes at most; "
        f"wall {wall:.2f} s, exit {process.returncode}",
        file=sys.stderr,
    )
    return process.returncode


if __name__ == "__main__":
    sys.exit(main())

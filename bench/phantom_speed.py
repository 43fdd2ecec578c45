#!/usr/bin/env python3
"""Time `irbgen phantom` end to end, the way a user runs it, and compare with pw-generate.

For each world size n the script runs

    irbgen phantom --n N --seed S --out <tmp>/bench --force --quiet

R times (seeds 0..R-1) under ``/usr/bin/time -f "%e %M %U %S"`` and records the wall time
and the peak resident set size of the child.  The first run's output is checked with
``irbgen validate`` (not timed), its file sizes are measured and the counts are read
from its manifest.json.  Every output is deleted straight after its run.

Reference numbers come from logs of ``/usr/bin/time -v pw-generate ...`` (see
/work/pwruns/runref.sh): the script parses "Elapsed (wall clock) time", "Maximum
resident set size" and the per-stage "Benchmarking results" table that pw-generate
prints, so the ratio reference / irbgen can be computed.

Examples
--------
    # full benchmark (about 10 minutes on a 2-core machine)
    python bench/phantom_speed.py --n 1000 10000 100000 1000000 \
        --reference-log 1000 /work/pwruns/ref_n1000.log \
        --reference-log 10000 /work/pwruns/ref_n10000.log \
        --json bench/phantom_speed.json

    # only parse reference logs and print the machine
    python bench/phantom_speed.py --n --reference-log 1000 /work/pwruns/ref_n1000.log

    # machine description only
    python bench/phantom_speed.py --machine
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MIB = 1024 * 1024


# --------------------------------------------------------------------------- machine


def machine_info() -> dict:
    info: dict = {}
    try:
        info["nproc"] = int(subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip())
    except Exception:  # pragma: no cover - nproc missing
        info["nproc"] = os.cpu_count()
    info["os_cpu_count"] = os.cpu_count()
    try:
        info["sched_affinity_cpus"] = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - non-Linux
        pass
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["cpu_model"] = cpu_model or platform.processor() or "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                kib = int(line.split()[1])
                info["mem_total_gib"] = round(kib / 1024 / 1024, 2)
            elif line.startswith("MemAvailable:"):
                kib = int(line.split()[1])
                info["mem_available_gib_at_start"] = round(kib / 1024 / 1024, 2)
            elif line.startswith("SwapTotal:"):
                kib = int(line.split()[1])
                info["swap_total_gib"] = round(kib / 1024 / 1024, 2)
    except OSError:
        pass
    # cgroup memory limit, if any (containers)
    for p in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            v = Path(p).read_text().strip()
            if v == "max" or int(v) >= 2**60:
                info["cgroup_memory_limit"] = "unlimited"
            else:
                info["cgroup_memory_limit"] = f"{int(v) / 1024**3:.2f} GiB"
            break
        except (OSError, ValueError):
            continue
    os_name = platform.platform()
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    info["os"] = os_name
    info["kernel"] = platform.release()
    info["bench_python"] = sys.version.split()[0]
    irbgen = shutil.which("irbgen")
    info["irbgen_path"] = irbgen
    if irbgen:
        # python that runs the irbgen entry point
        try:
            first = Path(irbgen).read_text(errors="replace").splitlines()[0]
            interp = first[2:].strip() if first.startswith("#!") else sys.executable
            out = subprocess.run([interp, "--version"], capture_output=True, text=True)
            info["irbgen_python"] = (out.stdout or out.stderr).strip()
            info["irbgen_python_executable"] = interp
        except Exception:
            pass
        try:
            out = subprocess.run(["irbgen", "--version"], capture_output=True, text=True)
            if out.returncode == 0:
                info["irbgen_version"] = out.stdout.strip()
        except Exception:
            pass
    try:
        tv = subprocess.run(["/usr/bin/time", "--version"], capture_output=True, text=True)
        info["time_tool"] = (tv.stdout or tv.stderr).splitlines()[0].strip()
    except Exception:
        info["time_tool"] = None
    return info


def repo_state(repo: Path) -> dict:
    def git(*a: str) -> str:
        r = subprocess.run(["git", "-C", str(repo), *a], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""

    head = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    h = hashlib.sha256()
    for p in sorted((repo / "irbgen").rglob("*.py")):
        h.update(str(p.relative_to(repo)).encode())
        h.update(p.read_bytes())
    return {
        "repo": str(repo),
        "commit": head or None,
        "dirty_tracked_files": [ln.strip().split(maxsplit=1)[-1] for ln in dirty.splitlines()]
        if dirty
        else [],
        "irbgen_source_sha256": h.hexdigest()[:16],
    }


# ------------------------------------------------------------------ reference logs

_TIME_KEYS = {
    "Elapsed (wall clock) time": "wall_clock_raw",
    "Maximum resident set size (kbytes)": "max_rss_kib",
    "User time (seconds)": "user_s",
    "System time (seconds)": "system_s",
    "Percent of CPU this job got": "cpu_percent",
    "Exit status": "exit_status",
    "Command being timed": "command",
}


def _parse_clock(s: str) -> float:
    """'7:10.69' -> 430.69, '1:02:03' -> 3723.0, '12.5' -> 12.5."""
    parts = [float(p) for p in s.strip().split(":")]
    secs = 0.0
    for p in parts:
        secs = secs * 60 + p
    return secs


def parse_reference_log(path: Path) -> dict:
    text = path.read_text(errors="replace")
    res: dict = {"log": str(path), "complete": False}
    for raw in text.splitlines():
        line = raw.strip()
        for key, name in _TIME_KEYS.items():
            if line.startswith(key):
                val = line.split(": ", 1)[1].strip() if ": " in line else line[len(key) :].strip(" :")
                res[name] = val
    if "wall_clock_raw" in res:
        res["complete"] = True
        res["wall_s"] = round(_parse_clock(res["wall_clock_raw"].split(")")[-1].lstrip(": ")), 2)
    if "max_rss_kib" in res:
        res["max_rss_kib"] = int(res["max_rss_kib"])
        res["peak_rss_mib"] = round(res["max_rss_kib"] / 1024, 1)
    for k in ("user_s", "system_s"):
        if k in res:
            res[k] = float(res[k])
    if "exit_status" in res:
        res["exit_status"] = int(res["exit_status"])
    if "command" in res:
        res["command"] = res["command"].strip('"')
    # per-stage table printed by pw-generate ("Benchmarking results:")
    stages: dict[str, float] = {}
    m = re.search(r"Benchmarking results:\s*\n((?:\|.*\n?)+)", text)
    if m:
        for row in m.group(1).splitlines():
            cells = [c.strip() for c in row.strip().strip("|").split("|")]
            if len(cells) == 2 and re.fullmatch(r"[A-Za-z_]+", cells[0]):
                try:
                    stages[cells[0]] = float(cells[1])
                except ValueError:
                    pass
    res["stages_s"] = stages
    m = re.search(r"Generated (\d+) family trees for a total of (\d+) individuals", text)
    if m:
        res["family_trees"] = int(m.group(1))
        res["people"] = int(m.group(2))
    return res


# ----------------------------------------------------------------------- measuring


def default_runs(n: int) -> int:
    return 5 if n <= 100_000 else 3


def dir_sizes(root: Path) -> dict:
    files = {}
    total = 0
    for p in sorted(root.rglob("*")):
        if p.is_file():
            sz = p.stat().st_size
            total += sz
            files[str(p.relative_to(root))] = round(sz / MIB, 3)
    return {"total_mib": round(total / MIB, 3), "files_mib": files}


def run_timed(cmd: list[str], time_file: Path) -> dict:
    """Run cmd under /usr/bin/time; return wall_s, rss_kib, user_s, sys_s, rc, perf_counter_s."""
    if Path("/usr/bin/time").exists():
        full = ["/usr/bin/time", "-f", "%e %M %U %S", "-o", str(time_file), *cmd]
        t0 = time.perf_counter()
        proc = subprocess.run(full, capture_output=True, text=True)
        t1 = time.perf_counter()
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        f = time_file.read_text().strip().splitlines()[-1].split()
        return {
            "wall_s": float(f[0]),
            "rss_kib": float(f[1]),
            "user_s": float(f[2]),
            "sys_s": float(f[3]),
            "rc": proc.returncode,
            "perf_counter_s": t1 - t0,
        }
    # fallback: a fresh python wrapper reports RUSAGE_CHILDREN of its only child
    wrapper = (
        "import resource,subprocess,sys,time,json;t=time.perf_counter();"
        "r=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL);"
        "w=time.perf_counter()-t;u=resource.getrusage(resource.RUSAGE_CHILDREN);"
        "print(json.dumps([w,u.ru_maxrss,u.ru_utime,u.ru_stime,r.returncode]))"
    )
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", wrapper, *cmd], capture_output=True, text=True)
    t1 = time.perf_counter()
    wall, rss, ut, st, rc = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        "wall_s": round(wall, 2),
        "rss_kib": float(rss),
        "user_s": ut,
        "sys_s": st,
        "rc": int(rc),
        "perf_counter_s": t1 - t0,
    }


def bench_n(n: int, runs: int, tmp_root: Path, extra: list[str], validate: bool) -> dict:
    walls, rsss, perf = [], [], []
    result: dict = {"n": n, "runs": runs, "seeds": list(range(runs)), "per_run": []}
    for seed in range(runs):
        tmp = Path(tempfile.mkdtemp(prefix=f"irbgen_bench_n{n}_s{seed}_", dir=tmp_root))
        out = tmp / "bench"
        cmd = [
            "irbgen",
            "phantom",
            "--n",
            str(n),
            "--seed",
            str(seed),
            "--out",
            str(out),
            "--force",
            "--quiet",
            *extra,
        ]
        try:
            t = run_timed(cmd, tmp / "time.txt")
            wall, rss_kib, rc, pc = t["wall_s"], t["rss_kib"], t["rc"], t["perf_counter_s"]
            if rc != 0:
                raise SystemExit(f"irbgen phantom failed (exit {rc}) for n={n} seed={seed}")
            walls.append(wall)
            rsss.append(rss_kib / 1024)
            perf.append(pc)
            run = {
                "seed": seed,
                "wall_s": wall,
                "peak_rss_mib": round(rss_kib / 1024, 1),
                "perf_counter_s": round(pc, 3),
                "user_s": t["user_s"],
                "sys_s": t["sys_s"],
            }
            if seed == 0:
                result["command"] = " ".join(cmd).replace(str(out), "<tmp>/bench")
                result["output"] = dir_sizes(out)
                man = json.loads((out / "manifest.json").read_text())
                counts = man.get("counts", {})
                result["manifest_counts"] = counts
                result["manifest_command"] = man.get("command")
                if validate:
                    t0 = time.perf_counter()
                    v = subprocess.run(["irbgen", "validate", str(out)], capture_output=True, text=True)
                    result["validate"] = {
                        "returncode": v.returncode,
                        "message": (v.stdout + v.stderr).strip().replace(str(out), "<tmp>/bench")[-2000:],
                        "seconds_not_included": round(time.perf_counter() - t0, 2),
                    }
                    if v.returncode != 0:
                        sys.stderr.write(f"WARNING: irbgen validate failed for n={n}: {v.stdout}{v.stderr}\n")
            result["per_run"].append(run)
            print(
                f"  n={n:>9,} seed={seed}  wall {wall:8.2f} s  peak RSS {rss_kib / 1024:9.1f} MiB",
                flush=True,
            )
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    result["wall_s"] = {
        "median": round(statistics.median(walls), 3),
        "min": min(walls),
        "max": max(walls),
        "mean": round(statistics.fmean(walls), 3),
    }
    result["peak_rss_mib"] = {"median": round(statistics.median(rsss), 1), "max": round(max(rsss), 1)}
    c = result.get("manifest_counts", {})
    result["counts_seed0"] = {
        "questions": c.get("samples"),
        "documents": c.get("documents"),
        "qrels": c.get("qrels"),
        "people": c.get("people"),
    }
    return result


# -------------------------------------------------------------------------- report


def fmt_s(x: float | None) -> str:
    return "–" if x is None else (f"{x:,.2f} s" if x < 100 else f"{x:,.0f} s")


def summary_table(results: list[dict], refs: dict[int, dict]) -> str:
    lines = [
        "| n | pw-generate wall | pw-generate peak RSS | irbgen median wall (min–max, runs)"
        " | irbgen peak RSS (max) | speed-up (ref / irbgen median) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    by_n = {r["n"]: r for r in results}
    for n in sorted(set(by_n) | set(refs)):
        r, ref = by_n.get(n), refs.get(n)
        ref_wall = ref.get("wall_s") if ref and ref.get("complete") else None
        ref_rss = ref.get("peak_rss_mib") if ref and ref.get("complete") else None
        if r:
            w = r["wall_s"]
            irb = f"{fmt_s(w['median'])} ({w['min']:.2f}–{w['max']:.2f}, {r['runs']})"
            irss = f"{r['peak_rss_mib']['max']:,.0f} MiB"
        else:
            irb = irss = "–"
        ratio = f"{ref_wall / r['wall_s']['median']:,.0f}×" if (r and ref_wall) else "–"
        rw = fmt_s(ref_wall) if ref_wall else ("running / incomplete" if ref else "not run")
        rr = f"{ref_rss:,.0f} MiB" if ref_rss else "–"
        lines.append(f"| {n:,} | {rw} | {rr} | {irb} | {irss} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--n", type=int, nargs="*", default=[1000, 10000, 100000, 1000000], help="world sizes (people)"
    )
    ap.add_argument(
        "--runs", type=int, default=None, help="runs per n (default: 5 for n<=100000, else --runs-large)"
    )
    ap.add_argument("--runs-large", type=int, default=3, help="runs per n for n>100000 (default 3)")
    ap.add_argument(
        "--tmp-root", type=Path, default=Path("/tmp"), help="where temporary outputs go (deleted per run)"
    )
    ap.add_argument(
        "--json", type=Path, default=Path(__file__).with_name("phantom_speed.json"), help="results file"
    )
    ap.add_argument(
        "--reference-log",
        nargs=2,
        action="append",
        metavar=("N", "PATH"),
        default=[],
        help="pw-generate log with /usr/bin/time -v output for world size N (repeatable)",
    )
    ap.add_argument("--no-validate", action="store_true", help="skip `irbgen validate` on the first output")
    ap.add_argument("--machine", action="store_true", help="print the machine description and exit")
    ap.add_argument(
        "--note", action="append", default=[], help="free-text note stored in the JSON (repeatable)"
    )
    ap.add_argument(
        "--merge",
        action="store_true",
        help="keep results for other n already in --json (results for the same n are replaced)",
    )
    ap.add_argument("--extra", default="", help="extra arguments passed to irbgen phantom (one string)")
    args = ap.parse_args(argv)

    mach = machine_info()
    if args.machine:
        print(json.dumps(mach, indent=2))
        return 0

    refs: dict[int, dict] = {}
    for n_s, p in args.reference_log:
        refs[int(n_s)] = parse_reference_log(Path(p))

    report: dict = {
        "started_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "machine": mach,
        "irbgen_repo": repo_state(Path(__file__).resolve().parents[1]),
        "notes": args.note,
        "reference": {str(k): v for k, v in sorted(refs.items())},
        "irbgen": [],
    }

    if args.merge and args.json.exists():
        old = json.loads(args.json.read_text())
        keep = [r for r in old.get("irbgen", []) if r["n"] not in set(args.n)]
        report["irbgen"] = keep
        report["notes"] = old.get("notes", []) + [x for x in args.note if x not in old.get("notes", [])]
        report["started_utc"] = old.get("started_utc", report["started_utc"])
        for k, v in old.items():  # keep keys added by hand (e.g. superseded runs)
            report.setdefault(k, v)
        for k, v in old.get("reference", {}).items():
            report["reference"].setdefault(k, v)
            refs.setdefault(int(k), v)

    def save() -> None:
        report["irbgen"].sort(key=lambda r: r["n"])
        report["finished_utc"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        ratios = {}
        for r in report["irbgen"]:
            ref = refs.get(r["n"])
            if ref and ref.get("complete"):
                ratios[str(r["n"])] = {
                    "wall_ref_over_irbgen_median": round(ref["wall_s"] / r["wall_s"]["median"], 1),
                    "rss_ref_over_irbgen_max": round(ref["peak_rss_mib"] / r["peak_rss_mib"]["max"], 2),
                }
        report["ratios"] = ratios
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")

    print(
        f"machine: {mach.get('nproc')} cores, {mach.get('cpu_model')}, "
        f"{mach.get('mem_total_gib')} GiB, {mach.get('os')}"
    )
    extra = args.extra.split() if args.extra else []
    for n in args.n:
        runs = args.runs if args.runs is not None else (5 if n <= 100_000 else args.runs_large)
        print(f"irbgen phantom --n {n}: {runs} runs", flush=True)
        state = repo_state(Path(__file__).resolve().parents[1])
        started = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        res = bench_n(n, runs, args.tmp_root, extra, validate=not args.no_validate)
        res["irbgen_repo_at_start"] = state
        res["started_utc"] = started
        res["finished_utc"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
        report["irbgen"].append(res)
        save()
    save()
    print()
    print(summary_table(report["irbgen"], refs))
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

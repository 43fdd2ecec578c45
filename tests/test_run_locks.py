"""One writer per directory: a second irbgen process on a locked directory exits 2 at once, naming it.

Every test here starts real processes: one holds the lock the way irbgen holds it, the other is the
irbgen command line (`sys.executable -m irbgen`, so the checked-out code is what runs).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from irbgen.pipeline.rundir import LOCK, lock_output, locked

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
DUMP = SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"
WARC = SAMPLES / "web" / "cited-pages.warc.gz"
HOLD = (
    "import sys; from pathlib import Path; from irbgen.pipeline.rundir import {how}\n"
    "with {how}(Path(sys.argv[1])):\n"
    "    print('held', flush=True); sys.stdin.read()\n"
)


def irbgen(*args: object) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irbgen", *map(str, args)], capture_output=True, text=True, timeout=120
    )


def hold(path: Path, how: str = "locked") -> subprocess.Popen:
    """A second process holding PATH's lock until its stdin closes (or it is killed)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD.format(how=how), str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline() == "held\n"
    return holder


def build(out: Path) -> subprocess.CompletedProcess:
    return irbgen(
        "build", "--source", "wikipedia-dump", "--dump", DUMP, "--warc", WARC, "--offline", "--limit", 2,
        "--out", out,
    )  # fmt: skip


def test_a_second_build_on_a_locked_run_directory_exits_2_naming_it_and_the_holder(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = hold(run_dir)
    try:
        result = build(run_dir)
    finally:
        holder.communicate("")
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert f"{run_dir}: in use by another irbgen process (pid {holder.pid})" in result.stderr
    assert sorted(p.name for p in run_dir.iterdir()) == []  # nothing written, the lock file gone


def test_a_lock_left_by_a_killed_process_never_blocks(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    holder = hold(run_dir)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert (run_dir / LOCK).exists()  # the file stays behind; the kernel dropped the lock
    result = build(run_dir)
    assert result.returncode == 0, result.stderr
    assert (run_dir / "benchmark" / "manifest.json").is_file()
    assert not (run_dir / LOCK).exists()


def test_phantom_on_a_benchmark_being_written_exits_2(tmp_path):
    out = tmp_path / "bench"
    holder = hold(out, "lock_output")
    try:
        result = irbgen("phantom", "--n", 30, "--depth", 4, "--out", out, "-q")
    finally:
        holder.communicate("")
    assert result.returncode == 2
    assert f"{out}: in use by another irbgen process (pid {holder.pid})" in result.stderr
    assert not out.exists()
    assert irbgen("phantom", "--n", 30, "--depth", 4, "--out", out, "-q").returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]  # no lock file or temp dir left


def test_eval_qa_on_a_locked_out_exits_2(tmp_path):
    from irbgen.testing.openai_server import OpenAIStubServer

    bench, out = tmp_path / "bench", tmp_path / "eval"
    assert irbgen("phantom", "--n", 30, "--depth", 4, "--out", bench, "-q").returncode == 0
    out.mkdir()
    holder = hold(out)
    try:
        with OpenAIStubServer() as server:
            result = irbgen(
                "eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "stub",
                "--base-url", server.base_url, "--out", out,
            )  # fmt: skip
            assert server.requests == 0
    finally:
        holder.communicate("")
    assert result.returncode == 2, result.stderr
    assert f"{out}: in use by another irbgen process (pid {holder.pid})" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == []


def test_one_process_may_nest_blocks_on_its_own_lock(tmp_path):
    with locked(tmp_path), locked(tmp_path):
        assert (tmp_path / LOCK).read_text() == f"{os.getpid()}\n"
    assert not (tmp_path / LOCK).exists()
    with lock_output(tmp_path / "x"), lock_output(tmp_path / "x"):
        pass


@pytest.mark.parametrize("name", ["", "."])
def test_lock_output_needs_a_name(tmp_path, name):
    from irbgen.errors import BadInputError

    with pytest.raises(BadInputError), lock_output(Path(name)):
        pass


def wait_for_lock(path: Path, pid: int) -> None:
    """Until the process PID holds the lock at PATH (it writes its pid there once it does)."""
    while not (path.exists() and path.read_text().strip() == str(pid)):
        time.sleep(0.01)


def test_two_builds_at_once_on_one_run_directory(tmp_path):
    """Found as: `$W --out run & (sleep 0.6; $W --out run) & wait`; both exited 0 and mixed their counts."""
    from irbgen.testing.openai_server import OpenAIStubServer

    release = threading.Event()

    def held_reply(request: dict) -> str:
        release.wait(60)  # the first build waits inside its first model call until the second has run
        return "{}"

    run_dir = tmp_path / "run"
    with OpenAIStubServer(responder=held_reply) as server:
        command = [sys.executable, "-m", "irbgen", "build", "--source", "wikipedia-dump", "--dump", str(DUMP)]
        command += ["--warc", str(WARC), "--offline", "--limit", "2", "--base-url", server.base_url]
        command += ["--model", "stub", "--llm-concurrency", "1", "--out", str(run_dir)]
        env = {**os.environ, "OPENAI_API_KEY": "unused"}
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_lock(run_dir / LOCK, first.pid)
            while server.requests == 0 and first.poll() is None:
                time.sleep(0.01)
            second = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        finally:
            release.set()
        out, err = first.communicate(timeout=240)
    assert second.returncode == 2 and "Traceback" not in second.stderr
    assert f"{run_dir}: in use by another irbgen process (pid {first.pid})" in second.stderr
    # The first runs to its end: with replies of "{}" it makes no sample, which is a failed build.
    assert first.returncode == 1 and "nothing to evaluate" in err, err
    assert not (run_dir / LOCK).exists()


def test_two_eval_qa_at_once_on_one_out_ask_each_question_once(tmp_path):
    """Found as: two `eval qa` on one --out sent 180 requests for 100 questions and lost predictions."""
    from irbgen.testing.openai_server import OpenAIStubServer

    bench, out = tmp_path / "bench", tmp_path / "eval"
    assert irbgen("phantom", "--n", 30, "--depth", 4, "--out", bench, "-q").returncode == 0
    release = threading.Event()

    def held_reply(request: dict) -> str:
        release.wait(60)
        return "Paris"

    with OpenAIStubServer(responder=held_reply) as server:
        command = [sys.executable, "-m", "irbgen", "eval", "qa", "--benchmark", str(bench)]
        command += [
            "--method",
            "closed-book",
            "--model",
            "m",
            "--base-url",
            server.base_url,
            "--out",
            str(out),
        ]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_lock(out / LOCK, first.pid)
            second = subprocess.run(command, capture_output=True, text=True, timeout=120)
        finally:
            release.set()
        first.communicate(timeout=240)
        asked = server.requests
    assert (
        second.returncode == 2
        and f"{out}: in use by another irbgen process (pid {first.pid})" in second.stderr
    )
    assert first.returncode == 0
    predictions = (out / "predictions.jsonl").read_text().splitlines()
    samples = (bench / "samples.jsonl").read_text().splitlines()
    assert asked == len(samples) == len(predictions)

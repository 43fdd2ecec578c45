"""Progress on every long command: counts from index, encode, search, answers and judging; drawn only on a
terminal, and no third-party bars unless -v."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.eval.qa.run import QAOptions, run_qa
from irbgen.eval.retrieval import evaluate_retrieval
from irbgen.llm.settings import LLMSettings
from irbgen.testing.openai_server import OpenAIStubServer

ROOT = Path(__file__).resolve().parents[1]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, int, int | None]] = []

    def __call__(self, stage: str, done: int, total: int | None) -> None:
        self.events.append((stage, done, total))

    def last(self, stage: str) -> tuple[int, int | None]:
        return [(done, total) for name, done, total in self.events if name == stage][-1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "phantom"
    result = CliRunner().invoke(
        main,
        ["phantom", "--n", "150", "--depth", "6", "--questions-per-template", "20", "-q", "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    return out


def test_retrieval_reports_indexing_and_search(bench: Path, tmp_path: Path) -> None:
    progress = Recorder()
    evaluate_retrieval(bench, tmp_path / "eval", retriever="bm25", progress=progress)
    assert progress.last("bm25 index (chunks)") == (150, 150)
    assert progress.last("bm25 search (queries)") == (160, 160)
    searched = [done for name, done, _ in progress.events if name == "bm25 search (queries)"]
    assert searched == [0, 100, 160]


def test_dense_reports_encoding(bench: Path, tmp_path: Path) -> None:
    progress = Recorder()
    evaluate_retrieval(bench, tmp_path / "eval", retriever="dense", progress=progress)
    assert progress.last("dense encode (chunks)") == (150, 150)
    assert progress.last("dense encode (queries)") == (160, 160)
    assert progress.last("dense search (queries)") == (160, 160)


def test_qa_reports_answers_and_judging(bench: Path, tmp_path: Path) -> None:
    progress = Recorder()
    with OpenAIStubServer() as server:
        settings = LLMSettings(base_url=server.base_url, model="reader", api_key_env="UNSET_KEY_FOR_TEST")
        judge = LLMSettings(base_url=server.base_url, model="judge", api_key_env="UNSET_KEY_FOR_TEST")
        options = QAOptions("rag", settings, limit=12, judge_settings=judge)
        run_qa(bench, tmp_path / "qa", options, progress=progress)
    assert progress.last("questions") == (12, 12)
    assert [done for name, done, _ in progress.events if name == "questions"] == list(range(1, 13))
    assert progress.last("judged") == (12, 12)
    assert progress.last("bm25 index (chunks)") == (150, 150)


def irbgen_on_a_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """Run irbgen with stderr on a pseudo-terminal; return its exit code and what the terminal showed."""
    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "120", "TERM": "xterm"}
    process = subprocess.Popen([sys.executable, "-m", "irbgen", *args], cwd=cwd, env=env,
                               stdout=subprocess.DEVNULL, stderr=follower)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the follower side closed: the process is done
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return process.wait(timeout=300), shown.decode(errors="replace")


def test_a_terminal_gets_the_display_and_a_pipe_does_not(bench: Path, tmp_path: Path) -> None:
    code, shown = irbgen_on_a_terminal("eval", "retrieval", "--benchmark", str(bench), "--out", "eval",
                                       cwd=tmp_path)
    assert code == 0
    assert "bm25 search (queries)" in shown and "160/160" in shown
    code, shown = irbgen_on_a_terminal("eval", "retrieval", "--benchmark", str(bench), "--out", "quiet",
                                       "--quiet", cwd=tmp_path)
    assert code == 0 and "bm25" not in shown
    piped = subprocess.run([sys.executable, "-m", "irbgen", "eval", "retrieval", "--benchmark", str(bench),
                            "--out", "piped"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                           capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == ""


@pytest.mark.parametrize(("verbose", "bars"), [([], False), (["-v"], True)])
def test_datasets_bars_only_with_verbose(verbose: list[str], bars: bool, bench: Path, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "irbgen", *verbose, "export", str(bench), "--format", "hf",
                           "--out", "hf"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert ("Saving the dataset" in done.stderr) is bars

"""The loopback stub server acts as a judge, and a judge that judges nothing fails in one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.eval.qa.judge import FALSE_PREMISE_GOLD
from irbgen.testing.openai_server import OpenAIStubServer, echo_last_user_message, judge_label, stub_reply

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bench"
    made = CliRunner().invoke(main, ["phantom", "--n", "30", "--depth", "4", "--out", str(out), "-q"])
    assert made.exit_code == 0, made.output
    return out


def test_judge_labels_by_plain_rules() -> None:
    assert judge_label("Ada Lovelace", "It was ada  lovelace.") == "correct"
    assert judge_label("Ada | Bob", "Ada and Bob") == "correct"
    assert judge_label("Ada | Bob", "Ada") == "incorrect"
    assert judge_label("Ada", "I don't know.") == "not_attempted"
    assert judge_label("Ada", "(empty)") == "not_attempted"
    assert judge_label(FALSE_PREMISE_GOLD, "False premise question") == "correct"
    assert judge_label(FALSE_PREMISE_GOLD, "Ada") == "incorrect"


def qa(bench: Path, server: OpenAIStubServer, out: Path, *extra: str) -> list[str]:
    url = server.base_url
    return ["eval", "qa", "--benchmark", str(bench), "--method", "closed-book", "--model", "reader",
            "--base-url", url, "--judge-model", "stub", "--out", str(out), "-q", *extra]  # fmt: skip


def test_the_stub_server_judges_offline(bench: Path, tmp_path: Path) -> None:
    samples = [json.loads(line) for line in (bench / "samples.jsonl").read_text().splitlines()]

    def reader(request: dict) -> str:  # knows every other answer, declines the rest
        if request.get("response_format"):
            return stub_reply(request)
        asked = echo_last_user_message(request)
        number, sample = next((n, s) for n, s in enumerate(samples) if s["question"] in asked)
        return sample["answers"][0] if number % 2 == 0 else "I don't know"

    with OpenAIStubServer(responder=reader) as server:
        result = CliRunner(env={"OPENAI_API_KEY": "x"}).invoke(main, qa(bench, server, tmp_path / "qa"))
        judge_calls = [body for body in server.bodies if body.get("response_format")]
    assert result.exit_code == 0, result.output
    assert "judge: 20 of 20 judged" in result.output
    rows = [json.loads(line) for line in (tmp_path / "qa" / "predictions.jsonl").read_text().splitlines()]
    assert len(judge_calls) == len(rows) == 20
    for row in rows:
        (verdict,) = row["judge"]["verdicts"]
        knew = row["prediction"] != "I don't know"
        assert verdict["error"] is None
        assert verdict["label"] == ("correct" if knew else "not_attempted")
    labels = json.loads((tmp_path / "qa" / "metrics.json").read_text())["judge"]["labels"]["stub"]
    assert labels["correct"] > 0 and labels["not_attempted"] > 0


def test_a_judge_that_judges_nothing_fails_with_one_warning(bench: Path, tmp_path: Path) -> None:
    with OpenAIStubServer(responder=echo_last_user_message) as server:  # echoes: never a JSON verdict
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_API_KEY": "x"}
        done = subprocess.run([sys.executable, "-m", "irbgen", *qa(bench, server, tmp_path / "qa")], env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    warnings = [line for line in lines if line.startswith("WARNING stage qa.judge: call failed")]
    assert len(warnings) == 2 and warnings[1] == f"{warnings[0]} (19 more times)", lines
    errors = [line for line in lines if line.startswith("irbgen: error: ")]
    assert errors == [
        "irbgen: error: judge: 0 of 20 judged (20 failed): every judge call failed, so there is no judge "
        "score (the errors are in predictions.jsonl; fix --judge-model or --judge-base-url, then rerun to "
        "ask the judge again)"
    ]
    assert len(lines) == 3, lines
    assert "judge: 0 of 20 judged (20 failed)" in done.stdout  # the summary line is still printed

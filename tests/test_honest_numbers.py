"""Numbers that are what they say: a budget that can be counted, and --limit that never shrinks a result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.testing.openai_server import OpenAIStubServer


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "phantom"
    result = run("phantom", "--n", 80, "--depth", 6, "--questions-per-template", 3, "--quiet", "--out", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture()
def server():
    with OpenAIStubServer() as stub:
        yield stub


def qa(bench: Path, server: OpenAIStubServer, out: Path, *extra: object):
    return run("eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "my-local-model",
               "--base-url", server.base_url, "--out", out, *extra)


def test_a_budget_on_a_model_without_a_price_is_refused(
    bench: Path, server: OpenAIStubServer, tmp_path: Path
) -> None:
    result = qa(bench, server, tmp_path / "out", "--max-cost", "1")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        "irbgen: error: --max-cost: irbgen has no price for model 'my-local-model', so it could not count "
        "what is spent; give --price-per-1k-input and --price-per-1k-output (USD per 1,000 tokens)"
    )
    assert server.requests == 0 and not (tmp_path / "out").exists()


def test_a_judge_without_a_price_is_refused_too(
    bench: Path, server: OpenAIStubServer, tmp_path: Path
) -> None:
    result = run("eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "gpt-4o-mini",
                 "--base-url", server.base_url, "--judge-model", "my-judge", "--max-cost", "1",
                 "--out", tmp_path / "refused")
    assert result.exit_code == 2, result.output
    assert "no price for model 'my-judge'" in result.output
    result = qa(bench, server, tmp_path / "out", "--max-cost", "1", "--judge-model", "my-judge",
                "--price-per-1k-input", "0.001", "--price-per-1k-output", "0.002")
    assert result.exit_code == 0, result.output  # the given price covers every unpriced model
    result = qa(bench, server, tmp_path / "out2", "--price-per-1k-input", "0.001")
    assert result.exit_code == 2
    assert "--price-per-1k-input and --price-per-1k-output go together" in result.output


def test_a_given_price_is_counted(bench: Path, server: OpenAIStubServer, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = qa(bench, server, out, "--max-cost", "100", "--limit", "4",
                "--price-per-1k-input", "1", "--price-per-1k-output", "2")
    assert result.exit_code == 0, result.output
    ledger = json.loads((out / "ledger.json").read_text())
    summary = ledger["summary"]
    total = summary["total"] if "total" in summary else summary
    assert ledger["unpriced"] == []
    assert total["cost"] == pytest.approx(
        (total["prompt_tokens"] * 1 + total["completion_tokens"] * 2) / 1000
    )
    assert total["cost"] > 0


def test_a_build_budget_on_a_model_without_a_price_is_refused(tmp_path: Path) -> None:
    dump = Path(__file__).resolve().parents[1] / "data/samples/wikidata/wikidata-new.json.bz2"
    result = run("build", "--source", "wikidata-dump", "--dump", dump, "--offline", "--llm", "openai",
                 "--base-url", "http://127.0.0.1:9/v1", "--model", "my-local-model", "--max-cost", "1",
                 "--out", tmp_path / "run")
    assert result.exit_code == 2, result.output
    assert "--max-cost: irbgen has no price for model 'my-local-model'" in result.output

"""What the README and --help promise, the commands do: refusals with a reason, listed choices, flag names."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.cli.eval import METHOD_NAMES, RETRIEVER_NAMES
from irbgen.eval.qa.methods import METHODS
from irbgen.eval.retrievers import RETRIEVERS


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory shaped like a build's run directory: the benchmark is one level down, and beside it the
    run's fingerprint.json and its own manifest.json (of another kind than a benchmark's)."""
    from irbgen.builds.output import RunManifest

    root = tmp_path_factory.mktemp("run") / "run-sample"
    result = run("phantom", "--n", 60, "--depth", 6, "--questions-per-template", 2, "--quiet",
                 "--out", root / "benchmark")
    assert result.exit_code == 0, result.output
    (root / "facts.jsonl").write_text("")
    (root / "fingerprint.json").write_text('{"options": {"source": "wikipedia-dump"}}\n')
    recorded = RunManifest(source="wikipedia", config={}, counts={})
    (root / "manifest.json").write_text(recorded.model_dump_json())
    return root


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_depth_that_gives_no_templates_exits_2_with_the_reason(depth: int, tmp_path: Path) -> None:
    result = run("phantom", "--depth", depth, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"irbgen: error: --depth {depth}: the grammar gives no question templates below depth 4 "
        "(2 at depth 4), so no question could be written"
    )
    assert not (tmp_path / "out").exists()


def test_retrieval_help_names_the_measures_as_the_output_does() -> None:
    help_text = " ".join(run("eval", "retrieval", "--help").output.split())
    assert "nDCG@k, R@k, RR@k and AP" in help_text
    assert "MRR" not in help_text and "MAP" not in help_text


def test_choices_are_the_registries() -> None:
    assert RETRIEVER_NAMES == tuple(sorted(RETRIEVERS))
    assert METHOD_NAMES == tuple(sorted(METHODS))


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "retrieval", "--retriever", "bm26"],
        ["eval", "qa", "--method", "rag2", "--model", "m"],
        ["eval", "qa", "--method", "rag", "--model", "m", "--retriever", "bm26"],
    ],
)
def test_unknown_choices_list_the_valid_ones(args: list[str], run_dir: Path, tmp_path: Path) -> None:
    result = run(*args, "--benchmark", run_dir / "benchmark", "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert "is not one of" in result.output
    assert ("'bm25', 'dense', 'hybrid'" in result.output) or ("'closed-book', 'cot'" in result.output)


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "RUN"],
        ["export", "RUN", "--format", "parquet", "--out", "OUT"],
        ["eval", "retrieval", "--benchmark", "RUN", "--out", "OUT"],
        ["eval", "qa", "--benchmark", "RUN", "--method", "closed-book", "--model", "m",
         "--base-url", "http://127.0.0.1:9/v1", "--out", "OUT"],
        ["compare", "RUN", "--no-bm25"],
        ["compare", "RUN"],
        ["audit", "RUN", "--out", "OUT"],
        ["review", "RUN", "--score"],
    ],
)
def test_a_run_directory_given_as_a_benchmark_points_inside(
    args: list[str], run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    out = tmp_path / "out"
    result = run(*[run_dir if a == "RUN" else out if a == "OUT" else a for a in args])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == (
        f"irbgen: error: {run_dir}: a build's run directory, not a benchmark: "
        f"{run_dir}/benchmark is the benchmark"
    )
    assert not out.exists()


def test_a_run_directory_without_a_benchmark_says_so(tmp_path: Path) -> None:
    dump = Path(__file__).resolve().parents[1] / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
    out, titles = tmp_path / "run", tmp_path / "titles.txt"
    titles.write_text("No Such Article\n")
    built = run("build", "--source", "wikipedia-dump", "--dump", dump, "--offline", "--titles", titles,
                "--out", out, "-q")  # fmt: skip
    assert built.exit_code == 1  # the build failed: nothing to evaluate
    result = run("validate", out)
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"irbgen: error: {out}: a build's run directory that holds no benchmark (the build did not finish; "
        "its manifest.json says why if it failed)"
    )


def test_a_missing_key_names_the_flag(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_KEY", raising=False)
    result = run("eval", "qa", "--benchmark", run_dir / "benchmark", "--method", "closed-book",
                 "--model", "m", "--api-key-env", "MY_KEY", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "environment variable MY_KEY is not set" in result.output
    assert "(choose another variable with --api-key-env)" in result.output
    assert "api_key_env" not in result.output


def test_a_second_judge_without_a_first_names_the_flags(run_dir: Path, tmp_path: Path) -> None:
    result = run("eval", "qa", "--benchmark", run_dir / "benchmark", "--method", "closed-book",
                 "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--second-judge-model", "j",
                 "--out", tmp_path / "out")
    assert result.output.strip().endswith("--second-judge-model needs --judge-model"), result.output
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["eval", "retrieval", "--k", "0"], "--k must be a positive integer, got 0"),
        (["eval", "retrieval", "--chunk-overlap", "600"],
         "--chunk-overlap (600) must be smaller than --chunk-tokens (512)"),
        (["eval", "qa", "--limit", "-1"], "--limit must be 0 or more, got -1"),
        (["eval", "qa", "--max-steps", "0"], "--max-steps must be at least 1, got 0"),
        (["eval", "qa", "--concurrency", "0"], "--concurrency: Input should be greater than or equal to 1"),
        (["eval", "qa", "--max-cost", "-1"], "--max-cost: Input should be greater than or equal to 0"),
        (["eval", "qa", "--price-per-1k-input", "-1", "--price-per-1k-output", "1"],
         "--price-per-1k-input and --price-per-1k-output must be numbers, 0 or more"),
    ],
)
def test_bad_values_are_named_by_their_flag(
    args: list[str], says: str, run_dir: Path, tmp_path: Path
) -> None:
    endpoint = ["--method", "closed-book", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]
    qa = endpoint if "qa" in args else []
    result = run(*args, *qa, "--benchmark", run_dir / "benchmark", "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"irbgen: error: {says}"

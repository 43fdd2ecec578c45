"""Every command that reads a benchmark takes it as BENCHMARK or as --benchmark, alike; both or neither
is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main

# each command that reads a benchmark, with what else it needs (the benchmark goes first or as --benchmark)
COMMANDS = {
    "validate": ["validate"],
    "export": ["export", "--format", "parquet", "--out", "o"],
    "eval retrieval": ["eval", "retrieval", "--quiet", "--out", "o"],
    "eval qa": ["eval", "qa", "--method", "closed-book", "--model", "m", "--out", "o"],
    "filter": ["filter", "--drop-closed-book", "closed", "--out", "o"],
    "review": ["review", "--score"],
    "audit": ["audit", "--sample", "3", "--out", "o"],
}


def invoke(args: list[object]):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "b"
    assert invoke(["phantom", "--n", 30, "--seed", 2, "--out", out, "--quiet"]).exit_code == 0
    return out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_both_ways_are_in_the_help(command):
    result = invoke([*COMMANDS[command][: 2 if command.startswith("eval") else 1], "--help"])
    assert result.exit_code == 0
    assert "BENCHMARK" in result.output.splitlines()[0]
    assert "--benchmark DIR Benchmark directory (or give it as BENCHMARK)." in " ".join(result.output.split())


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_benchmark_given_twice_is_one_line_and_exit_2(command, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    result = invoke([*COMMANDS[command], a, "--benchmark", b])
    assert result.exit_code == 2
    line = f"irbgen: error: the benchmark given twice ({a} and --benchmark {b}): give one"
    assert result.output.splitlines() == [line]


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"audit"}))  # audit --score needs none
def test_no_benchmark_is_one_line_and_exit_2(command):
    result = invoke(COMMANDS[command])
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "irbgen: error: no benchmark given: give it as BENCHMARK or as --benchmark DIR"
    ]


@pytest.mark.parametrize("how", ["positional", "option"])
def test_validate_export_and_retrieval_take_it_either_way(bench, tmp_path, how):
    given = [bench] if how == "positional" else ["--benchmark", bench]
    validated = invoke(["validate", *given])
    assert validated.exit_code == 0 and validated.output.startswith(f"{bench}: valid (30 documents")
    exported = invoke(["export", *given, "--format", "parquet", "--out", tmp_path / "pq"])
    assert exported.exit_code == 0, exported.output
    assert (tmp_path / "pq" / "hops.parquet").is_file()
    ranked = invoke(["eval", "retrieval", *given, "--out", tmp_path / "eval", "--quiet"])
    assert ranked.exit_code == 0, ranked.output
    assert (tmp_path / "eval" / "metrics.json").is_file()
    drawn = invoke(["audit", *given, "--sample", "3", "--out", tmp_path / "sheet"])
    assert drawn.exit_code == 0, drawn.output

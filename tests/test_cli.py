"""The `irbgen` command end to end: phantom, validate, export; exit codes and atomic output."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main

REPO = Path(__file__).resolve().parents[1]


def run(*args: str):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def test_phantom_writes_a_benchmark_that_validates(tmp_path):
    out = tmp_path / "bench"
    result = run("phantom", "--n", 120, "--seed", 3, "--out", out)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("wrote 500 questions, 120 articles and ")
    assert sorted(_files(out)) == [
        "README.md",
        "corpus.jsonl",
        "manifest.json",
        "qrels/hops.tsv",
        "qrels/test.tsv",
        "queries.jsonl",
        "queries_hops.jsonl",
        "samples.jsonl",
    ]
    checked = run("validate", out)
    assert checked.exit_code == 0, checked.output
    assert "valid (120 documents, 500 samples" in checked.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["n"] == 120 and manifest["seed"] == 3
    assert str(tmp_path) not in (out / "manifest.json").read_text()  # the output path is not recorded


def test_same_seed_gives_a_byte_identical_directory(tmp_path):
    for name in ("a", "b"):
        assert run("phantom", "--n", 150, "--seed", 8, "--out", tmp_path / name).exit_code == 0
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert run("phantom", "--n", 150, "--seed", 9, "--out", tmp_path / "c").exit_code == 0
    assert _files(tmp_path / "a")["samples.jsonl"] != _files(tmp_path / "c")["samples.jsonl"]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--n", "0"], "irbgen: error: --n: Input should be greater than or equal to 1"),
        (["--depth", "0"], "irbgen: error: --depth: Input should be greater than or equal to 1"),
        (["--questions-per-template", "0"], "irbgen: error: --questions-per-template: Input should be"),
        (["--sampling-attempts", "0"], "irbgen: error: --sampling-attempts: Input should be"),
        (["--n", "1", "--questions-per-template", "2"], "gave only 0 distinct questions"),
        (["--n", "1"], "has at most 3 distinct questions"),
        (["--n", "3", "--questions-per-template", "50"], "ask for fewer or raise --n"),
    ],
)
def test_impossible_settings_exit_2_with_one_line(tmp_path, flags, message):
    result = run("phantom", *flags, "--out", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_existing_output_needs_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    for force in ((), ("--force",)):  # a folder irbgen did not write is never replaced
        result = run("phantom", "--n", 60, "--out", out, *force)
        assert result.exit_code == 2
        assert "holds files that are not a benchmark (keep.txt)" in result.output
        assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    (out / "keep.txt").unlink()
    assert run("phantom", "--n", 60, "--out", out).exit_code == 0  # an empty folder is fine
    result = run("phantom", "--n", 60, "--out", out)
    assert result.exit_code == 2 and "already exists; pass --force" in result.output
    assert run("phantom", "--n", 60, "--seed", 1, "--out", out, "--force").exit_code == 0


def test_unwritable_output_is_bad_input(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = run("phantom", "--n", 60, "--out", blocker / "out")
    assert result.exit_code == 2
    assert str(blocker) in result.output


def test_config_file_then_flags(tmp_path):
    config = tmp_path / "phantom.toml"
    config.write_text("[phantom]\nn = 70\nseed = 4\nquestions_per_template = 2\n")
    out = tmp_path / "out"
    assert run("phantom", "--config", config, "--seed", 6, "--out", out).exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["config"]["n"], manifest["config"]["seed"], manifest["counts"]["samples"]) == (
        70,
        6,
        100,
    )


def test_bad_config_files_name_the_file(tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text("[phantom\nn = 3\n")
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("[phantom]\npeople = 3\n")
    not_a_key = f"{unknown}: unknown key 'people' in [phantom]"
    for path, message in ((broken, "not valid TOML"), (unknown, not_a_key)):
        result = run("phantom", "--config", path, "--out", tmp_path / "out")
        assert result.exit_code == 2
        assert str(path) in result.output and message in result.output


def test_shipped_config_holds_the_defaults():
    from irbgen.phantom.config import PhantomConfig, load_config

    assert load_config(REPO / "pipelines" / "phantom.toml", {}) == PhantomConfig()


def test_validate_names_the_broken_line(tmp_path):
    out = tmp_path / "out"
    assert run("phantom", "--n", 60, "--out", out).exit_code == 0
    lines = (out / "corpus.jsonl").read_text().splitlines()
    lines[1] = lines[1][:-5]
    (out / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    result = run("validate", out)
    assert result.exit_code == 2
    assert "corpus.jsonl:2:" in result.output
    assert run("validate", tmp_path / "missing").exit_code == 2


def test_export_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    assert run("phantom", "--n", 60, "--out", out).exit_code == 0
    result = run("export", out, "--format", "parquet", "--out", tmp_path / "pq")
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "pq" / "samples.parquet").num_rows == 500
    assert pq.read_table(tmp_path / "pq" / "corpus.parquet").num_rows == 60


def test_an_interrupted_run_leaves_nothing(tmp_path):
    out = tmp_path / "big"
    process = subprocess.Popen(
        [sys.executable, "-m", "irbgen", "phantom", "--n", "400000", "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob(".big.tmp-*")) and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # wait until the writer has a half-written temporary directory
    assert list(tmp_path.glob(".big.tmp-*")), "the writer never started"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode != 0, "the run finished before it could be interrupted"
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []

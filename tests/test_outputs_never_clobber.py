"""Outputs that never clobber: refused --out folders, consistent reads, temp folders of killed writers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.benchmark import BenchmarkChanged, consistent_read
from irbgen.cli import main
from irbgen.testing.openai_server import OpenAIStubServer


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "phantom"
    assert run("phantom", "--n", 40, "--depth", 4, "--out", out, "-q").exit_code == 0
    return out


def test_the_manifest_lists_each_file_size(bench, tmp_path):
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["sizes"]["corpus.jsonl"] == (bench / "corpus.jsonl").stat().st_size
    assert set(manifest["sizes"]) == set(manifest["files"])


def test_a_rewrite_by_another_process_while_reading_exits_1(tmp_path):
    out = tmp_path / "b"
    assert run("phantom", "--n", 40, "--depth", 4, "--out", out, "-q").exit_code == 0
    with pytest.raises(BenchmarkChanged, match="benchmark changed while reading") as caught:
        with consistent_read(out):
            first = (out / "corpus.jsonl").read_bytes()
            rewrite = [sys.executable, "-m", "irbgen", "phantom", "--n", "60", "--depth", "4", "-q"]
            subprocess.run([*rewrite, "--out", str(out), "--force"], check=True, timeout=120)
            assert (out / "corpus.jsonl").read_bytes() != first
    assert caught.value.exit_code == 1
    with consistent_read(out):  # an unchanged benchmark reads through
        (out / "samples.jsonl").read_bytes()


def test_export_refuses_a_non_empty_out_and_force_replaces_it_whole(bench, tmp_path):
    out = tmp_path / "export"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    for force in ((), ("--force",)):
        refused = run("export", bench, "--format", "parquet", "--out", out, *force)
        assert refused.exit_code == 2 and "holds files that are not an export (mine.txt)" in refused.output
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run("export", bench, "--format", "parquet", "--out", empty).exit_code == 0
    assert run("export", bench, "--format", "hf", "--out", empty).exit_code == 2
    assert run("export", bench, "--format", "hf", "--out", empty, "--force").exit_code == 0
    assert not list(empty.glob("*.parquet"))  # no mix of formats in one folder
    assert (empty / "dataset_dict.json").is_file()


def test_eval_qa_refuses_a_benchmark_or_foreign_files_as_out(bench, tmp_path):
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    other = tmp_path / "other"
    shutil.copytree(bench, other)
    cases = (
        (bench, "--out is the input --benchmark"),
        (bench / "qa", "--out is inside the input --benchmark"),
        (other, "holds a benchmark, not a QA evaluation"),
        (foreign, "not a QA evaluation (thesis.tex)"),
    )
    with OpenAIStubServer() as server:
        for out, message in cases:
            result = run(
                "eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "m",
                "--base-url", server.base_url, "--out", out,
            )  # fmt: skip
            assert result.exit_code == 2 and message in result.output
        assert server.requests == 0
    assert sorted(p.name for p in foreign.iterdir()) == ["thesis.tex"]


def test_eval_qa_files_are_readable_by_others_and_force_starts_over(bench, tmp_path):
    out = tmp_path / "qa"
    with OpenAIStubServer() as server:
        args = ["eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "m"]
        args += ["--base-url", server.base_url, "--limit", 3, "--out", out]
        assert run(*args).exit_code == 0
        assert server.requests == 3
        for name in ("config.json", "predictions.jsonl", "metrics.json", "per_query.jsonl"):
            assert (out / name).stat().st_mode & 0o044 == 0o044, name
        assert run(*args).exit_code == 0 and server.requests == 3  # resumed: nothing asked again
        changed = run(*args[:-2], "--k", 2, "--method", "rag", "--out", out)
        assert changed.exit_code == 2 and 'method "closed-book" -> "rag"' in changed.output
        (out / "predictions.jsonl").write_text("")
        (out / "config.json").write_text("{}")  # not resumable any more
        assert run(*args).exit_code == 2
        assert run(*args, "--force").exit_code == 0
        assert server.requests == 3  # started over, answered from the cache the run paid for
        assert len((out / "predictions.jsonl").read_text().splitlines()) == 3


def test_temp_folders_of_a_killed_writer_are_removed_by_the_next(tmp_path):
    out = tmp_path / "b"
    assert run("phantom", "--n", 30, "--depth", 4, "--out", out, "-q").exit_code == 0
    stale = [tmp_path / ".b.tmp-999999", tmp_path / ".b.old-999998"]
    for folder in stale:
        folder.mkdir()
        (folder / "corpus.jsonl").write_text("half")
    other = tmp_path / ".c.tmp-5"  # another output's: not ours to remove
    other.mkdir()
    assert run("phantom", "--n", 30, "--depth", 4, "--out", out, "-q", "--force").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [".c.tmp-5", "b"]

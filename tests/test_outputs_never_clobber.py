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


# -- issue 25: a folder irbgen did not write is never deleted; human work survives ------------------------


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ROOT."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def reviewed_copy(bench: Path, out: Path) -> Path:
    """A copy of BENCH whose first 4 samples are judged valid, with the card's Audit section scored."""
    shutil.copytree(bench, out)
    add_reviews(out, count=4)
    assert run("audit", "--score", out).exit_code == 0
    assert "## Audit" in (out / "README.md").read_text()
    return out


def add_reviews(bench: Path, count: int) -> None:
    from irbgen.audit.records import Judgment
    from irbgen.review.index import sample_digest
    from irbgen.review.store import ReviewWriter

    writer = ReviewWriter(bench, "ann")
    writer.open()
    for line in (bench / "samples.jsonl").read_bytes().splitlines()[:count]:
        sample = json.loads(line)["id"]
        writer.append(
            sample, Judgment(well_formed=True, answer_correct=True, supported=True), sample_digest(line)
        )


def test_force_never_deletes_a_folder_of_user_files_or_a_clone(tmp_path):
    home = tmp_path / "H"
    (home / "sub").mkdir(parents=True)
    (home / "thesis.tex").write_text("keep")
    clone = tmp_path / "clone"  # what a clone of irbgen looks like
    (clone / "irbgen").mkdir(parents=True)
    (clone / ".git").mkdir()
    (clone / "pyproject.toml").write_text("[project]\nname = 'irbgen'\n")
    (clone / "irbgen" / "__init__.py").write_text("")
    before = tree(tmp_path)
    for out in (home, clone):
        result = run("phantom", "--n", 30, "--depth", 4, "--out", out, "--force")
        assert result.exit_code == 2 and "holds files that are not a benchmark" in result.output
    assert tree(tmp_path) == before


def test_out_equal_to_the_input_is_refused_before_anything_is_touched(bench, tmp_path):
    copy = tmp_path / "B"
    shutil.copytree(bench, copy)
    evaluation = tmp_path / "E"
    assert run("eval", "retrieval", "--benchmark", copy, "--out", evaluation, "-q").exit_code == 0
    before = tree(tmp_path)
    for args in (
        ["eval", "retrieval", "--benchmark", copy],
        ["compare", copy, "--no-bm25"],
        ["audit", copy],
        ["export", copy, "--format", "parquet"],
        ["filter", copy, "--drop-closed-book", evaluation],
    ):
        result = run(*args, "--out", copy, "--force")
        assert result.exit_code == 2 and f"{copy}: --out is the input" in result.output, (args, result.output)
    result = run("report", evaluation, "--out", evaluation, "--force")
    assert result.exit_code == 2 and "--out is the input EVAL_DIRS" in result.output
    assert tree(tmp_path) == before


def test_phantom_force_over_a_reviewed_benchmark_keeps_reviews_and_the_audit(bench, tmp_path, caplog):
    out = reviewed_copy(bench, tmp_path / "B")
    before = tree(out)
    again = ["phantom", "--n", 40, "--depth", 4, "--out", out, "-q", "--force"]  # as `bench` was made
    assert run(*again).exit_code == 0
    assert tree(out) == before  # the same benchmark: left as it was, card and reviews included
    reviews = tree(out / "reviews")
    assert run(*again, "--seed", 3).exit_code == 0
    assert tree(out / "reviews") == reviews
    assert "kept 0 judgment(s) in reviews/; 4 went stale" in caplog.text
    card = (out / "README.md").read_text()
    assert "## Audit" in card and "> Measured on an earlier build of this benchmark" in card
    assert run("validate", out).exit_code == 0  # the card's new checksum is in the manifest
    assert run("phantom", "--n", 40, "--depth", 4, "--out", out, "-q", "--force", "--seed", 4).exit_code == 0
    assert (out / "README.md").read_text().count("> Measured on an earlier build") == 1


def test_judged_samples_whose_text_is_unchanged_stay_current(bench, tmp_path, caplog):
    out = reviewed_copy(bench, tmp_path / "B")
    lines = (out / "samples.jsonl").read_bytes().splitlines(keepends=True)
    source = tmp_path / "source"
    shutil.copytree(bench, source)
    # drop the second judged sample from the source: one judgment goes stale, three stay current
    second = json.loads(lines[1])["id"]
    eval_dir = tmp_path / "closed"
    eval_dir.mkdir()
    config = {"kind": "qa", "method": "closed-book", "model": "m", "benchmark_name": "phantom",
              "samples_sha256": json.loads((source / "manifest.json").read_text())["files"]["samples.jsonl"],
              "closed_book": {"by": "f1", "threshold": 0.5}}  # fmt: skip
    (eval_dir / "config.json").write_text(json.dumps(config))
    (eval_dir / "predictions.jsonl").write_text(
        json.dumps({"id": second, "closed_book_correct": True}) + "\n"
    )
    result = run("filter", source, "--drop-closed-book", eval_dir, "--out", out, "--force")
    assert result.exit_code == 0, result.output
    assert "kept 3 judgment(s) in reviews/; 1 went stale" in caplog.text


def test_an_audit_sheet_with_judgments_is_not_replaced(bench, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", bench, "--sample", 3, "--out", sheet).exit_code == 0
    assert run("audit", bench, "--sample", 2, "--out", sheet, "--force").exit_code == 0  # blank: replaced
    records = [json.loads(line) for line in (sheet / "audit.jsonl").read_text().splitlines()]
    records[0]["judgment"]["well_formed"] = True
    (sheet / "audit.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    before = tree(sheet)
    result = run("audit", bench, "--sample", 3, "--out", sheet, "--force")
    assert result.exit_code == 2 and "holds 1 judgment(s) made by hand" in result.output
    assert tree(sheet) == before


def test_a_symlinked_out_keeps_its_link_and_replaces_its_target(bench, tmp_path):
    target = tmp_path / "target"
    assert run("phantom", "--n", 30, "--depth", 4, "--out", target, "-q").exit_code == 0
    link = tmp_path / "link"
    link.symlink_to(target)
    assert run("phantom", "--n", 40, "--depth", 4, "--out", link, "-q", "--force").exit_code == 0
    assert (
        link.is_symlink()
        and (target / "manifest.json").read_bytes() == (bench / "manifest.json").read_bytes()
    )


def test_a_rerun_or_forced_rebuild_keeps_reviews_and_the_audit(tmp_path, caplog):
    from sample_builds import SAMPLE_BUILD as command

    run_dir = tmp_path / "RUN"
    assert run(*command, "--out", run_dir, "-q").exit_code == 0
    benchmark = run_dir / "benchmark"
    add_reviews(benchmark, count=4)
    assert run("audit", "--score", benchmark).exit_code == 0
    whole, judged = tree(run_dir), tree(benchmark)
    result = run("phantom", "--n", 30, "--depth", 4, "--out", run_dir, "--force")  # not a benchmark
    assert result.exit_code == 2 and "holds a build's run directory, not a benchmark" in result.output
    assert tree(run_dir) == whole
    assert run(*command, "--out", run_dir, "-q").exit_code == 0  # a rerun of a finished build
    assert tree(benchmark) == judged
    assert run(*command, "--seed", 4, "--out", run_dir, "-q", "--force").exit_code == 0
    assert "the benchmark's reviews and audit" in caplog.text  # kept by the start-over
    after = tree(benchmark)
    assert {k: v for k, v in after.items() if k.startswith("reviews")} == {
        k: v for k, v in judged.items() if k.startswith("reviews")
    }
    assert after["samples.jsonl"] != judged["samples.jsonl"]
    assert "judgment(s) in reviews/" in caplog.text and "went stale" in caplog.text
    assert "> Measured on an earlier build" in (benchmark / "README.md").read_text()
    assert run("validate", benchmark).exit_code == 0


def test_a_benchmark_holding_files_irbgen_did_not_write_is_not_replaced(bench, tmp_path):
    out = tmp_path / "B"
    shutil.copytree(bench, out)
    (out / "notes.txt").write_text("mine")
    before = tree(out)
    result = run("phantom", "--n", 30, "--depth", 4, "--out", out, "--force")
    assert result.exit_code == 2
    assert "holds a benchmark and files irbgen did not write there (notes.txt)" in result.output
    assert tree(out) == before

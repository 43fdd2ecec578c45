"""Reruns that know what they resume: one build option changed at a time, over every build option.

A rerun with an option that decides the outputs is refused (exit 2) naming that option, before any stage
runs; an option that only changes speed or stopping (processes, concurrency, budget) resumes; --force
starts over. Every option of `irbgen build` must appear in one of the tables below.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.cli.build import build
from irbgen.pipeline.checkpoint import CheckpointStore
from irbgen.pipeline.rundir import FINGERPRINT

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
WIKI = SAMPLES / "wiki"
WIKIDATA = SAMPLES / "wikidata"


def run(*args: object):
    return CliRunner().invoke(main, ["build", *map(str, args)])


def arguments(options: dict[str, object]) -> list[str]:
    args: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            args.append(flag)
        elif isinstance(value, list):
            for item in value:
                args += [flag, str(item)]
        elif value is not None and value is not False:
            args += [flag, str(value)]
    return args


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inputs")
    files = {
        "dump": shutil.copy(WIKI / "sample-pages-articles.xml.bz2", root / "dump.xml.bz2"),
        "warc": shutil.copy(SAMPLES / "web" / "cited-pages.warc.gz", root / "pages.warc.gz"),
        "warc2": shutil.copy(SAMPLES / "web" / "cited-pages.warc.gz", root / "other.warc.gz"),
        "index": WIKI / "sample-pages-articles-multistream-index.txt",
        "wd": shutil.copy(WIKIDATA / "wikidata-new.json.bz2", root / "new.json.bz2"),
        "wd_old": WIKIDATA / "wikidata-old.json.gz",
        "titles": root / "titles.txt",
        "entities": root / "entities.txt",
        "counts": root / "counts.tsv",
        "model": root / "rebel-model",
        "properties": root / "properties.json",
    }
    files["titles"].write_text("Alpha\n")
    files["entities"].write_text("Q1\n")
    files["counts"].write_text("Q1\t3\n")
    files["properties"].write_text(
        '[\n{"type": "property", "id": "P1813", "datatype": "monolingualtext", '
        '"labels": {"en": {"language": "en", "value": "short name"}}}\n]\n'
    )
    files["model"].mkdir()
    (files["model"] / "config.json").write_text("{}")
    return {name: Path(path) for name, path in files.items()}


def wikipedia_base(inputs) -> dict[str, object]:
    return {"source": "wikipedia-dump", "dump": inputs["dump"], "warc": [inputs["warc"]], "offline": True}


def wikidata_base(inputs) -> dict[str, object]:
    return {"source": "wikidata-dump", "dump": inputs["wd"], "limit": 150}  # enough items for samples


# option -> a value that changes it (None: drop a flag of the base run), for each source.
def wikipedia_changes(inputs, base_run: Path) -> dict[str, object]:
    return {
        "dump": inputs["dump"].with_name("dump-copy.xml.bz2"),
        "from_facts": base_run,
        "index": inputs["index"],
        "shards": 2,
        "created_after": "2001-01-01",
        "created_before": "2030-01-01",
        "min_citations": 1,
        "titles": inputs["titles"],
        "limit": 3,
        "llm": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "stub",
        "offline": None,
        "warc": [inputs["warc2"]],
        "allow_private_hosts": True,
        "wayback": True,
        "fetch_timeout": 30.0,
        "grounding_threshold": 0.5,
        "kg_coverage": 0.5,
        "max_hops": 3,
        "false_premise_share": 0.3,
        "keep_shortcuts": True,
        "answers_per_fact": 3,
        "reference_date": "2020-01-01",
        "seed": 5,
    }


def wikidata_changes(inputs) -> dict[str, object]:
    return {
        "dump": inputs["wd"].with_name("new-copy.json.bz2"),
        "old_dump": inputs["wd_old"],
        "wikipedia_dump": inputs["dump"],
        "rebel_model": inputs["model"],
        "popularity": "counts-file",
        "min_sitelinks": 5,
        "entities": inputs["entities"],
        "keep_all_statements": True,
        "properties": inputs["properties"],
        "counts_file": inputs["counts"],
        "popular_threshold": 0.5,
        "hops": "1-2",
        "per_hop": 10,
        "property_share": 0.5,
        "trivial_share": 0.1,
        "mix": "*=1",
        "chunk_tokens": 256,
        "seed": 3,
        "limit": 151,
        "shards": 2,
        "offline": True,
    }


# Options that change speed, stopping or where a key is read from: a rerun may change them and resume.
RESUMING = {
    "processes": 2,
    "llm_concurrency": 3,
    "fetch_concurrency": 3,
    "per_host": 3,
    "max_cost": 1.0,
    "price_per_1k_input": 0.001,
    "price_per_1k_output": 0.002,
    "api_key_env": "OTHER_KEY",
    "facts_only": True,
    "quiet": True,
    "executor": "ray",  # a complete run read back on a local Ray instance
    "ray_address": "127.0.0.1:1",  # unused with --executor local
    "ray_io_actors": 3,
    "ray_max_retries": 1,
    "shared_dir": "shared-elsewhere",  # where workers read the driver's files and write their shards
}
NOT_OPTIONS = {"out", "force", "config_path"}  # the run directory, starting over, the settings file
NEEDS = {  # options that are only valid together with another one
    ("wikidata-dump", "rebel_model"): {"wikipedia_dump": "dump"},
    ("wikidata-dump", "popularity"): {"counts_file": "counts"},
    ("wikipedia-dump", "from_facts"): {"dump": None},
    ("wikipedia-dump", "llm"): {"model": "stub"},
    ("wikipedia-dump", "base_url"): {"model": "stub"},
}


def test_every_build_option_is_in_a_table(inputs, tmp_path):
    names = {param.name for param in build.params}
    tabled = set(wikipedia_changes(inputs, tmp_path)) | set(wikidata_changes(inputs)) | set(RESUMING)
    assert names - NOT_OPTIONS - {"source"} == tabled - {"source"}


@pytest.fixture(scope="module")
def runs(inputs, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("runs")
    shutil.copy(inputs["dump"], inputs["dump"].with_name("dump-copy.xml.bz2"))
    shutil.copy(inputs["wd"], inputs["wd"].with_name("new-copy.json.bz2"))
    made = {}
    bases = {"wikipedia-dump": wikipedia_base(inputs), "wikidata-dump": wikidata_base(inputs)}
    for source, base in bases.items():
        out = root / source
        result = run(*arguments(base), "--out", out)
        assert result.exit_code == 0, result.output
        made[source] = out
    return made


def snapshot(run_dir: Path) -> dict[str, int]:
    return {str(p.relative_to(run_dir)): p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()}


def rerun(base: dict, name: str, value: object, run_dir: Path, extra: dict | None = None):
    options = {**base, **(extra or {}), name: value}
    before = snapshot(run_dir)
    result = run(*arguments(options), "--out", run_dir)
    return result, before


@pytest.mark.parametrize("source", ["wikipedia-dump", "wikidata-dump"])
def test_changing_one_deciding_option_is_refused_naming_it(source, inputs, runs):
    run_dir = runs[source]
    if source == "wikipedia-dump":
        base, changes = wikipedia_base(inputs), wikipedia_changes(inputs, runs["wikidata-dump"])
    else:
        base, changes = wikidata_base(inputs), wikidata_changes(inputs)
    for name, value in changes.items():
        needs = NEEDS.get((source, name), {})
        extra = {key: inputs.get(what, what) if what else None for key, what in needs.items()}
        result, before = rerun(base, name, value, run_dir, extra)
        flag = "--" + name.replace("_", "-")
        assert result.exit_code == 2, (name, result.output)
        line = result.output.strip()
        assert "\n" not in line, (name, line)
        assert f"{run_dir}: made with other settings (" in line, (name, line)
        assert flag in line, (name, line)
        assert "pass --force to start over" in line
        assert snapshot(run_dir) == before, name  # nothing was touched


@pytest.mark.parametrize("source", ["wikipedia-dump", "wikidata-dump"])
def test_options_that_decide_nothing_resume(source, inputs, runs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # --shared-dir is relative: the saved bases are remade there, not in the repo
    run_dir = runs[source]
    base = wikipedia_base(inputs) if source == "wikipedia-dump" else wikidata_base(inputs)
    samples = (run_dir / "benchmark" / "samples.jsonl").read_bytes()
    for name, value in RESUMING.items():
        if source == "wikidata-dump" and name in ("fetch_concurrency", "per_host", "facts_only"):
            continue  # Wikipedia-only flags, refused for Wikidata
        result, _ = rerun(base, name, value, run_dir)
        assert result.exit_code == 0, (name, result.output)
        assert (run_dir / "benchmark" / "samples.jsonl").read_bytes() == samples, name


def test_an_input_changed_on_disk_is_named(inputs, runs):
    run_dir = runs["wikidata-dump"]
    stat = inputs["wd"].stat()
    os.utime(inputs["wd"], ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    try:
        result = run(*arguments(wikidata_base(inputs)), "--out", run_dir)
    finally:
        os.utime(inputs["wd"], ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert result.exit_code == 2
    assert "--dump changed on disk" in result.output
    assert run(*arguments(wikidata_base(inputs)), "--out", run_dir).exit_code == 0


def test_force_starts_over_and_gives_what_a_fresh_run_gives(inputs, runs, tmp_path, caplog):
    fresh, copy = tmp_path / "fresh", tmp_path / "copy"
    shutil.copytree(runs["wikipedia-dump"], copy)
    options = {**wikipedia_base(inputs), "seed": 5, "limit": 4}
    assert run(*arguments(options), "--out", fresh).exit_code == 0
    refused = run(*arguments(options), "--out", copy)
    assert refused.exit_code == 2
    assert "--seed 0 -> 5" in refused.output and "--limit null -> 4" in refused.output
    forced = run(*arguments(options), "--out", copy, "--force")
    assert forced.exit_code == 0, forced.output
    assert f"{copy}: starting over (--limit null -> 4; --seed 0 -> 5); kept: fetched pages" in caplog.text
    for name in ("samples.jsonl", "corpus.jsonl", "qrels/test.tsv"):
        assert (copy / "benchmark" / name).read_bytes() == (fresh / "benchmark" / name).read_bytes()
    fingerprint = json.loads((copy / FINGERPRINT).read_text())
    assert fingerprint["options"]["seed"] == 5


def test_build_out_refuses_a_benchmark_and_foreign_files(inputs, runs, tmp_path):
    bench = runs["wikipedia-dump"] / "benchmark"
    manifest = (bench / "manifest.json").read_bytes()
    for force in ((), ("--force",)):
        result = run(*arguments(wikipedia_base(inputs)), "--out", bench, *force)
        assert result.exit_code == 2
        assert f"{bench}: holds a benchmark" in result.output
    assert (bench / "manifest.json").read_bytes() == manifest
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("mine")
    result = run(*arguments(wikipedia_base(inputs)), "--out", foreign, "--force")
    assert result.exit_code == 2 and "holds files irbgen did not write here (thesis.tex)" in result.output
    assert (foreign / "thesis.tex").read_text() == "mine"


def test_a_run_directory_from_before_fingerprints_needs_force(inputs, runs, tmp_path):
    old = tmp_path / "old"
    shutil.copytree(runs["wikidata-dump"], old)
    (old / FINGERPRINT).unlink()
    refused = run(*arguments(wikidata_base(inputs)), "--out", old)
    assert refused.exit_code == 2 and f"without {FINGERPRINT}" in refused.output
    forced = run(*arguments(wikidata_base(inputs)), "--out", old, "--force")
    assert forced.exit_code == 0, forced.output
    assert (old / FINGERPRINT).is_file()


def test_force_keeps_fetched_pages_only_if_nothing_that_decides_fetches_changed():
    from irbgen.cli.build import kept_on_force

    assert kept_on_force({"seed", "max_hops"})["warc"] == "fetched pages"
    for name in ("warc", "offline", "wayback", "allow_private_hosts", "irbgen", "source"):
        assert "warc" not in kept_on_force({"seed", name}), name
    assert kept_on_force({"warc"})["llm-cache.sqlite"] == "model replies"


def test_a_rerun_with_empty_checkpoint_files_warns_of_nothing(inputs, runs, caplog):
    """Found as: "rejects.jsonl: cut a torn last line (0 bytes)" on every rerun of a run without rejects."""
    run_dir = runs["wikidata-dump"]
    (run_dir / "rejects.jsonl").write_text("")
    caplog.set_level("WARNING")
    store = CheckpointStore(run_dir, "fresh-stage").open()
    store.close()
    assert "torn" not in caplog.text

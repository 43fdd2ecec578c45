"""The command a card shows rebuilds its benchmark byte for byte, for every generator."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"


def irbgen(*args: str, cwd: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "irbgen", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def card_command(benchmark: Path) -> list[str]:
    """The command in the card's code block, as words; the manifest holds the same."""
    card = (benchmark / "README.md").read_text()
    made = card.split("## How it was made")[1].split("\n## ")[0]
    lines = [line for line in made.splitlines() if line.startswith("irbgen ")]
    assert len(lines) == 1, lines
    manifest = (benchmark / "manifest.json").read_text()
    assert f'"command": "{lines[0]}"' in manifest
    return shlex.split(lines[0])


def card_blocks(benchmark: Path, language: str) -> list[str]:
    """The code blocks of one language in the card's "How to load it" section."""
    section = (benchmark / "README.md").read_text().split("## How to load it")[1].split("\n## ")[0]
    return [part.split("\n```", 1)[0] for part in section.split(f"```{language}\n")[1:]]


def run_card_loaders(benchmark: Path) -> None:
    """The card's validate command and Python snippet, as printed, where the card says: in its directory."""
    assert "run in this directory (the one that holds this card)" in (benchmark / "README.md").read_text()
    (validate,) = card_blocks(benchmark, "sh")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    words = shlex.split(validate)
    done = subprocess.run([sys.executable, "-m", "irbgen", *words[1:]], cwd=benchmark, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and ": valid (" in done.stdout, done.stderr
    (snippet,) = card_blocks(benchmark, "python")
    script = snippet + "\nprint(len(corpus), len(queries), len(qrels))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=benchmark, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    counts = json.loads((benchmark / "manifest.json").read_text())["counts"]
    written = [counts["benchmark_documents"] if "benchmark_documents" in counts else counts["documents"]]
    assert done.stdout.split()[:2] == [str(written[0]), str(counts["samples"])], (done.stdout, counts)


def files(directory: Path) -> dict[str, bytes]:
    paths = sorted(directory.rglob("*"))
    return {str(p.relative_to(directory)): p.read_bytes() for p in paths if p.is_file()}


def inputs(folder: Path, *paths: Path) -> Path:
    folder.mkdir()
    for path in paths:
        shutil.copyfile(path, folder / path.name)
    return folder


def rerun_from_card(benchmark: Path, folder: Path, placeholder: str, out: str) -> list[str]:
    words = card_command(benchmark)
    assert words[0] == "irbgen" and words[-2:] == ["--out", placeholder]
    irbgen(*words[1:-1], out, cwd=folder)
    return words


def test_a_card_gives_input_paths_as_they_were_given(tmp_path: Path) -> None:
    """Inputs in two folders, given by relative paths: the card's commands run as printed from the folder
    the build ran in, and a path given in full is recorded by its name alone."""
    first = tmp_path / "first"
    (first / "wiki").mkdir(parents=True)
    (first / "web").mkdir()
    shutil.copyfile(SAMPLES / "wiki" / "sample-pages-articles.xml.bz2", first / "wiki" / "pages.xml.bz2")
    shutil.copyfile(SAMPLES / "web" / "cited-pages.warc.gz", first / "web" / "pages.warc.gz")
    irbgen("build", "--source", "wikipedia-dump", "--dump", "wiki/pages.xml.bz2", "--offline",
           "--warc", "web/pages.warc.gz", "--out", "run-sample", cwd=first)  # fmt: skip
    benchmark = first / "run-sample" / "benchmark"
    words = card_command(benchmark)
    assert words[words.index("--dump") + 1] == "wiki/pages.xml.bz2"
    assert words[words.index("--warc") + 1] == "web/pages.warc.gz"
    run_card_loaders(benchmark)
    second = tmp_path / "second"
    shutil.copytree(first, second, ignore=shutil.ignore_patterns("run-sample"))
    rerun_from_card(benchmark, second, "RUN", "run-sample")  # as printed, the last word as the card says
    assert files(benchmark) == files(second / "run-sample" / "benchmark")
    run_card_loaders(second / "run-sample" / "benchmark")

    absolute = tmp_path / "third"
    absolute.mkdir()
    dump, warc = first / "wiki" / "pages.xml.bz2", first / "web" / "pages.warc.gz"
    irbgen("build", "--source", "wikipedia-dump", "--dump", str(dump), "--offline", "--warc", str(warc),
           "--out", "run-sample", cwd=absolute)  # fmt: skip
    words = card_command(absolute / "run-sample" / "benchmark")
    assert words[words.index("--dump") + 1] == "pages.xml.bz2" and str(tmp_path) not in " ".join(words)


def test_phantom_card_reproduces(tmp_path: Path) -> None:
    config = tmp_path / "phantom.toml"
    config.write_text("[phantom]\nsampling_attempts = 50\ntree_size = 30\n")
    irbgen("phantom", "--n", "90", "--seed", "3", "--depth", "6", "--questions-per-template", "3",
           "--friendship-k", "2.5", "--easy-mode", "--config", str(config), "--quiet", "--out", "first",
           cwd=tmp_path)
    run_card_loaders(tmp_path / "first")
    words = rerun_from_card(tmp_path / "first", tmp_path, "OUT", "second")
    assert words[1:-2] == ["phantom", "--n", "90", "--seed", "3", "--depth", "6", "--questions-per-template",
                           "3", "--tree-size", "30", "--friendship-k", "2.5", "--easy-mode",
                           "--sampling-attempts", "50"]
    assert files(tmp_path / "first") == files(tmp_path / "second")


@pytest.mark.parametrize(
    ("source", "given", "expected"),
    [
        (
            "wikipedia-dump",
            ["--dump", "sample-pages-articles.xml.bz2", "--warc", "cited-pages.warc.gz", "--offline",
             "--seed", "4", "--max-hops", "3", "--false-premise-share", "0.3"],
            ["--dump", "sample-pages-articles.xml.bz2", "--offline", "--warc", "cited-pages.warc.gz",
             "--max-hops", "3", "--false-premise-share", "0.3", "--reference-date", "2025-06-18", "--seed",
             "4"],  # the date relative dates count from, pinned
        ),
        (
            "wikidata-dump",
            ["--dump", "wikidata-new.json.bz2", "--old-dump", "wikidata-old.json.gz", "--offline",
             "--per-hop", "20", "--hops", "1-3", "--seed", "2"],
            ["--dump", "wikidata-new.json.bz2", "--old-dump", "wikidata-old.json.gz", "--hops", "1-3",
             "--per-hop", "20", "--seed", "2", "--offline"],
        ),
    ],
)
def test_build_cards_reproduce(source: str, given: list[str], expected: list[str], tmp_path: Path) -> None:
    sample_files = {
        "wikipedia-dump": ["wiki/sample-pages-articles.xml.bz2", "web/cited-pages.warc.gz"],
        "wikidata-dump": ["wikidata/wikidata-new.json.bz2", "wikidata/wikidata-old.json.gz"],
    }[source]
    sample_files = [SAMPLES / name for name in sample_files]
    first, second = inputs(tmp_path / "a", *sample_files), inputs(tmp_path / "b", *sample_files)
    irbgen("build", "--source", source, *given, "--out", "run", cwd=first)
    run_card_loaders(first / "run" / "benchmark")
    words = rerun_from_card(first / "run" / "benchmark", second, "RUN", "run")
    run_manifest = json.loads((first / "run" / "manifest.json").read_text())
    assert run_manifest["command"] == shlex.join(words)  # the run directory's manifest says it too
    assert words[1:4] == ["build", "--source", source] and words[4:-2] == expected
    built, rebuilt = files(first / "run" / "benchmark"), files(second / "run" / "benchmark")
    assert len(built) >= 6 and built == rebuilt

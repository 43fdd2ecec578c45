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


def test_phantom_card_reproduces(tmp_path: Path) -> None:
    config = tmp_path / "phantom.toml"
    config.write_text("[phantom]\nsampling_attempts = 50\ntree_size = 30\n")
    irbgen("phantom", "--n", "90", "--seed", "3", "--depth", "6", "--questions-per-template", "3",
           "--friendship-k", "2.5", "--easy-mode", "--config", str(config), "--quiet", "--out", "first",
           cwd=tmp_path)
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
             "--max-hops", "3", "--false-premise-share", "0.3", "--seed", "4"],
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
    words = rerun_from_card(first / "run" / "benchmark", second, "RUN", "run")
    run_manifest = json.loads((first / "run" / "manifest.json").read_text())
    assert run_manifest["command"] == shlex.join(words)  # the run directory's manifest says it too
    assert words[1:4] == ["build", "--source", source] and words[4:-2] == expected
    built, rebuilt = files(first / "run" / "benchmark"), files(second / "run" / "benchmark")
    assert len(built) >= 6 and built == rebuilt

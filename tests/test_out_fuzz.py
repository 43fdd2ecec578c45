"""A fuzz of --out: every command that writes one, pointed at each of its inputs (the input itself, a
folder inside it, the folder around it), at a folder of user files and at a benchmark holding reviews,
with and without --force. Whatever happens, nothing is lost: the trees are hashed before and after, and a
refusal exits 2. Only a benchmark may replace a benchmark, and then its reviews/ come through unchanged.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.audit.records import Judgment
from irbgen.cli import main
from irbgen.review.index import sample_digest
from irbgen.review.store import ReviewWriter
from irbgen.testing.openai_server import OpenAIStubServer

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
PHANTOM = ["--n", "30", "--depth", "4", "-q"]


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def tree(root: Path) -> dict[str, str]:
    """Every file and folder under ROOT -> the sha256 of its bytes ('dir' for a folder, 'link' + target)."""
    found = {}
    for path in sorted(root.rglob("*")):
        name = str(path.relative_to(root))
        if path.is_symlink():
            found[name] = "link " + str(path.readlink())
        elif path.is_dir():
            found[name] = "dir"
        else:
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def add_reviews(bench: Path, reviewer: str = "ann", count: int = 5) -> None:
    """Judge the first COUNT samples of BENCH as valid, as irbgen review would record it."""
    writer = ReviewWriter(bench, reviewer)
    writer.open()
    for line in (bench / "samples.jsonl").read_bytes().splitlines()[:count]:
        sample = json.loads(line)["id"]
        writer.append(
            sample, Judgment(well_formed=True, answer_correct=True, supported=True), sample_digest(line)
        )


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("outs")
    inputs = root / "inputs"
    inputs.mkdir()
    bench = inputs / "bench"
    assert run("phantom", *PHANTOM, "--out", bench).exit_code == 0
    (inputs / "phantom.toml").write_text("[phantom]\nseed = 0\n", encoding="utf-8")
    (inputs / "wikipedia.toml").write_text("[wikipedia-dump]\nseed = 0\n", encoding="utf-8")
    shutil.copytree(REPO / "irbgen" / "resources" / "phantom", inputs / "vocab")
    (inputs / "wiki").mkdir()
    shutil.copy(SAMPLES / "wiki" / "sample-pages-articles.xml.bz2", inputs / "wiki" / "dump.xml.bz2")
    (inputs / "web").mkdir()
    shutil.copy(SAMPLES / "web" / "cited-pages.warc.gz", inputs / "web" / "pages.warc.gz")
    assert run("eval", "retrieval", "--benchmark", bench, "--out", inputs / "eval", "-q").exit_code == 0
    user = root / "user"  # a folder of the user's own files
    (user / "sub").mkdir(parents=True)
    (user / "thesis.tex").write_text("keep", encoding="utf-8")
    (user / "sub" / "notes.txt").write_text("keep too", encoding="utf-8")
    reviewed = root / "reviewed"  # a benchmark holding judgments
    assert run("phantom", *PHANTOM, "--seed", "7", "--out", reviewed).exit_code == 0
    add_reviews(reviewed)
    with OpenAIStubServer() as server:
        closed = inputs / "closed"
        qa = ["eval", "qa", "--benchmark", bench, "--method", "closed-book", "--model", "m", "--limit", "2"]
        assert run(*qa, "--base-url", server.base_url, "--out", closed, "-q").exit_code == 0
        yield {"root": root, "inputs": inputs, "user": user, "reviewed": reviewed, "url": server.base_url}


def command_lines(world) -> dict[str, tuple[list[object], dict[str, Path]]]:
    """Per command: a command line that works, without --out, and its inputs by the flag that names them."""
    inputs, url = world["inputs"], world["url"]
    bench, closed, evaluation = inputs / "bench", inputs / "closed", inputs / "eval"
    dump, warc = inputs / "wiki" / "dump.xml.bz2", inputs / "web" / "pages.warc.gz"
    qa = ["--method", "closed-book", "--model", "m", "--base-url", url, "--limit", "1", "-q"]
    wiki = ["--dump", dump, "--warc", warc, "--offline", "-q"]
    return {
        "phantom": (
            ["phantom", *PHANTOM, "--config", inputs / "phantom.toml", "--vocab-dir", inputs / "vocab"],
            {"--config": inputs / "phantom.toml", "--vocab-dir": inputs / "vocab"},
        ),
        "build": (
            ["build", "--source", "wikipedia-dump", *wiki, "--config", inputs / "wikipedia.toml"],
            {"--dump": dump, "--warc": warc, "--config": inputs / "wikipedia.toml"},
        ),
        "export": (["export", bench, "--format", "parquet"], {"BENCHMARK": bench}),
        "eval retrieval": (["eval", "retrieval", "--benchmark", bench, "-q"], {"--benchmark": bench}),
        "eval qa": (["eval", "qa", "--benchmark", bench, *qa], {"--benchmark": bench}),
        "report": (["report", evaluation], {"EVAL_DIRS": evaluation}),
        "compare": (
            ["compare", bench, "--no-bm25", "--closed-book", closed],
            {"BENCH_DIRS": bench, "--closed-book": closed},
        ),
        "audit": (["audit", bench, "--sample", "3"], {"BENCHMARK": bench}),
        "filter": (
            ["filter", bench, "--drop-closed-book", closed],
            {"BENCHMARK": bench, "--drop-closed-book": closed},
        ),
    }


COMMANDS = ("phantom", "build", "export", "eval retrieval", "eval qa", "report", "compare", "audit", "filter")
INPUT_CASES = [
    (command, flag, where, force)
    for command, flags in {
        "phantom": ("--config", "--vocab-dir"),
        "build": ("--dump", "--warc", "--config"),
        "export": ("BENCHMARK",),
        "eval retrieval": ("--benchmark",),
        "eval qa": ("--benchmark",),
        "report": ("EVAL_DIRS",),
        "compare": ("BENCH_DIRS", "--closed-book"),
        "audit": ("BENCHMARK",),
        "filter": ("BENCHMARK", "--drop-closed-book"),
    }.items()
    for flag in flags
    for where in ("is", "is inside", "holds")
    for force in (False, True)
]


def with_out(world, command: str, out: Path, force: bool) -> list[object]:
    args, _ = command_lines(world)[command]
    return [*args, "--out", out, *(["--force"] if force else [])]


def test_every_command_with_out_is_fuzzed():
    def walk(group, prefix=()):
        for name, command in group.commands.items():
            if hasattr(command, "commands"):
                yield from walk(command, (*prefix, name))
            elif any(param.name == "out" for param in command.params):
                yield " ".join((*prefix, name))

    assert set(walk(main)) == set(COMMANDS)
    assert {case[0] for case in INPUT_CASES} == set(COMMANDS)


@pytest.mark.parametrize(("command", "flag", "where", "force"), INPUT_CASES)
def test_out_at_an_input_is_refused_and_nothing_changes(world, command, flag, where, force):
    path = command_lines(world)[command][1][flag]
    out = {"is": path, "is inside": path / "sub", "holds": path.parent}[where]
    before = tree(world["root"])
    result = run(*with_out(world, command, out, force))
    assert result.exit_code == 2, result.output
    # the folder around an input holds the others too: the first named is reported
    assert f"--out {where} the input {'' if where == 'holds' else flag}" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert tree(world["root"]) == before


def test_out_through_a_symlink_or_a_relative_path_is_still_the_input(world, tmp_path, monkeypatch):
    bench = world["inputs"] / "bench"
    (tmp_path / "link").symlink_to(bench)
    monkeypatch.chdir(bench.parent)
    before = tree(world["root"])
    for out in (tmp_path / "link", Path("bench"), Path("wiki/../bench"), tmp_path / "link" / "x"):
        result = run(*with_out(world, "eval retrieval", out, True))
        assert result.exit_code == 2 and "the input --benchmark" in result.output, result.output
    assert tree(world["root"]) == before


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_of_user_files_is_never_replaced(world, command, force):
    before = tree(world["root"])
    result = run(*with_out(world, command, world["user"], force))
    assert result.exit_code == 2, result.output
    assert "thesis.tex" in result.output or "sub" in result.output
    assert tree(world["root"]) == before


@pytest.mark.parametrize("force", [False, True])
@pytest.mark.parametrize("command", COMMANDS)
def test_a_benchmark_with_reviews_loses_nothing(world, command, force, tmp_path, caplog):
    out = tmp_path / "reviewed"
    shutil.copytree(world["reviewed"], out)
    before, reviews = tree(out), tree(out / "reviews")
    result = run(*with_out(world, command, out, force))
    if force and command in ("phantom", "filter"):  # a benchmark replaced by a benchmark
        assert result.exit_code == 0, result.output
        assert tree(out / "reviews") == reviews
        assert "5 went stale" in caplog.text  # another seed, another benchmark: other samples
        assert run("validate", out).exit_code == 0
    else:
        assert result.exit_code == 2, result.output
        assert tree(out) == before

"""A fuzz of the command line: every command, every option, with empty, negative, huge, binary and
missing values. Whatever happens, no traceback: exit 0, or one line and exit 1 or 2.

Commands run in-process (click's CliRunner), each from a base command line that works, with one option
replaced. URL options only ever get values without an http scheme, which are refused before any
connection; the one model endpoint is a loopback stub server.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import click
import pytest
from cli_commands import commands
from click.testing import CliRunner

from irbgen.audit.records import Judgment
from irbgen.cli import main
from irbgen.review.store import ReviewWriter
from irbgen.testing.openai_server import OpenAIStubServer

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
KINDS = ("empty", "zero", "negative", "huge", "binary", "missing")


def value(kind: str, root: Path) -> str:
    return {
        "empty": "",
        "zero": "0",
        "negative": "-1",
        "huge": "9" * 30,
        "binary": str(root / "binary.bin"),
        "missing": str(root / "no-such-file"),
    }[kind]



@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("fuzz")
    (root / "binary.bin").write_bytes(os.urandom(4096) + b"\x00\xff\xfe")
    bench = root / "bench"
    runner = CliRunner()
    assert (
        runner.invoke(main, ["phantom", "--n", "30", "--depth", "4", "--out", str(bench), "-q"]).exit_code
        == 0
    )
    evaluation = root / "eval"
    assert (
        runner.invoke(
            main, ["eval", "retrieval", "--benchmark", str(bench), "--out", str(evaluation)]
        ).exit_code
        == 0
    )
    reviewed = root / "reviewed"  # a copy with one judgment, for `review --score` (no server is started)
    shutil.copytree(bench, reviewed)
    first = json.loads((reviewed / "samples.jsonl").read_text(encoding="utf-8").splitlines()[0])["id"]
    ReviewWriter(reviewed, "fuzz").open()
    ReviewWriter(reviewed, "fuzz").append(
        first, Judgment(well_formed=True, answer_correct=True, supported=True, note="")
    )
    with OpenAIStubServer() as server:
        closed = root / "closed"  # a closed-book evaluation, for `filter --drop-closed-book`
        qa = ["eval", "qa", "--benchmark", str(bench), "--method", "closed-book", "--model", "m"]
        qa += ["--limit", "2"]
        result = runner.invoke(main, [*qa, "--base-url", server.base_url, "--out", str(closed), "-q"])
        assert result.exit_code == 0, result.output
        yield {"root": root, "bench": bench, "eval": evaluation, "server": server, "reviewed": reviewed,
               "closed": closed}  # fmt: skip


def bases(world, out: Path) -> dict[tuple[str, ...], tuple[list[str], list[str]]]:
    """Per command: its positional arguments and its options, a command line that works."""
    bench, url = str(world["bench"]), world["server"].base_url
    wiki = ["--dump", str(SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"), "--offline", "--limit", "0"]
    wiki += ["--base-url", url, "--model", "m"]  # the model path, with no call made (no page is read)
    wikidata = ["--dump", str(SAMPLES / "wikidata" / "wikidata-new.json.bz2"), "--limit", "20"]
    qa = ["--benchmark", bench, "--method", "closed-book", "--model", "m", "--base-url", url, "--limit", "1"]
    return {
        ("phantom",): (
            [],
            ["--n", "20", "--depth", "4", "--questions-per-template", "2", "-q", "--out", str(out)],
        ),
        ("validate",): ([bench], []),
        ("export",): ([bench], ["--format", "parquet", "--out", str(out)]),
        ("build",): ([], ["--source", "wikipedia-dump", *wiki, "--out", str(out)]),
        ("build", "wikidata"): ([], ["--source", "wikidata-dump", *wikidata, "--out", str(out)]),
        ("eval", "retrieval"): ([], ["--benchmark", bench, "--out", str(out)]),
        ("eval", "qa"): ([], [*qa, "--out", str(out)]),
        ("report",): ([str(world["eval"])], ["--out", str(out)]),
        ("compare",): ([bench], ["--no-bm25"]),
        ("filter",): ([bench], ["--drop-closed-book", str(world["closed"]), "--out", str(out)]),
        ("audit",): ([bench], ["--sample", "3", "--out", str(out)]),
        # --score in every line: the fuzz checks the options' values, never starts the web server
        ("review",): ([str(world["reviewed"])], ["--score", "--port", "0"]),
    }


def replaced(base: tuple[list[str], list[str]], param: click.Parameter, new: str | None) -> list[str]:
    """The command line with PARAM set to NEW (None: a flag turned on)."""
    positionals, options = base
    if isinstance(param, click.Argument):
        return [new or "", *options]
    flag = max(param.opts, key=len)
    kept, index = [], 0
    while index < len(options):
        if options[index] == flag:
            index += 1 if param.is_flag else 2
            continue
        kept.append(options[index])
        index += 1
    return [*positionals, *kept, flag] if new is None else [*positionals, *kept, flag, new]


def test_every_command_is_fuzzed(world, tmp_path):
    assert set(commands()) == set(bases(world, tmp_path)) - {("build", "wikidata")}


def test_no_value_of_any_option_gives_a_traceback(world, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a fuzzed value taken as a relative path ("--out 0") lands here
    runner = CliRunner()
    failures = []
    count = 0
    for path, command in [*commands().items(), (("build", "wikidata"), main.commands["build"])]:
        for param in command.params:
            if param.name in ("help", "quiet", "verbose"):
                continue
            kinds = (None,) if getattr(param, "is_flag", False) else KINDS
            for kind in kinds:
                count += 1
                out = tmp_path / f"out-{count}"
                base = bases(world, out)[path]
                new = None if kind is None else value(kind, world["root"])
                args = [*path[:1], *replaced(base, param, new)] if path[0] == "build" else [*path]
                if path[0] != "build":
                    args += replaced(base, param, new)
                result = runner.invoke(main, args)
                error = result.exception
                lines = [line for line in result.output.splitlines() if line.startswith("irbgen: error")]
                if (error is not None and not isinstance(error, SystemExit)) or "Traceback" in result.output:
                    failures.append(f"{' '.join(args)} -> {type(error).__name__}: {error}")
                elif result.exit_code not in (0, 1, 2):
                    failures.append(f"{' '.join(args)} -> exit {result.exit_code}")
                elif result.exit_code == 1 and len(lines) != 1:
                    failures.append(f"{' '.join(args)} -> exit 1 without one error line: {result.output!r}")
    assert not failures, "\n".join(failures)
    assert count > 150


def test_every_base_command_line_works(world, tmp_path):
    """So that each fuzzed value, not a broken base, is what a failure is about."""
    for number, (path, (positionals, options)) in enumerate(bases(world, tmp_path / "o").items()):
        out = tmp_path / f"base-{number}"
        options = [str(out) if item == str(tmp_path / "o") else item for item in options]
        result = CliRunner().invoke(main, [*path[:1 if path[0] == "build" else 2], *positionals, *options])
        if path[0] == "build":  # kept fast by reading (almost) nothing: the build runs to its end and fails
            assert result.exit_code == 1 and "nothing to evaluate" in result.output, (path, result.output)
            continue
        assert result.exit_code == 0, (path, result.output)

"""Edges of the command line: non-finite numbers, a stdout that cannot be written, help that is true."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from cli_commands import commands
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.cli.support import FiniteFloat
from irbgen.eval.qa.subset import limited
from irbgen.schema import Sample

ROOT = Path(__file__).resolve().parents[1]



def float_options() -> list[tuple[tuple[str, ...], str]]:
    return [
        (path, max(param.opts, key=len))
        for path, command in commands().items()
        for param in command.params
        if isinstance(param.type, FiniteFloat)
    ]


def test_every_number_option_takes_only_finite_numbers() -> None:
    plain = [
        f"{' '.join(path)} {param.name}"
        for path, command in commands().items()
        for param in command.params
        if isinstance(param.type, click.types.FloatParamType)
    ]
    assert plain == []  # every float option uses FiniteFloat
    assert len(float_options()) >= 14


@pytest.mark.parametrize("text", ["inf", "-inf", "nan", "1e999"])
@pytest.mark.parametrize(("path", "flag"), float_options())
def test_a_non_finite_number_is_refused_naming_the_option(path, flag, text, tmp_path) -> None:
    result = CliRunner().invoke(main, [*path, f"{flag}={text}", "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{flag}': '{text}' is not a finite number" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("source", "table", "key", "text"),
    [
        ("wikipedia-dump", "wikipedia-dump", "fetch_timeout", "inf"),
        ("wikidata-dump", "wikidata-dump", "popular_threshold", "nan"),
    ],
)
def test_a_non_finite_number_in_a_config_file_is_refused_naming_it(
    source, table, key, text, tmp_path
) -> None:
    config = tmp_path / "c.toml"
    config.write_text(f"[{table}]\n{key} = {text}\n")
    dump = tmp_path / "dump.json"
    dump.write_text("[]\n")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--source",
            source,
            "--dump",
            str(dump),
            "--config",
            str(config),
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert result.exit_code == 2, result.output
    assert f"irbgen: error: {config}: {key}: Input should be a finite number" in result.output
    assert not (tmp_path / "r").exists()


PHANTOM = ["phantom", "--n", "20", "--depth", "4", "--out", "{out}"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--help"], ["validate", "{bench}"], PHANTOM])
def test_a_full_stdout_gives_one_line(args, tmp_path) -> None:
    bench = ROOT / "data" / "samples"  # any folder: validate writes a line either way
    words = [word.format(bench=bench, out=tmp_path / "b") for word in args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "irbgen", *words], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120)  # fmt: skip
    assert done.returncode in (1, 2), done.stderr
    lines = done.stderr.splitlines()
    if done.returncode == 1:
        assert lines == ["irbgen: error: stdout: No space left on device"]
    else:  # validate of a folder that is not a benchmark says so on stderr before writing to stdout
        assert "Traceback" not in done.stderr and lines[-1].endswith("problem(s)")


def test_the_limit_help_says_how_samples_are_drawn(tmp_path) -> None:
    help_text = CliRunner().invoke(main, ["eval", "qa", "--help"], terminal_width=200).output
    line = " ".join(help_text.split("--limit", 1)[1].split("--retriever")[0].split())
    assert (
        "first N" not in line.replace("not the first N", "")
        and "spread over templates and hop counts" in line
    )
    bench = tmp_path / "bench"
    assert (
        CliRunner()
        .invoke(main, ["phantom", "--n", "40", "--depth", "6", "--out", str(bench), "-q"])
        .exit_code
        == 0
    )
    samples = [
        Sample.model_validate_json(line) for line in (bench / "samples.jsonl").read_text().splitlines()
    ]
    drawn = limited(samples, 10)
    assert len(drawn) == 10 and drawn != samples[:10]  # as the help says: not the first N
    assert len({sample.attributes.template_id for sample in drawn}) > len(
        {sample.attributes.template_id for sample in samples[:10]}
    )

"""`irbgen build --config FILE`: defaults, then the file's [SOURCE] table, then the flags given.

The bundled pipelines/wikipedia.toml and pipelines/wikidata.toml list every setting with its default, so
a run with them is the run without them, byte for byte.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from test_sample_build_hashes import BUILDS, EXPECTED, sha256

from irbgen.builds.wikidata import WikidataBuildConfig
from irbgen.builds.wikipedia import WikipediaBuildConfig
from irbgen.cli import main
from irbgen.cli.build import load_build_config
from irbgen.errors import BadInputError

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
BUNDLED = {
    "wikipedia-dump": (REPO / "pipelines" / "wikipedia.toml", WikipediaBuildConfig),
    "wikidata-dump": (REPO / "pipelines" / "wikidata.toml", WikidataBuildConfig),
}
WIKIDATA = ["--source", "wikidata-dump", "--dump", str(SAMPLES / "wikidata" / "wikidata-new.json.bz2")]


def build(*args: object):
    return CliRunner().invoke(main, ["build", *map(str, args)])


def settings(run: Path) -> dict:
    return json.loads((run / "fingerprint.json").read_text())["options"]


def toml(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_the_file_sets_values_and_a_flag_given_wins(tmp_path):
    config = toml(tmp_path / "c.toml", '[wikidata-dump]\nseed = 7\nper_hop = 3\nhops = "1-2"\nlimit = 150\n')
    result = build(*WIKIDATA, "--config", config, "--seed", 5, "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    options = settings(tmp_path / "run")
    assert (options["seed"], options["per_hop"], options["hops"], options["limit"]) == (5, 3, "1-2", 150)
    command = json.loads((tmp_path / "run" / "manifest.json").read_text())["command"]
    assert "--per-hop 3" in command and "--seed 5" in command  # the card's command rebuilds it


def test_flags_override_the_file_for_every_kind_of_option(tmp_path):
    config = toml(
        tmp_path / "c.toml",
        '[wikipedia-dump]\nper_host = 3\nfetch_timeout = 30\ngrounding_threshold = 0.5\noffline = true\n'
        'warc = ["a.warc.gz"]\nmodel = "m"\n',
    )
    from_file = load_build_config(WikipediaBuildConfig, "wikipedia-dump", config, {})
    assert (from_file.per_host, from_file.fetch_timeout, from_file.grounding_threshold) == (3, 30.0, 0.5)
    assert from_file.offline and from_file.warc == [Path("a.warc.gz")]
    assert from_file.llm == "openai"  # a model named in the file means the openai backend, as a flag does
    flags = {"per_host": 4, "offline": False, "warc": (Path("b.warc.gz"),), "llm": "rules"}
    both = load_build_config(WikipediaBuildConfig, "wikipedia-dump", config, flags)
    assert (both.per_host, both.offline, both.warc, both.llm) == (4, False, [Path("b.warc.gz")], "rules")
    assert both.fetch_timeout == 30.0  # what no flag gave stays as the file set it


def test_a_changed_value_in_the_file_is_refused_like_a_changed_flag(tmp_path):
    config = toml(tmp_path / "c.toml", "[wikidata-dump]\nper_hop = 3\nlimit = 150\n")
    run = tmp_path / "run"
    assert build(*WIKIDATA, "--config", config, "--out", run).exit_code == 0
    assert build(*WIKIDATA, "--config", config, "--out", run).exit_code == 0  # the same settings resume
    assert build(*WIKIDATA, "--per-hop", 3, "--limit", 150, "--out", run).exit_code == 0  # as flags too
    toml(config, "[wikidata-dump]\nper_hop = 4\nlimit = 150\n")
    by_file = build(*WIKIDATA, "--config", config, "--out", run)
    by_flag = build(*WIKIDATA, "--per-hop", 4, "--limit", 150, "--out", run)
    for result in (by_file, by_flag):
        assert result.exit_code == 2
        assert f"{run}: made with other settings (--per-hop 3 -> 4)" in result.output
    assert by_file.output == by_flag.output


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[wikidata-dump]\nper_hops = 3\n", "unknown key 'per_hops' in [wikidata-dump]"),
        ("[wikidata-dump]\nper_host = 3\n", "unknown key 'per_host' in [wikidata-dump]"),  # Wikipedia's
        ("[wikidata-dump]\nout = 'run'\n", "unknown key 'out' in [wikidata-dump]"),
        ("[wikidata-dump]\nper_hop = '3'\n", "per_hop: Input should be a valid integer"),
        ("[wikidata-dump]\nseed = 1.5\n", "seed: Input should be a valid integer"),
        ("[wikidata-dump]\noffline = 'yes'\n", "offline: Input should be a valid boolean"),
        ("[wikidata-dump]\nper_hop = 0\n", "per_hop: Input should be greater than or equal to 1"),
        ("[wikidata]\nper_hop = 3\n", "unknown key 'wikidata'"),
        ("seed = 3\n", "unknown key 'seed'"),
        ("[wikipedia-dump]\nseed = 3\n", "no [wikidata-dump] table"),
        ("[wikidata-dump\n", "not valid TOML"),
    ],
)
def test_a_bad_file_exits_2_naming_the_file_and_the_key(tmp_path, text, named):
    config = toml(tmp_path / "bad.toml", text)
    result = build(*WIKIDATA, "--config", config, "--out", tmp_path / "run")
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert line.startswith(f"irbgen: error: {config}: {named}") and "\n" not in line, line
    assert not (tmp_path / "run").exists()


def test_a_missing_file_exits_2_naming_it(tmp_path):
    missing = tmp_path / "nowhere.toml"
    result = build(*WIKIDATA, "--config", missing, "--out", tmp_path / "run")
    assert result.exit_code == 2
    reason = "cannot read config (No such file or directory)"
    assert result.output.strip() == f"irbgen: error: {missing}: {reason}"


def test_the_new_flags_are_checked_and_wikipedia_only(tmp_path):
    for flag, value in (("--per-host", 0), ("--fetch-timeout", 0), ("--grounding-threshold", 1.5)):
        result = build("--source", "wikipedia-dump", flag, value, "--out", tmp_path / "run")
        assert result.exit_code == 2 and result.output.startswith(f"irbgen: error: {flag}: "), result.output
        result = build(*WIKIDATA, flag, 1, "--out", tmp_path / "run")
        assert result.output.strip() == f"irbgen: error: {flag} does not apply to --source wikidata-dump"


def keys(path: Path) -> set[str]:
    """Every setting the file names: set (key = value) or left unset (# key = example)."""
    return set(re.findall(r"^(?:# )?([a-z0-9_]+) = ", path.read_text(encoding="utf-8"), re.MULTILINE))


@pytest.mark.parametrize("source", sorted(BUNDLED))
def test_every_field_has_a_line_in_the_bundled_file(source):
    path, model = BUNDLED[source]
    assert keys(path) == set(model.model_fields)


@pytest.mark.parametrize("source", sorted(BUNDLED))
def test_the_bundled_file_holds_the_defaults(source, tmp_path):
    path, model = BUNDLED[source]
    dump = {"dump": tmp_path / "dump.json"}
    assert load_build_config(model, source, path, dump) == load_build_config(model, source, None, dump)
    for line in path.read_text(encoding="utf-8").splitlines():  # an unset line becomes a valid setting
        if re.match(r"# [a-z0-9_]+ = ", line):
            toml(tmp_path / "one.toml", f"[{source}]\n{line[2:]}\n")
            load_build_config(model, source, tmp_path / "one.toml", dump)


def test_the_click_defaults_are_the_models():
    command = main.commands["build"]
    context = click.Context(command)
    shown = [param for param in command.params if param.show_default or getattr(param, "is_flag", False)]
    for param in shown:  # what the help shows is what the model does
        for _, model in BUNDLED.values():
            if param.name in model.model_fields:
                assert param.get_default(context) == model.model_fields[param.name].default, param.name


def test_a_bad_setting_names_the_flag_or_the_file(tmp_path):
    config = toml(tmp_path / "c.toml", "[wikidata-dump]\nper_hop = 3\n")
    with pytest.raises(BadInputError, match=r"^--per-hop: Input should be greater than or equal to 1$"):
        load_build_config(WikidataBuildConfig, "wikidata-dump", config, {"per_hop": 0, "dump": "d"})
    with pytest.raises(BadInputError, match=r"^--dump: Field required$"):  # in neither: ask for the flag
        load_build_config(WikidataBuildConfig, "wikidata-dump", config, {})


@pytest.mark.parametrize("name", ["wikipedia", "wikidata"])
def test_the_bundled_file_gives_the_sample_build_byte_for_byte(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    config = REPO / "pipelines" / f"{name}.toml"
    result = CliRunner().invoke(main, [*BUILDS[name], "--config", str(config), "--out", name])
    assert result.exit_code == 0, result.output
    benchmark = tmp_path / name / "benchmark"
    changed = {file for file, expected in EXPECTED[name].items() if sha256(benchmark / file) != expected}
    assert not changed

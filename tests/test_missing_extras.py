"""A missing extra, anywhere, is one line naming the extra and both install commands, and exit 1.

Each command runs in a subprocess whose import system refuses the extra's modules, as a virtualenv
without that extra would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from irbgen.extras import MODULES, extra_of, install_hint, missing_extra

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples"

BLOCKING_RUN = """
import importlib.abc, sys
blocked = set(sys.argv[1].split(","))
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in blocked:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Refuse())
for name in list(sys.modules):
    if name.split(".")[0] in blocked:
        del sys.modules[name]
from irbgen.cli import main
main(sys.argv[2:], prog_name="irbgen")
"""


def run_without(modules: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", BLOCKING_RUN, modules, *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's irbgen, whatever the cwd
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "phantom"
    done = subprocess.run(
        [sys.executable, "-m", "irbgen", "phantom", "--n", "60", "--depth", "6", "--questions-per-template",
         "2", "--out", str(out), "--quiet"], cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert done.returncode == 0, done.stderr
    return out


WIKIPEDIA = ["build", "--source", "wikipedia-dump", "--offline", "--out", "run",
             "--dump", str(SAMPLES / "wiki/sample-pages-articles.xml.bz2"),
             "--warc", str(SAMPLES / "web/cited-pages.warc.gz")]
WIKIDATA = ["build", "--source", "wikidata-dump", "--offline", "--out", "run",
            "--dump", str(SAMPLES / "wikidata/wikidata-new.json.bz2")]
DENSE = ["eval", "retrieval", "--benchmark", "BENCH", "--retriever", "dense", "--out", "eval"]


@pytest.mark.parametrize(
    ("blocked", "extra", "args"),
    [
        ("certifi", "wikipedia", WIKIPEDIA),
        ("trafilatura", "wikipedia", WIKIPEDIA),
        ("mwparserfromhell", "wikipedia", WIKIPEDIA),
        ("qwikidata", "wikidata", WIKIDATA),
        ("sentence_transformers", "dense", DENSE),
        ("pyarrow", "export", ["export", "BENCH", "--format", "parquet", "--out", "parquet"]),
        ("datasets", "export", ["export", "BENCH", "--format", "hf", "--out", "hf"]),
    ],
)
def test_a_missing_extra_is_one_line_with_both_install_commands(
    blocked: str, extra: str, args: list[str], bench: Path, tmp_path: Path
) -> None:
    args = [str(bench) if arg == "BENCH" else arg for arg in args]
    done = run_without(blocked, *args, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("irbgen: error: ")
    assert f"the '{extra}' extra (module '{blocked}' is missing)" in lines[0]
    assert f"pip install -e '.[{extra}]'" in lines[0]
    assert f"-py3-none-any.whl[{extra}]'" in lines[0]
    assert not (tmp_path / "run" / "benchmark").exists()


def test_torch_extras_say_cpu_torch_comes_first() -> None:
    assert install_hint("dense", "sentence_transformers").startswith(
        "pip install torch --index-url https://download.pytorch.org/whl/cpu, then pip install -e '.[dense]'"
    )
    assert "torch" not in install_hint("export", "pyarrow")


def test_every_extra_of_pyproject_is_mapped() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras) - {"test"} == set(MODULES) - {""}
    assert extra_of("pyarrow.parquet") == "export"
    assert str(missing_extra("no_such_module", "x")) == (
        "x needs the Python module 'no_such_module', which is not installed"
    )

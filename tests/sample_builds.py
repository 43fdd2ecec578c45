"""The bundled Wikipedia sample build, shared by the tests that need a real benchmark to work on."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from irbgen.cli import main

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DUMP = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
SAMPLE_WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"
# the offline build of the sample dump, less --out
SAMPLE_BUILD = (
    "build", "--source", "wikipedia-dump", "--dump", SAMPLE_DUMP, "--warc", SAMPLE_WARC, "--offline"
)


def wikipedia_sample_benchmark(root: Path) -> Path:
    """Build the sample dump offline into ROOT/run and return its benchmark directory."""
    result = CliRunner().invoke(main, [str(arg) for arg in [*SAMPLE_BUILD, "--out", root / "run"]])
    assert result.exit_code == 0, result.output
    return root / "run" / "benchmark"

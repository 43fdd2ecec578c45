"""`irbgen export` keeps every file of each bundled sample build, the per-hop files included.

Each file of the benchmark directory is rebuilt from what the export wrote (parquet tables, or the
DatasetDict's splits) and compared with the original: records for the JSON lines files, bytes for the
qrels and for the files copied as they are (card, manifest, reviews). A file nothing rebuilds fails.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_sample_build_hashes import BUILDS

from irbgen.cli import main

pq = pytest.importorskip("pyarrow.parquet")

Tables = dict[str, list[dict[str, Any]]]
SAMPLE_COLUMNS = ("id", "question", "answers", "false_premise", "hops", "difficulty", "source", "evidence")


@pytest.fixture(scope="module", params=sorted(BUILDS))
def exported(request, tmp_path_factory) -> tuple[Path, Path]:
    """(benchmark directory, export root) of each sample build, exported as parquet and as hf."""
    name = request.param
    root = tmp_path_factory.mktemp(name)
    run = CliRunner().invoke
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.chdir(root)
        result = run(main, [*BUILDS[name], "--out", name])
        assert result.exit_code == 0, result.output
        benchmark = root / name if name == "phantom" else root / name / "benchmark"
        reviews = benchmark / "reviews"  # human work a benchmark may hold: exported as it is
        reviews.mkdir()
        (reviews / "ana.jsonl").write_text('{"sample_id":"x","verdict":"valid"}\n', encoding="utf-8")
        for fmt in ("parquet", "hf"):
            result = run(main, ["export", str(benchmark), "--format", fmt, "--out", f"export-{fmt}"])
            assert result.exit_code == 0, result.output
    return benchmark, root


def parquet_tables(out: Path) -> Tables:
    return {path.stem: pq.read_table(path).to_pylist() for path in sorted(out.glob("*.parquet"))}


def hf_tables(out: Path) -> Tables:
    """The DatasetDict's splits, loaded with datasets if installed, else read from its Arrow files."""
    splits = json.loads((out / "dataset_dict.json").read_text())["splits"]
    try:
        import datasets
    except ImportError:
        import pyarrow as pa

        def read(split: str) -> list[dict[str, Any]]:
            rows = []
            for file in sorted((out / split).glob("*.arrow")):
                with pa.memory_map(str(file)) as source:
                    rows += pa.ipc.open_stream(source).read_all().to_pylist()
            return rows

        return {split: read(split) for split in splits}
    loaded = datasets.load_from_disk(str(out))
    assert list(loaded) == splits
    return {split: loaded[split].to_list() for split in splits}


def jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tsv(rows: list[tuple[str, str, int]]) -> bytes:
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{c}\t{s}" for q, c, s in rows)]
    return "".join(line + "\n" for line in lines).encode()


def rebuilt(tables: Tables, out: Path) -> dict[str, Callable[[], Any]]:
    """Each benchmark file, rebuilt from the export; compared with `original` below."""

    def records(table: str, keys: tuple[str, ...]) -> list[dict[str, Any]]:
        rows = tables[table]
        return [{**{key: row[key] for key in keys}, "metadata": json.loads(row["metadata"])} for row in rows]

    def sample(row: dict[str, Any]) -> dict[str, Any]:
        return {key: value if key in SAMPLE_COLUMNS else json.loads(value) for key, value in row.items()}

    hops = tables["hops"]
    return {
        "corpus.jsonl": lambda: records("corpus", ("_id", "title", "text")),
        "queries.jsonl": lambda: records("queries", ("_id", "text")),
        "samples.jsonl": lambda: [sample(row) for row in tables["samples"]],
        "qrels/test.tsv": lambda: tsv([(r["query_id"], r["corpus_id"], r["score"]) for r in tables["qrels"]]),
        "queries_hops.jsonl": lambda: records("hops", ("_id", "text")),
        "qrels/hops.tsv": lambda: tsv(
            [(r["_id"], *pair) for r in hops for pair in zip(r["corpus_ids"], r["scores"], strict=True)]
        ),
        "README.md": lambda: (out / "README.md").read_bytes(),
        "manifest.json": lambda: (out / "manifest.json").read_bytes(),
        "reviews/ana.jsonl": lambda: (out / "reviews" / "ana.jsonl").read_bytes(),
    }


def original(path: Path) -> Any:
    return jsonl(path) if path.suffix == ".jsonl" and path.parent.name != "reviews" else path.read_bytes()


@pytest.mark.parametrize("fmt", ["parquet", "hf"])
def test_every_file_of_the_benchmark_survives_export(exported, fmt):
    benchmark, root = exported
    out = root / f"export-{fmt}"
    tables = parquet_tables(out) if fmt == "parquet" else hf_tables(out)
    assert sorted(tables) == ["corpus", "hops", "qrels", "queries", "samples"]
    rebuild = rebuilt(tables, out)
    files = sorted(str(path.relative_to(benchmark)) for path in benchmark.rglob("*") if path.is_file())
    assert {"queries_hops.jsonl", "qrels/hops.tsv", "README.md", "reviews/ana.jsonl"} <= set(files)
    assert [file for file in files if file not in rebuild] == [], "files the export does not keep"
    for file in files:
        assert rebuild[file]() == original(benchmark / file), f"{file} differs after the {fmt} export"


def test_the_hops_split_loads(exported):
    """The hops split holds one row per hop query, each with the documents that answer the hop."""
    benchmark, root = exported
    hops = hf_tables(root / "export-hf")["hops"]
    assert len(hops) == len(jsonl(benchmark / "queries_hops.jsonl")) > 0
    assert all(json.loads(row["metadata"])["sample_id"] in row["_id"] for row in hops)
    judged = len((benchmark / "qrels" / "hops.tsv").read_text().splitlines()) - 1  # less the header
    assert sum(len(row["corpus_ids"]) for row in hops) == judged


def test_kept_samples_keep_only_their_hops(exported, tmp_path):
    """Exporting some samples (as --reviewed-only does) keeps those samples' hop queries and no other."""
    from irbgen.export import export_parquet

    benchmark, _ = exported
    samples = jsonl(benchmark / "samples.jsonl")
    keep = {sample["id"] for sample in samples[::3]}
    export_parquet(benchmark, tmp_path / "pq", keep)
    hops = pq.read_table(tmp_path / "pq" / "hops.parquet").to_pylist()
    wanted = [q["_id"] for q in jsonl(benchmark / "queries_hops.jsonl") if q["metadata"]["sample_id"] in keep]
    assert [row["_id"] for row in hops] == wanted and wanted

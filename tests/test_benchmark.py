"""Tests for writing, reading, validating and exporting a benchmark directory."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from irbgen.benchmark import (
    BenchmarkStats,
    Spread,
    UnusualQrels,
    check_output,
    qrels_blocks,
    read_documents,
    read_manifest,
    read_qrels,
    read_samples,
    render_card,
    write_benchmark,
)
from irbgen.errors import BadInputError, MissingExtraError, OutputExistsError
from irbgen.export import export_parquet, to_hf_datasets
from irbgen.schema import Attributes, Document, Hop, Manifest, Provenance, Sample
from irbgen.validation import validate_benchmark

FILES = [
    "README.md",
    "corpus.jsonl",
    "manifest.json",
    "qrels/hops.tsv",
    "qrels/test.tsv",
    "queries.jsonl",
    "queries_hops.jsonl",
    "samples.jsonl",
]


def make_documents() -> list[Document]:
    return [
        Document(
            _id="d1", title="Ada Lovelace", text="Ada Lovelace wrote the first program.", metadata={"n": 1}
        ),
        Document(_id="d2", title="Charles Babbage", text="Babbage designed the Analytical Engine."),
        Document(
            _id="d3", title="Zoë", text="Zoë is Ada's   friend.\nShe lives in Zürich.", metadata={"k": "v"}
        ),
    ]


def make_samples() -> list[Sample]:
    return [
        Sample(
            id="s1",
            question="Who wrote the first program?",
            answers=["Ada Lovelace"],
            hops=1,
            difficulty=1.0,
            source="phantom",
            evidence=["d1"],
            attributes=Attributes(template="Who wrote <x>?", template_id=3, question_type="who"),
            provenance=Provenance(generator="test"),
        ),
        Sample(
            id="s2",
            question="Who is the friend of the person who wrote the first program?",
            answers=["Zoë", "Zoe"],
            hops=2,
            difficulty=2.5,
            source="phantom",
            evidence=["d3", "d1"],
            chain=[
                Hop(
                    index=0,
                    operation="relation",
                    predicate="wrote",
                    answers=["Ada Lovelace"],
                    evidence=["d1"],
                ),
                Hop(
                    index=1, operation="relation", predicate="friend", answers=["Zoë", "Zoe"], evidence=["d3"]
                ),
            ],
            attributes=Attributes(template="Who is the friend of <x>?", template_id=7, question_type="who"),
            provenance=Provenance(generator="test", seed=1),
        ),
    ]


def make_manifest() -> Manifest:
    return Manifest(
        tool_version="0.1.0",
        source="phantom",
        name="tiny",
        command="irbgen phantom --n 2 --seed 1",
        config={"n": 2, "universe": {"people": 3}},
        seed=1,
        rejects={"grammar/no_answer": 4},
    )


def write(out: Path, **kwargs: object) -> BenchmarkStats:
    return write_benchmark(out, make_documents(), make_samples(), make_manifest(), **kwargs)  # type: ignore[arg-type]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    stats = write(out, description="A tiny test benchmark.", licence="CC0-1.0")

    assert sorted(snapshot(out)) == FILES
    assert list(read_documents(out)) == make_documents()
    assert list(read_samples(out)) == make_samples()
    assert read_qrels(out) == {"s1": {"d1": 1}, "s2": {"d3": 1, "d1": 1}}
    assert (
        out / "qrels/test.tsv"
    ).read_text() == "query-id\tcorpus-id\tscore\ns1\td1\t1\ns2\td3\t1\ns2\td1\t1\n"
    queries = [json.loads(line) for line in (out / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    assert queries == [
        {
            "_id": "s1",
            "text": "Who wrote the first program?",
            "metadata": {
                "source": "phantom",
                "hops": 1,
                "difficulty": 1.0,
                "question_type": "who",
                "template_id": 3,
                "aggregation": False,
                "false_premise": False,
                "answers": ["Ada Lovelace"],
            },
        },
        {
            "_id": "s2",
            "text": "Who is the friend of the person who wrote the first program?",
            "metadata": {
                "source": "phantom",
                "hops": 2,
                "difficulty": 2.5,
                "question_type": "who",
                "template_id": 7,
                "aggregation": False,
                "false_premise": False,
                "answers": ["Zoë", "Zoe"],
            },
        },
    ]
    corpus_line = (out / "corpus.jsonl").read_bytes().split(b"\n")[0]
    assert corpus_line == (
        b'{"_id":"d1","title":"Ada Lovelace","text":"Ada Lovelace wrote the first program.",'
        b'"metadata":{"n":1}}'
    )
    assert "Zoë" in (out / "corpus.jsonl").read_text(encoding="utf-8")  # UTF-8, not \\u escapes

    manifest = read_manifest(out)
    assert manifest.counts == {
        "documents": 3, "samples": 2, "qrels": 3, "hop_queries": 2, "hop_qrels": 2, "rejects": 4
    }  # fmt: skip
    assert sorted(manifest.files) == [name for name in FILES if name != "manifest.json"]
    assert list(json.loads((out / "manifest.json").read_text()))[:3] == [
        "format_version",
        "tool",
        "tool_version",
    ]
    assert (out / "manifest.json").read_text().endswith("}\n")

    report = validate_benchmark(out)
    assert report.ok, report.problems
    assert report.total_problems == 0
    assert report.counts == {
        "documents": 3, "samples": 2, "queries": 2, "qrels": 3, "hop_queries": 2, "hop_qrels": 2
    }  # fmt: skip

    assert stats.documents == 3 and stats.samples == 2 and stats.qrels == 3
    assert stats.mean_document_tokens == pytest.approx((6 + 5 + 8) / 3)
    assert stats.by_hops == {1: 1, 2: 1}
    assert stats.templates == {3: "Who wrote <x>?", 7: "Who is the friend of <x>?"}
    assert stats.answers_per_sample == Spread(1.5, 1.5, 2)
    assert stats.evidence_per_sample == Spread(1.5, 1.5, 2)


def test_card(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out, description="A tiny test benchmark.", licence="CC0-1.0")
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("# tiny\n\nA tiny test benchmark.\n")
    assert "```\nirbgen phantom --n 2 --seed 1\n```" in card
    assert '| `universe` | {"people": 3} |' in card
    assert "| 7 | `Who is the friend of <x>?` | 1 |" in card
    assert "```sh\nirbgen validate .\n```" in card and 'root = Path(".")' in card  # run in this directory
    assert "CC0-1.0" in card
    stats = BenchmarkStats()
    assert render_card(make_manifest(), stats, "", "") == render_card(make_manifest(), stats, "", "")


def test_card_states_one_licence() -> None:
    stats = BenchmarkStats()

    def licence(manifest: Manifest, given: str) -> str:
        return render_card(manifest, stats, "", given).split("## Licence\n\n")[1]

    assert licence(make_manifest(), "CC0-1.0") == "CC0-1.0\n"  # the builder's, and nothing after it
    synthetic = licence(make_manifest(), "")  # none given: the source's usual terms, one paragraph
    assert "synthetic" in synthetic and "\n\n" not in synthetic
    other = make_manifest().model_copy(update={"source": "elsewhere"})
    assert licence(other, "") == "No licence was given for this benchmark.\n"


def test_spread_median() -> None:
    assert Spread.of({}) == Spread(0.0, 0.0, 0)
    assert Spread.of({1: 2, 5: 1}) == Spread(7 / 3, 1.0, 5)
    assert Spread.of({0: 1, 2: 1, 9: 2}) == Spread(5.0, 5.5, 9)


def test_byte_identical(tmp_path: Path) -> None:
    write(tmp_path / "a")
    write(tmp_path / "b")
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")


def test_existing_output_without_force(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    before = snapshot(out)
    with pytest.raises(OutputExistsError, match="already exists; pass --force to replace it"):
        write(out)
    with pytest.raises(OutputExistsError):
        check_output(out, force=False)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]


def test_a_folder_irbgen_did_not_write_is_refused_even_with_force(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()
    (out / "keep.txt").write_text("precious")
    for force in (False, True):
        with pytest.raises(BadInputError, match=r"holds files that are not a benchmark \(keep.txt\)"):
            write(out, force=force)
    assert snapshot(out) == {"keep.txt": b"precious"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]


def test_existing_output_with_force(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    out.mkdir()  # an empty folder may be used
    write(out)
    (out / "corpus.jsonl").write_text("old")
    check_output(out, force=True)
    write(out, force=True)
    assert sorted(snapshot(out)) == FILES
    assert (out / "corpus.jsonl").read_text() != "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]  # no .old-* or .tmp-* left


def test_check_output_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("x")
    with pytest.raises(BadInputError, match="not a directory"):
        check_output(target, force=True)
    check_output(tmp_path / "new" / "deeper" / "bench", force=False)  # nearest existing parent is tmp_path


def test_failure_mid_way_leaves_nothing(tmp_path: Path) -> None:
    def documents() -> Iterator[Document]:
        yield from make_documents()[:2]
        raise RuntimeError("boom")

    out = tmp_path / "bench"
    with pytest.raises(RuntimeError, match="boom"):
        write_benchmark(out, documents(), make_samples(), make_manifest())
    assert list(tmp_path.iterdir()) == []


def test_failure_with_force_keeps_old_output(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    before = snapshot(out)

    def samples() -> Iterator[Sample]:
        yield make_samples()[0]
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_benchmark(out, make_documents(), samples(), make_manifest(), force=True)
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bench"]


def test_unknown_evidence(tmp_path: Path) -> None:
    samples = make_samples()
    samples[1] = samples[1].model_copy(update={"evidence": ["d3", "nope"]})
    with pytest.raises(BadInputError, match="sample 's2': evidence 'nope' is not a document id"):
        write_benchmark(tmp_path / "bench", make_documents(), samples, make_manifest())
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("evidence", "problem"),
    [
        (["d1", "d\t4"], "evidence 'd\\t4' contains a tab or line break"),
        (["d1", "d\t4", "nope"], "evidence 'd\\t4' contains a tab or line break"),
        (["d1", "nope", "d\t4"], "evidence 'nope' is not a document id"),
    ],
)
def test_the_first_bad_evidence_is_named(tmp_path: Path, evidence: list[str], problem: str) -> None:
    tabbed = Document.model_construct(id="d\t4", title="Tab", text="An id with a tab.", metadata={})
    documents = [*make_documents(), tabbed]  # built unchecked: the schema refuses such an id
    samples = make_samples()
    samples[1] = samples[1].model_copy(update={"evidence": evidence})
    with pytest.raises(BadInputError, match=re.escape(f"sample 's2': {problem}")):
        write_benchmark(tmp_path / "bench", documents, samples, make_manifest())


def test_unknown_hop_evidence(tmp_path: Path) -> None:
    samples = make_samples()
    chain = [samples[1].chain[0], samples[1].chain[1].model_copy(update={"evidence": ["ghost"]})]
    samples[1] = samples[1].model_copy(update={"chain": chain})
    with pytest.raises(BadInputError, match="sample 's2': hop 1 evidence 'ghost'"):
        write_benchmark(tmp_path / "bench", make_documents(), samples, make_manifest())


def test_duplicate_ids(tmp_path: Path) -> None:
    documents = make_documents() + [Document(_id="d2", text="again")]
    with pytest.raises(BadInputError, match="document 'd2': duplicate id"):
        write_benchmark(tmp_path / "a", documents, make_samples(), make_manifest())
    samples = make_samples() + [make_samples()[0]]
    with pytest.raises(BadInputError, match="sample 's1': duplicate id"):
        write_benchmark(tmp_path / "b", make_documents(), samples, make_manifest())
    assert list(tmp_path.iterdir()) == []


def test_unwritable_metadata(tmp_path: Path) -> None:
    documents = make_documents() + [Document(_id="d4", text="x", metadata={"bad": float("nan")})]
    with pytest.raises(BadInputError, match="document 'd4': cannot be written as JSON"):
        write_benchmark(tmp_path / "bench", documents, make_samples(), make_manifest())


def test_empty_evidence_gives_no_qrels(tmp_path: Path) -> None:
    samples = [make_samples()[0].model_copy(update={"evidence": []}), make_samples()[1]]
    stats = write_benchmark(tmp_path / "bench", make_documents(), samples, make_manifest())
    assert stats.qrels == 2
    assert read_qrels(tmp_path / "bench") == {"s2": {"d3": 1, "d1": 1}}
    assert validate_benchmark(tmp_path / "bench").ok


def test_reader_reports_file_and_line(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "samples.jsonl").write_text(lines[0] + '{"id": "s9"}\n', encoding="utf-8")
    with pytest.raises(BadInputError, match=r"^samples\.jsonl:2: "):
        list(read_samples(out))
    with pytest.raises(BadInputError, match="no such file"):
        list(read_documents(tmp_path / "missing"))


def test_validate_corrupted_corpus_line(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    lines = (out / "corpus.jsonl").read_bytes().split(b"\n")
    lines[1] = b'{"_id": "d2", "text": '
    (out / "corpus.jsonl").write_bytes(b"\n".join(lines))
    report = validate_benchmark(out)
    assert not report.ok
    assert report.problems[0].startswith("corpus.jsonl:2: ")
    assert any(
        p.startswith("corpus.jsonl: sha256 ") and "does not match manifest.json" in p for p in report.problems
    )
    with pytest.raises(BadInputError, match=r"^corpus\.jsonl:2: "):
        list(read_documents(out))


def test_validate_tampered_file(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    (out / "README.md").write_text("# edited\n")
    report = validate_benchmark(out)
    assert report.problems == [report.problems[0]]
    assert report.problems[0].startswith("README.md: sha256 ")
    assert report.total_problems == 1


def test_validate_qrels_unknown_corpus_id(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    with (out / "qrels/test.tsv").open("a") as f:
        f.write("s1\tnope\t1\ns1\td2\tone\n")
    report = validate_benchmark(out)
    assert "qrels/test.tsv:5: unknown corpus id 'nope'" in report.problems
    assert "qrels/test.tsv:6: score 'one' is not an integer" in report.problems
    assert "manifest.json: counts.qrels is 3 but qrels/test.tsv has 5" in report.problems


def test_validate_queries_and_missing_files(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    lines = (out / "queries.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "queries.jsonl").write_text("".join(reversed(lines)), encoding="utf-8")
    (out / "README.md").unlink()
    problems = validate_benchmark(out).problems
    assert "README.md: missing" in problems
    assert "queries.jsonl:1: _id 's2' but samples.jsonl:1 has id 's1'" in problems


def test_validate_caps_listed_problems(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    with (out / "corpus.jsonl").open("a") as f:
        f.write("not json\n" * 60)
    report = validate_benchmark(out)
    assert len(report.problems) == 50
    assert report.total_problems > 60
    assert report.counts["documents"] == 63


def test_validate_not_a_directory(tmp_path: Path) -> None:
    report = validate_benchmark(tmp_path / "nothing")
    assert not report.ok and report.problems == [f"{tmp_path / 'nothing'}: not a directory"]


def test_export_parquet(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    write(tmp_path / "bench")
    paths = export_parquet(tmp_path / "bench", tmp_path / "parquet")
    assert [p.name for p in paths] == [
        "corpus.parquet",
        "queries.parquet",
        "qrels.parquet",
        "samples.parquet",
        "hops.parquet",
        "README.md",
        "manifest.json",
    ]
    tables = {p.stem: pq.read_table(p) for p in paths if p.suffix == ".parquet"}
    assert {name: t.num_rows for name, t in tables.items()} == {
        "corpus": 3,
        "queries": 2,
        "qrels": 3,
        "samples": 2,
        "hops": 2,
    }
    assert tables["qrels"].column_names == ["query_id", "corpus_id", "score"]
    assert tables["qrels"].to_pylist()[1] == {"query_id": "s2", "corpus_id": "d3", "score": 1}
    samples = tables["samples"].to_pylist()
    assert samples[1]["answers"] == ["Zoë", "Zoe"]
    assert samples[1]["difficulty"] == 2.5
    assert [hop["predicate"] for hop in json.loads(samples[1]["chain"])] == ["wrote", "friend"]
    assert json.loads(tables["corpus"].to_pylist()[0]["metadata"]) == {"n": 1}
    assert sorted(p.name for p in (tmp_path / "parquet").iterdir()) == sorted(p.name for p in paths)


def test_export_without_pyarrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "bench")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(MissingExtraError, match=r"'export' extra.*pip install -e '\.\[export\]'"):
        export_parquet(tmp_path / "bench", tmp_path / "parquet")


def test_hf_export(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    write(tmp_path / "bench")
    dataset = to_hf_datasets(tmp_path / "bench")
    assert sorted(dataset) == ["corpus", "hops", "qrels", "queries", "samples"]
    assert dataset["corpus"].num_rows == 3
    assert dataset["samples"][1]["answers"] == ["Zoë", "Zoe"]


def test_hf_export_without_datasets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "bench")
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(MissingExtraError, match="module .datasets. is missing"):
        to_hf_datasets(tmp_path / "bench")


QRELS_EDITS = {
    "clean": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\td1\t1\ns2\td3\t1\ns2\td1\t1\n"),
    "query lines apart": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns2\td3\t1\ns1\td1\t1\ns2\td1\t1\n"),
    "duplicate pair": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\td1\t1\ns1\td1\t1\ns2\td3\t1\n"),
    "carriage returns": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\r\ns1\td1\t1\r\ns2\td3\t1\r\n"),
    "score 10": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\td1\t10\ns2\td3\t1\ns2\td1\t1\n"),
    "empty field": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\t\t1\ns2\td3\t1\ns2\td1\t1\n"),
    "four fields and two": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\td1\t1\tx\ns2\td3\n"),
    "no last line break": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns1\td1\t1\ns2\td3\t1\ns2\td1\t1"),
    "unknown query": ("qrels/test.tsv", "query-id\tcorpus-id\tscore\ns9\td1\t1\n"),
    "bad header": ("qrels/test.tsv", "qid\tcorpus-id\tscore\ns1\td1\t1\n"),
    "hop missing a document": ("qrels/hops.tsv", "query-id\tcorpus-id\tscore\ns2#h0\td1\t1\n"),
    "hop with another document": (
        "qrels/hops.tsv",
        "query-id\tcorpus-id\tscore\ns2#h0\td2\t1\ns2#h1\td3\t1\n",
    ),
    "hop lines apart": (
        "qrels/hops.tsv",
        "query-id\tcorpus-id\tscore\ns2#h0\td1\t1\ns2#h1\td3\t1\ns2#h0\td1\t1\n",
    ),
}


def edited(tmp_path: Path, edit: str) -> tuple[Path, str]:
    """A benchmark with one qrels file replaced by QRELS_EDITS[edit]: (its directory, the file's name)."""
    out = tmp_path / "bench"
    write(out)
    name, text = QRELS_EDITS[edit]
    (out / name).write_bytes(text.encode())
    if edit == "clean":  # the fast path reads it, so the comparisons below compare two paths
        assert [block[0] for block in qrels_blocks(out / name)] == [["s1", "s2", "s2"]]
    return out, name


def unusual(*args: object) -> Iterator[Any]:
    """A stand-in for a fast path that leaves every file to the line-by-line path."""
    raise UnusualQrels
    yield  # a generator, like the fast path


@pytest.mark.parametrize("edit", sorted(QRELS_EDITS))
def test_fast_qrels_check_reports_what_the_line_by_line_check_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    import irbgen.validation as validation

    out, _ = edited(tmp_path, edit)
    fast = validate_benchmark(out)
    monkeypatch.setattr(validation._Checker, "plain_qrels", unusual)
    slow = validate_benchmark(out)
    assert (fast.ok, fast.problems, fast.total_problems, fast.counts) == (
        slow.ok,
        slow.problems,
        slow.total_problems,
        slow.counts,
    )
    assert fast.ok == (edit == "clean")


@pytest.mark.parametrize("edit", sorted(QRELS_EDITS))
def test_fast_read_qrels_reads_what_the_line_by_line_reader_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    import irbgen.benchmark as benchmark

    out, name = edited(tmp_path, edit)

    def read() -> object:
        try:
            return read_qrels(out, name)
        except BadInputError as error:
            return str(error)

    fast = read()
    monkeypatch.setattr(benchmark, "qrels_blocks", unusual)
    slow = read()
    assert fast == slow
    if isinstance(fast, dict):
        assert list(fast) == list(slow) and all(list(fast[q].items()) == list(slow[q].items()) for q in fast)


def test_a_document_line_is_what_the_generic_encoder_writes() -> None:
    from irbgen.benchmark import _document_line, _json_line

    texts = ["plain", 'quote " and \\ slash', "tab\tnew\nline\x00\x1f", "é ü 中文 😀", "\u2028\u2029", ""]
    for text in texts:
        for metadata in ({}, {"url": text, "n": 1}):
            doc = Document.model_construct(id=f"d{text}", title=text, text=text, metadata=metadata)
            record = {"_id": doc.id, "title": doc.title, "text": doc.text, "metadata": doc.metadata}
            assert _document_line(doc) == _json_line(record, "x")
    lone = Document.model_construct(id="d", title="t", text="\ud800", metadata={})
    with pytest.raises(BadInputError, match="document 'd': cannot be written as JSON"):
        _document_line(lone)


def test_validate_keeps_what_the_reader_reads_of_each_sample(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    write(out)
    assert validate_benchmark(out).kept == []
    assert validate_benchmark(out, keep=lambda sample: sample).kept == list(read_samples(out))
    lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (out / "samples.jsonl").write_text('{"id": "s9"}\n' + lines[1], encoding="utf-8")
    report = validate_benchmark(out, keep=lambda sample: sample.id)
    assert not report.ok and report.kept == ["s2"]  # a line that does not parse keeps nothing


HOP_EVIDENCE_EDITS = {
    "hop evidence not in the corpus": ("d9", "s2#h0\td9\t1\n"),  # the hop qrels hold the unknown id too
    "hop evidence missing in qrels": ("d2", ""),
    "hop evidence with a line break": ("d\n9", ""),
    "hop qrels in another order": ("d2", "s2#h0\td2\t1\n"),  # evidence d1, d2; qrels d2, d1
}


@pytest.mark.parametrize("edit", sorted(QRELS_EDITS) + sorted(HOP_EVIDENCE_EDITS))
def test_hop_evidence_kept_as_one_string_reports_what_a_set_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: str
) -> None:
    import irbgen.validation as validation

    if edit in QRELS_EDITS:
        out, _ = edited(tmp_path, edit)
    else:
        out = tmp_path / "bench"
        write(out)
        extra, qrels = HOP_EVIDENCE_EDITS[edit]
        lines = (out / "samples.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
        sample = json.loads(lines[1])
        sample["chain"][0]["evidence"].append(extra)
        (out / "samples.jsonl").write_text(lines[0] + json.dumps(sample) + "\n", encoding="utf-8")
        hops = (out / "qrels/hops.tsv").read_text().splitlines(keepends=True)
        at = 1 if edit == "hop qrels in another order" else 2  # before or after s2#h0's line
        (out / "qrels/hops.tsv").write_text("".join(hops[:at]) + qrels + "".join(hops[at:]))

    def check() -> tuple[object, ...]:
        checker = validation._Checker(out)
        checker.run()
        kinds = {type(evidence).__name__ for _, evidence in (checker.hop_expected or {}).values()}
        return checker.problems, checker.total, checker.counts, kinds

    *compact, kinds = check()
    assert kinds == ({"frozenset", "_Ids"} if edit == "hop evidence with a line break" else {"_Ids"})
    monkeypatch.setattr(validation, "_id_set", frozenset)  # every hop's evidence as a set, as before
    *as_sets, kinds = check()
    assert compact == as_sets and kinds == {"frozenset"}
    assert (compact[1] == 0) == (edit == "clean")  # an edited samples.jsonl no longer matches its sha256
    differs = "differ from that hop's evidence" in " ".join(compact[0])
    if edit in ("hop qrels in another order", "hop evidence missing in qrels"):
        assert differs == (edit == "hop evidence missing in qrels")

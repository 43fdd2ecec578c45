"""`irbgen audit`: sheets drawn from phantom and Wikipedia benchmarks, scoring, the card, and bad input."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from sample_builds import wikipedia_sample_benchmark

from irbgen.audit.facts import kind_of
from irbgen.audit.passages import MAX_CHARS, IndexedDocument, best_passage
from irbgen.audit.publish import splice_section
from irbgen.audit.score import wilson
from irbgen.benchmark import consistent_read
from irbgen.cli import main
from irbgen.schema import Document, Provenance, Sample

SHEET_FILES = ("audit.json", "audit.jsonl", "audit.md")


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def items(sheet: Path) -> list[dict]:
    return [json.loads(line) for line in (sheet / "audit.jsonl").read_text(encoding="utf-8").splitlines()]


def write_items(sheet: Path, records: list[dict]) -> None:
    text = "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    (sheet / "audit.jsonl").write_text(text, encoding="utf-8")


def judge(sheet: Path, verdict) -> list[dict]:
    """Fill every judgment with verdict(line number, item) -> (well_formed, answer_correct, supported)."""
    records = items(sheet)
    for number, record in enumerate(records, start=1):
        well_formed, answer_correct, supported = verdict(number, record)
        record["judgment"].update(well_formed=well_formed, answer_correct=answer_correct, supported=supported)
    write_items(sheet, records)
    return records


@pytest.fixture(scope="module")
def phantom_bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("phantom") / "bench"
    result = run("phantom", "--n", 100, "--quiet", "--out", out)
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def wiki_bench(tmp_path_factory) -> Path:
    return wikipedia_sample_benchmark(tmp_path_factory.mktemp("irb"))


@pytest.fixture
def wiki_copy(wiki_bench, tmp_path) -> Path:
    """A copy of the Wikipedia benchmark that a test may score into."""
    return Path(shutil.copytree(wiki_bench, tmp_path / "bench"))


def test_same_seed_gives_byte_identical_sheets(phantom_bench, tmp_path):
    for name in ("a", "b"):
        result = run("audit", phantom_bench, "--sample", 15, "--seed", 4, "--out", tmp_path / name)
        assert result.exit_code == 0, result.output
    assert result.output.startswith("drew 15 of 500 samples (seed 4): ")
    for name in SHEET_FILES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert run("audit", phantom_bench, "--sample", 15, "--seed", 5, "--out", tmp_path / "c").exit_code == 0
    assert items(tmp_path / "a") != items(tmp_path / "c")


def test_phantom_sheet_shows_the_chain_with_evidence_passages(phantom_bench, tmp_path):
    assert run("audit", phantom_bench, "--sample", 40, "--out", tmp_path / "sheet").exit_code == 0
    records = items(tmp_path / "sheet")
    assert len(records) == len({record["id"] for record in records}) == 40
    for record in records:
        assert record["source"] == "phantom"
        assert record["kind"] == ("single_hop" if len(record["hops"]) == 1 else "multi_hop")
        assert record["judgment"] == {
            "well_formed": None,
            "answer_correct": None,
            "supported": None,
            "note": "",
        }
        assert [fact["origin"] for fact in record["facts"]] == ["chain"] * len(record["hops"])
        for fact, hop in zip(record["facts"], record["hops"], strict=True):
            assert fact["passage"]["doc_id"] in hop["evidence"]
            assert 0 < len(fact["passage"]["text"]) <= MAX_CHARS
            assert "#" not in fact["passage"]["text"]


def test_wikipedia_sheet_has_keypoints_kinds_and_a_header(wiki_bench, tmp_path):
    sheet = tmp_path / "sheet"
    result = run("audit", wiki_bench, "--sample", 30, "--seed", 1, "--out", sheet)
    assert result.exit_code == 0, result.output
    samples = (wiki_bench / "samples.jsonl").read_bytes()
    kinds = {json.loads(line)["attributes"]["question_type"] for line in samples.splitlines()}
    assert kinds == {"single_hop", "multi_hop", "false_premise"}
    records = items(sheet)
    assert {record["kind"] for record in records} == kinds
    for record in records:
        assert len(record["facts"]) == len(record["hops"]) >= 1
        for fact, hop in zip(record["facts"], record["hops"], strict=True):
            assert fact["origin"] == "keypoint" and fact["hop"] == hop["index"]
            assert fact["passage"]["doc_id"] in hop["evidence"] and fact["passage"]["overlap"] > 0
        if record["false_premise"]:
            assert record["answers"] == [] and record["premise_answer"]
            assert any("(false_premise, " in change for change in record["changes"])
    header = json.loads((sheet / "audit.json").read_text())
    assert header == {
        "format": "irbgen-audit/1",
        "benchmark": str(wiki_bench.resolve()),
        "name": "run",
        "source": "wikipedia",
        "seed": 1,
        "requested": 30,
        "size": min(30, samples.count(b"\n")),
        "population": samples.count(b"\n"),
        "samples_sha256": hashlib.sha256(samples).hexdigest(),
    }
    markdown = (sheet / "audit.md").read_text(encoding="utf-8")
    first = records[0]
    assert f"## 1. {first['kind']} · `{first['id']}`" in markdown
    assert f"**{first['question']}**" in markdown
    assert "   > " in markdown and f"Judge on `audit.jsonl` line {len(records)}:" in markdown


def test_a_sample_larger_than_the_benchmark_takes_all_of_it(phantom_bench, tmp_path):
    result = run("audit", phantom_bench, "--sample", 800, "--out", tmp_path / "all")
    assert result.exit_code == 0, result.output
    assert "has only 500 samples; the sheet holds all of them" in result.output
    ids = [json.loads(line)["id"] for line in (phantom_bench / "samples.jsonl").read_text().splitlines()]
    assert sorted(record["id"] for record in items(tmp_path / "all")) == sorted(ids)
    assert json.loads((tmp_path / "all" / "audit.json").read_text())["size"] == 500


@pytest.mark.parametrize(
    ("valid", "n", "low", "high"),
    [(90, 100, 0.826, 0.945), (0, 10, 0.0, 0.278), (10, 10, 0.722, 1.0), (17, 20, 0.640, 0.948)],
)
def test_wilson_interval_matches_hand_computed_values(valid, n, low, high):
    assert tuple(round(bound, 3) for bound in wilson(valid, n)) == (low, high)


def test_wilson_refuses_an_empty_count():
    with pytest.raises(ValueError):
        wilson(0, 0)


def _sample(**fields) -> Sample:
    base = {
        "id": "x",
        "question": "Q?",
        "answers": ["a"],
        "hops": 1,
        "source": "wikidata",
        "provenance": Provenance(generator="test"),
    }
    return Sample(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "kind"),
    [
        ({"attributes": {"question_type": "multi_hop"}, "hops": 1}, "multi_hop"),
        ({"attributes": {"question_type": "2_hop"}, "hops": 2}, "multi_hop"),
        ({"attributes": {"question_type": "who"}, "hops": 1}, "single_hop"),
        ({"false_premise": True, "answers": [], "hops": 2}, "false_premise"),
        ({"hops": 0}, "single_hop"),
    ],
)
def test_kind_comes_from_question_type_or_premise_and_hops(fields, kind):
    assert kind_of(_sample(**fields)) == kind


def test_best_passage_is_the_densest_short_window():
    filler = "Unrelated words fill this sentence about weather and tides. " * 20
    text = filler + "The bridge opened on 12 March 2024. It has a main span of 310 m. " + filler
    far = IndexedDocument.of(Document(_id="d2", title="Other", text="The bridge is long."))
    near = IndexedDocument.of(Document(_id="d1", title="Bridge", text=text))
    passage = best_passage("The bridge opened to traffic on 12 March 2024.", [far, near])
    assert passage is not None and passage.doc_id == "d1" and passage.overlap == 0.833
    assert "The bridge opened on 12 March 2024." in passage.text and len(passage.text) <= MAX_CHARS
    assert best_passage("", [near]) is None and best_passage("bridge", []) is None


def test_a_single_long_sentence_is_clipped_around_the_match():
    text = "word " * 400 + "the Skarra ferry leaves at noon " + "word " * 400
    passage = best_passage("Skarra ferry", [IndexedDocument.of(Document(_id="d", text=text))])
    assert passage is not None and len(passage.text) == MAX_CHARS
    assert passage.text.startswith("…") and passage.text.endswith("…") and "Skarra ferry" in passage.text


def test_scoring_writes_score_json_and_the_card_and_validate_passes(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    manifest = (wiki_copy / "manifest.json").read_text(encoding="utf-8")
    assert run("audit", wiki_copy, "--sample", 15, "--out", sheet).exit_code == 0
    records = judge(sheet, lambda number, record: (number != 3, number % 5 != 0, number != 7))
    with (sheet / "audit.jsonl").open("a", encoding="utf-8") as sheet_file:
        sheet_file.write("\n")
    result = run("audit", "--score", sheet)
    assert result.exit_code == 0, result.output
    assert result.output.startswith("audited 15 samples of run (wikipedia): 10 valid, 66.7% [41.7%, 84.8%]")
    assert "failed: well formed 1, answer correct 3, supported 1" in result.output
    assert "drawn: a random sample of 15 with seed 0\n" in result.output
    score = json.loads((sheet / "score.json").read_text())
    assert score["overall"] == {
        "judged": 15,
        "valid": 10,
        "rate": 0.6667,
        "low": 0.4171,
        "high": 0.8482,
        "failed": {"well_formed": 1, "answer_correct": 3, "supported": 1},
    }
    kinds = {record["kind"] for record in records}
    assert set(score["by_kind"]) == kinds
    assert sum(rate["judged"] for rate in score["by_kind"].values()) == 15
    card = (wiki_copy / "README.md").read_text(encoding="utf-8")
    assert card.index("## Audit\n") < card.index("## How to load it\n")
    assert "| all | 15 | 10 | 66.7% | [41.7%, 84.8%] |" in card
    assert (
        "How the samples were drawn: a random sample of 15 with seed 0. Intervals are Wilson 95% score "
        "intervals.\n" in card
    )
    kept = [json.loads(line) for line in (wiki_copy / "reviews/audits/audit-seed0-n15.jsonl").open()]
    assert [(line["sample"], line["well_formed"]) for line in kept] == [
        (record["id"], record["judgment"]["well_formed"]) for record in records
    ]
    assert kept[0]["draw"] == {
        "order": "random",
        "seed": 0,
        "size": 15,
        "population": score["header"]["population"],
    }
    checked = run("validate", wiki_copy)
    assert checked.exit_code == 0, checked.output
    before, after = json.loads(manifest), json.loads((wiki_copy / "manifest.json").read_text())
    assert after["sizes"]["README.md"] == len(card.encode())  # readers check sizes: kept true
    before["files"]["README.md"] = after["files"]["README.md"]
    before["sizes"]["README.md"] = after["sizes"]["README.md"]
    assert after == before
    with consistent_read(wiki_copy):
        pass
    assert run("audit", "--score", sheet).exit_code == 0
    assert (wiki_copy / "README.md").read_text(encoding="utf-8") == card


def test_rescoring_replaces_the_audit_section(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 5, "--out", sheet).exit_code == 0
    judge(sheet, lambda number, record: (True, True, True))
    assert run("audit", "--score", sheet).exit_code == 0
    judge(sheet, lambda number, record: (True, number != 1, True))
    assert run("audit", "--score", sheet).exit_code == 0
    card = (wiki_copy / "README.md").read_text(encoding="utf-8")
    assert card.count("## Audit\n") == 1 and "| all | 5 | 4 | 80.0% |" in card
    assert run("validate", wiki_copy).exit_code == 0


def test_splice_adds_at_the_end_without_an_anchor_and_is_idempotent():
    section = "## Audit\n\nbody\n"
    once = splice_section("# T\n\n## Licence\n\ntext\n", section)
    assert once == "# T\n\n## Licence\n\ntext\n\n## Audit\n\nbody\n"
    assert splice_section(once, section) == once


def test_a_missing_judgment_exits_2_naming_the_line_and_writes_nothing(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 6, "--out", sheet).exit_code == 0
    records = judge(sheet, lambda number, record: (True, True, None if number == 3 else True))
    card = (wiki_copy / "README.md").read_bytes()
    result = run("audit", "--score", sheet)
    assert result.exit_code == 2
    assert f"{sheet / 'audit.jsonl'}:3: sample {records[2]['id']!r}: not judged: supported" in result.stderr
    assert "1 of 6 items are not fully judged" in result.stderr
    assert not (sheet / "score.json").exists() and (wiki_copy / "README.md").read_bytes() == card


def test_an_untouched_sheet_lists_every_line(phantom_bench, tmp_path):
    assert run("audit", phantom_bench, "--sample", 4, "--out", tmp_path / "sheet").exit_code == 0
    result = run("audit", "--score", tmp_path / "sheet")
    assert result.exit_code == 2
    for line in range(1, 5):
        assert f"audit.jsonl:{line}: sample " in result.stderr
    assert "4 of 4 items are not fully judged" in result.stderr


def test_a_non_boolean_judgment_exits_2_naming_the_sample(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 4, "--out", sheet).exit_code == 0
    records = judge(sheet, lambda number, record: ("yes" if number == 2 else True, True, True))
    result = run("audit", "--score", sheet)
    assert result.exit_code == 2
    assert (
        f"audit.jsonl:2: sample {records[1]['id']!r}: judgment.well_formed: Input should be a valid boolean "
        '(got "yes")'
    ) in result.stderr
    assert "1 line(s) cannot be used" in result.stderr and "Traceback" not in result.output


def test_a_card_that_does_not_match_its_manifest_is_left_alone(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 3, "--out", sheet).exit_code == 0
    judge(sheet, lambda number, record: (True, True, True))
    (wiki_copy / "README.md").write_text("edited by hand\n", encoding="utf-8")
    result = run("audit", "--score", sheet)
    assert result.exit_code == 2 and "README.md: its sha256 does not match manifest.json" in result.stderr
    assert (wiki_copy / "README.md").read_text() == "edited by hand\n" and not (sheet / "score.json").exists()
    assert not (wiki_copy / "reviews").exists()  # nor are its judgments kept


def test_a_changed_benchmark_is_refused(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 3, "--out", sheet).exit_code == 0
    judge(sheet, lambda number, record: (True, True, True))
    samples = wiki_copy / "samples.jsonl"
    samples.write_bytes(samples.read_bytes() + b"\n")
    result = run("audit", "--score", sheet)
    assert result.exit_code == 2 and "changed since the sheet was made" in result.stderr


def test_the_benchmark_argument_overrides_the_recorded_path(wiki_copy, tmp_path):
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 3, "--out", sheet).exit_code == 0
    judge(sheet, lambda number, record: (True, True, True))
    moved = Path(shutil.move(wiki_copy, tmp_path / "moved"))
    assert run("audit", "--score", sheet).exit_code == 2
    result = run("audit", moved, "--score", sheet)
    assert result.exit_code == 0, result.output
    assert run("validate", moved).exit_code == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "{tmp}/nowhere", "--out", "{tmp}/sheet"], "nowhere: not a directory"),
        (["audit", "{tmp}", "--out", "{tmp}/sheet"], "not a benchmark directory (no samples.jsonl)"),
        (["audit", "--score", "{tmp}"], "audit.json: no such file"),
        (["audit", "--score", "{tmp}", "--out", "{tmp}/x"], "--score takes no --out"),
        (["audit"], "give BENCHMARK and --out"),
        (["audit", "{tmp}", "--sample", "0", "--out", "{tmp}/x"], "--sample"),
    ],
)
def test_bad_input_exits_2_with_a_message(tmp_path, args, message):
    result = run(*(arg.format(tmp=tmp_path) for arg in args))
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_an_existing_out_needs_force(phantom_bench, tmp_path):
    assert run("audit", phantom_bench, "--sample", 2, "--out", tmp_path / "s").exit_code == 0
    result = run("audit", phantom_bench, "--sample", 2, "--out", tmp_path / "s")
    assert result.exit_code == 2 and "pass --force" in result.output
    assert run("audit", phantom_bench, "--sample", 3, "--out", tmp_path / "s", "--force").exit_code == 0
    assert len(items(tmp_path / "s")) == 3

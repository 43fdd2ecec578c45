"""Issue 12 on real Wikidata: identifiers, units, points in time, ranks, texts and property labels.

Five real items are copied in tests/data/wikidata-real/ (see SOURCE.md); the builds of the whole
real file (../shared/realdata/, skipped when absent) and of the bundled sample dumps are scanned for
raw ids (questions, answers and passages) and for short or emoji answer aliases.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from wikidata_openrefine import REALDATA as REALDATA_DIR
from wikidata_openrefine import ask, one

from irbgen.cli import main
from irbgen.records import Reject
from irbgen.wikidata.answerable import select, why_unusable
from irbgen.wikidata.dumps import read_wikidata_dump
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.questions import is_answer_alias, is_pictograph
from irbgen.wikidata.records import ChainQuestion, WikidataEntity

REPO = Path(__file__).resolve().parents[1]
FIVE = REPO / "tests" / "data" / "wikidata-real" / "five-entities.json"
REALDATA = REALDATA_DIR / "wikidata-100-entities.json.bz2"  # IRBGEN_REALDATA names the folder
SAMPLES = REPO / "data" / "samples" / "wikidata"
OLD = SAMPLES / "wikidata-old.json.gz"
RAW_ID = re.compile(r"\b[PQ]\d+\b")
needs_realdata = pytest.mark.skipif(not REALDATA.exists(), reason=f"real data not found at {REALDATA}")


def read_kb(path: Path, properties: list[WikidataEntity] = (), keep_all: bool = False) -> KnowledgeBase:
    records = read_wikidata_dump(path, keep_all_statements=keep_all)
    return KnowledgeBase([r for r in records if isinstance(r, WikidataEntity)], properties=properties)


@pytest.fixture(scope="module")
def five() -> KnowledgeBase:
    return read_kb(FIVE)


@pytest.fixture(scope="module")
def real() -> KnowledgeBase:
    if not REALDATA.exists():
        pytest.skip(f"real data not found at {REALDATA}")
    return read_kb(REALDATA)


def run_build(*args) -> dict:
    result = CliRunner().invoke(main, ["build", "--source", "wikidata-dump", "--offline", *map(str, args)])
    assert result.exit_code == 0, result.output
    return json.loads((Path(str(args[args.index("--out") + 1])) / "manifest.json").read_text())


def samples(out: Path) -> list[dict]:
    text = (out / "benchmark" / "samples.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


# --- which statements make questions ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "prop"),
    [("Q3874", "P227"), ("Q3874", "P982"), ("Q3874", "P646"), ("Q2756", "P2013"), ("Q2756", "P646")],
)
def test_identifiers_are_excluded_by_the_statements_own_datatype(five, head, prop):
    assert prop not in five.entities  # no property entity: only mainsnak.datatype says "external-id"
    assert five.tails(head, prop) == []  # the reader dropped it
    everything = read_kb(FIVE, keep_all=True)
    statement = everything.tails(head, prop)[0]
    assert statement.datatype == "external-id"
    assert why_unusable(everything, statement) == "excluded_datatype"  # and the later check still holds


def test_elevation_keeps_its_unit(five):
    out = ask(five, one(five, "Q3742", "P2044"))
    assert isinstance(out, ChainQuestion), out
    assert out.question == "What is the elevation above sea level of Casablanca?"
    assert out.sub_answers == ["293 metres"]


def test_population_is_asked_at_its_point_in_time_and_only_the_preferred_one(five):
    (statement,) = five.tails("Q1504", "P1082")  # the normal-rank 2013 value is not truthy
    out = ask(five, statement)
    assert isinstance(out, ChainQuestion), out
    assert out.question == "In 2015, what was the population of Cublize?"
    assert out.sub_answers == ["1257"]


def test_deprecated_statements_never_arrive(five):
    lines = FIVE.read_text(encoding="utf-8").splitlines()
    (raw,) = [json.loads(line.rstrip(",")) for line in lines if '"id": "Q3874"' in line[:40]]
    deprecated = [c for c in raw["claims"]["P1036"] if c["rank"] == "deprecated"]
    assert deprecated
    kept = {s.tail.text for s in five.tails("Q3874", "P1036")}
    assert not kept & {c["mainsnak"]["datavalue"]["value"] for c in deprecated}


def test_strings_only_for_the_allow_list(five):
    postal_code = five.tails("Q3874", "P281")[0]
    assert why_unusable(five, postal_code) == "text_not_allowed"
    names = five.tails("Q3874", "P1448")
    assert names and all(why_unusable(five, s) is None for s in names)


def test_a_property_without_an_entity_is_named_by_irbgens_table_and_a_properties_file_wins(five):
    short_name = five.tails("Q3874", "P1813")[0]  # no property entity in the file: irbgen's table names it
    assert five.property_label("P1813") == "short name"
    out = ask(five, short_name)
    assert not (isinstance(out, Reject) and out.reason == "no_property_label"), out
    label = WikidataEntity(id="P1813", kind="property", label="abbreviated name", datatype="monolingualtext")
    assert read_kb(FIVE, properties=[label]).property_label("P1813") == "abbreviated name"


@needs_realdata
def test_quoted_two_hop_failures_are_gone(real):
    germany_trunk_prefix = real.tails("Q183", "P3238")[0]
    assert why_unusable(real, germany_trunk_prefix) == "text_not_allowed"
    assert real.tails("Q183", "P3106") == []  # an identifier: dropped in the reader
    out = ask(real, one(real, "Q2809", "P17"), one(real, "Q183", "P2046"))
    assert isinstance(out, ChainQuestion), out
    assert out.question == "What is the area of the country where Everswinkel is located?"
    assert out.sub_questions == ["In which country is Everswinkel located?", "What is the area of Germany?"]
    assert out.sub_answers[0] == "Germany" and out.sub_answers[1].endswith(" square kilometres")


@needs_realdata
def test_a_series_without_a_preferred_value_is_asked_at_its_latest_point_in_time(real):
    rates = real.tails("Q31", "P1279")  # Belgium's inflation rate, one normal-rank value a year
    assert len({s.tail.key for s in rates}) > 1
    selection = select(real, "Q31", "P1279")
    assert selection is not None and selection.how == "latest point in time"
    years = [int(s.qualifiers["P585"][0][-4:]) for s in rates]
    assert int(selection.when[-4:]) == max(years)
    out = ask(real, selection.statement)
    assert isinstance(out, ChainQuestion) and out.question.startswith(f"In {selection.when}, what was")


@needs_realdata
def test_many_current_values_are_rejected(real):
    borders = real.tails("Q183", "P47")
    assert len(borders) > 1 and select(real, "Q183", "P47") is None
    out = ask(real, borders[0])
    assert isinstance(out, Reject) and out.reason == "many_values"


# --- builds ---------------------------------------------------------------------------------------------


def texts(sample: dict) -> list[str]:
    return [sample["question"], *sample["answers"]] + [
        text for hop in sample["chain"] for text in [hop["question"], *hop["answers"]]
    ]


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("wd12")
    runs = {
        "samples": ["--dump", SAMPLES / "wikidata-new.json.bz2", "--old-dump", OLD],
        "five": ["--dump", FIVE],
    }
    if REALDATA.exists():
        runs["realdata"] = ["--dump", REALDATA]
    for name, args in runs.items():
        run_build(*args, "--out", root / name)
    return {name: root / name for name in runs}


def test_no_raw_id_in_any_question_sub_question_or_answer(builds):
    scanned = 0
    for name, out in builds.items():
        for sample in samples(out):
            for text in texts(sample):
                assert not RAW_ID.search(text), (name, sample["id"], text)
            scanned += 1
    assert scanned > 100


def test_no_raw_id_in_any_passage(builds):
    scanned = 0
    for name, out in builds.items():
        for line in (out / "benchmark" / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            document = json.loads(line)
            found = RAW_ID.findall(document["text"])
            assert not found, (name, document["_id"], found)
            scanned += 1
    assert scanned > 100


def hop_answers(sample: dict) -> list[tuple[list[str], bool]]:
    """(answers, whether they name an entity) of the sample and of each hop: every hop but the last
    ends in an item, and the last as the sample's answer type says."""
    entity = sample["attributes"]["extra"]["answer_type"] == "entity"
    last = len(sample["chain"]) - 1
    return [(sample["answers"], entity)] + [
        (hop["answers"], entity or index < last) for index, hop in enumerate(sample["chain"])
    ]


def test_answers_hold_no_short_or_emoji_alias(builds):
    checked = 0
    for name, out in builds.items():
        for sample in samples(out):
            for answers, entity in hop_answers(sample):
                assert not any(is_pictograph(char) for answer in answers for char in answer), (name, answers)
                if entity:  # the label stays whatever its length; aliases need three letters or digits
                    assert all(is_answer_alias(alias) for alias in answers[1:]), (name, sample["id"], answers)
                    checked += 1
    assert checked > 100


@needs_realdata
def test_the_real_file_has_the_aliases_that_are_dropped(real, builds):
    germany = real.entities["Q183"]
    assert {"de", "\U0001f1e9\U0001f1ea"} <= set(germany.aliases)
    answers = [
        hop["answers"]
        for s in samples(builds["realdata"])
        for hop in s["chain"]
        if hop["answers"][0] == "Germany"
    ]
    assert answers and all(a[0] == "Germany" and "de" not in a for a in answers)


@needs_realdata
def test_the_real_file_gives_one_and_two_hop_questions_on_allowed_statements(builds, real):
    found = samples(builds["realdata"])
    assert len(found) >= 40
    assert {1, 2} <= {sample["hops"] for sample in found}
    for sample in found:
        for head, prop, _ in sample["provenance"]["triple_chain"]:
            statement = select(real, head, prop)
            assert statement is not None and why_unusable(real, statement.statement) is None
    two_hop = [s["question"] for s in found if s["hops"] == 2]
    assert any("the country where" in question for question in two_hop)
    notes = [note for s in found for note in s["attributes"]["extra"]["hop_selection"]]
    assert len(notes) == sum(s["hops"] for s in found) and "not selected" not in notes
    assert any(note.startswith("latest point in time (") for note in notes)  # says which value it took


def test_a_filtered_build_keeps_property_labels(tmp_path):
    new = SAMPLES / "wikidata-new.json.bz2"
    listed = tmp_path / "items.txt"
    listed.write_text("Q9000054\nQ9000072\nQ9000085\nQ9000212\n", encoding="utf-8")
    for name, extra in [("sitelinks", ["--min-sitelinks", "20"]), ("listed", ["--entities", listed])]:
        manifest = run_build("--dump", new, *extra, "--out", tmp_path / name)
        rejects = (tmp_path / name / "rejects.jsonl").read_text(encoding="utf-8")
        assert not re.search(r'"key": "P\d+"', rejects)  # no property entity was filtered out
        for sample in samples(tmp_path / name):
            assert all(not RAW_ID.search(hop["predicate"]) for hop in sample["chain"])
        assert manifest["counts"]["samples"] > 0


def test_a_properties_file_gives_labels_to_a_build(tmp_path):
    props = tmp_path / "props.json"
    entity = {
        "type": "property", "id": "P1813", "datatype": "monolingualtext",
        "labels": {"en": {"language": "en", "value": "short name"}},
    }  # fmt: skip
    props.write_text("[\n" + json.dumps(entity) + "\n]\n", encoding="utf-8")
    manifest = run_build("--dump", FIVE, "--properties", props, "--out", tmp_path / "run")
    assert manifest["config"]["properties"] == "props.json"
    assert manifest["stages"]["read_properties"]["outputs"] == 1
    corpus = (tmp_path / "run" / "benchmark" / "corpus.jsonl").read_text(encoding="utf-8")
    assert "The short name of Gießen is" in corpus and "The P1813 of" not in corpus

"""Issue 27 point 1: property labels and datatypes from a table where the dump has no property entities.

irbgen ships the 2017 table of ../shared/realdata/ (irbgen/resources/wikidata/properties.tsv); a table
given with --properties FILE.tsv comes before it, a property entity of the dump before both. The real
entities quoted are of the tuning half of the 1,026-entity file (even Q-numbers, `split_half`).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from wikidata_openrefine import REALDATA, ask, one, openrefine_kb

from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.records import Reject
from irbgen.wikidata.entity_ids import split_half
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.property_table import read_property_table, shipped_table, table_rows
from irbgen.wikidata.records import ChainQuestion, WikidataEntity

REPO = Path(__file__).resolve().parents[1]
FIVE = REPO / "tests" / "data" / "wikidata-real" / "five-entities.json"
TABLE = REALDATA / "wikidata-properties-2017.tsv"


def run(*args: object):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def openrefine():
    return openrefine_kb()


def one_line(result) -> str:
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("irbgen: error: ")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    return errors[0]


def test_the_split_is_by_q_number():
    assert split_half("Q351154") == "tuning" and split_half("Q30") == "tuning"
    assert split_half("Q36887895") == "test"
    assert split_half("P735") is None and split_half("L1") is None


def test_irbgen_ships_the_2017_table():
    rows = {row["id"]: row for row in shipped_table()}
    assert len(rows) == 4068
    assert rows["P395"] == {
        "id": "P395",
        "kind": "property",
        "label": "licence plate code",
        "datatype": "string",
    }
    if TABLE.exists():  # the shipped copy is the real-data table, line for line
        shipped = (REPO / "irbgen" / "resources" / "wikidata" / "properties.tsv").read_text().splitlines()
        assert [line for line in shipped if not line.startswith("#")] == TABLE.read_text().splitlines()


def test_a_property_the_dump_lacks_is_labelled_from_the_table(openrefine):
    # France (Q142, tuning half): its licence plate code (P395) was rejected "no_property_label" before
    assert split_half("Q142") == "tuning" and "P395" not in openrefine
    out = ask(openrefine, one(openrefine, "Q142", "P395"))
    assert isinstance(out, ChainQuestion), out
    assert out.question == "What is the licence plate code of France?" and out.sub_answers == ["F"]


def test_a_property_newer_than_the_table_is_still_rejected(openrefine):
    # Q2076916 (tuning half) -> United States -> President -> base salary (P3618, created after 2017)
    assert split_half("Q2076916") == "tuning"
    hops = [
        one(openrefine, "Q2076916", "P17"),
        one(openrefine, "Q30", "P1313"),
        one(openrefine, "Q11696", "P3618"),
    ]
    out = ask(openrefine, *hops)
    assert isinstance(out, Reject) and out.reason == "no_property_label", out


def test_a_dump_entity_beats_a_given_table_which_beats_irbgens(tmp_path):
    table = tmp_path / "mine.tsv"
    table.write_text("id\tlabel\tdatatype\nP17\tstate\twikibase-item\nP36\tseat\twikibase-item\n")
    capital = WikidataEntity(id="P36", kind="property", label="capital city", datatype="wikibase-item")
    item = WikidataEntity.model_validate(
        {
            "id": "Q1",
            "kind": "item",
            "label": "One",
            "statements": [
                {
                    "head": "Q1",
                    "property": p,
                    "tail": {"type": "entity", "id": "Q2", "text": "Q2"},
                    "rank": "normal",
                }
                for p in ("P17", "P36", "P1376")
            ],
        }
    )
    kb = KnowledgeBase([item, capital], table=table_rows(table))
    assert kb.property_label("P36") == "capital city"  # the dump's property entity
    assert kb.property_label("P17") == "state"  # the given table
    assert kb.property_label("P1376") == "capital of"  # irbgen's table
    assert kb.entity_datatype("P1376") == "wikibase-item"
    assert "P31" not in kb  # only the properties the base names are added


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("P17\tcountry\n", "expected 'id<TAB>label<TAB>datatype', got 2 field(s)"),
        ("P17\tcountry\twikibase-item\nQ5\thuman\twikibase-item\n", "'Q5' is not a property id"),
        ("P17\t\twikibase-item\n", "P17 has an empty label"),
        ("P17\tcountry\titem\n", "P17: unknown datatype 'item'"),
        ("P17\tcountry\twikibase-item\nP17\tland\twikibase-item\n", "P17 is listed twice"),
    ],
)
def test_a_malformed_table_line_is_named(tmp_path, text, problem):
    table = tmp_path / "t.tsv"
    table.write_text(text)
    line = text.count("\n") if "twice" in problem or "Q5" in problem else 1
    with pytest.raises(BadInputError, match="^" + re.escape(f"{table}:{line}: {problem}")):
        read_property_table(table)


def test_the_build_refuses_a_missing_or_malformed_table_in_one_line(tmp_path):
    build = ["build", "--source", "wikidata-dump", "--offline", "--dump", FIVE, "--quiet"]
    missing = tmp_path / "none.tsv"
    error = one_line(run(*build, "--properties", missing, "--out", tmp_path / "a"))
    assert str(missing) in error and "not found" in error
    bad = tmp_path / "bad.tsv"
    bad.write_text("# my labels\nid\tlabel\tdatatype\nP17\tcountry\n")
    error = one_line(run(*build, "--properties", bad, "--out", tmp_path / "b"))
    assert error == f"irbgen: error: {bad}:3: expected 'id<TAB>label<TAB>datatype', got 2 field(s)"
    config = tmp_path / "build.toml"
    config.write_text(f'[wikidata-dump]\nproperties = "{bad}"\n')
    error = one_line(run(*build, "--config", config, "--out", tmp_path / "c"))
    assert error == f"irbgen: error: {bad}:3: expected 'id<TAB>label<TAB>datatype', got 2 field(s)"


def test_a_given_table_names_the_samples_predicates(tmp_path):
    table = tmp_path / "mine.tsv"
    table.write_text("P1082\tnumber of residents\tquantity\n")
    out = tmp_path / "run"
    result = run("build", "--source", "wikidata-dump", "--offline", "--quiet", "--dump", FIVE,
                 "--properties", table, "--out", out)  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (out / "benchmark" / "samples.jsonl").read_text()
    assert '"predicate":"number of residents"' in text and '"predicate":"population"' not in text

"""Issue 27 point 3: a value that changes over time is asked at a date its qualifiers make true, or not
asked, at every hop; each sample records its as-of dates.

Real entities of the tuning half of ../shared/realdata/wikidata-openrefine-1026.json.bz2 (even
Q-numbers; the tests skip when the file is absent).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from wikidata_openrefine import OPENREFINE, REALDATA, ask, one, openrefine_kb

from irbgen.cli import main
from irbgen.records import Reject
from irbgen.wikidata.answerable import select
from irbgen.wikidata.dating import AsOf, as_of, changes
from irbgen.wikidata.dumps import read_wikidata_dump
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import ChainQuestion, WikidataEntity
from irbgen.wikidata.rules.grammar import NotWritable, Phrase, bridge
from irbgen.wikidata.rules.questions import dated_template

HUNDRED = REALDATA / "wikidata-100-entities.json.bz2"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return openrefine_kb()


def test_an_office_with_a_start_time_is_asked_since_then(kb):
    # United States of America (Q30): head of government, preferred, start time 20 January 2017
    out = ask(kb, one(kb, "Q30", "P6"))
    assert isinstance(out, ChainQuestion), out
    assert out.question.startswith(
        "Since 20 January 2017, who has been the head of government of United States"
    )


def test_a_term_with_start_and_end_is_asked_in_its_latest_whole_year(kb):
    # Oxford, Ohio (Q990940): head of government from 2003 to 2007; University of Warsaw (Q144488): rector
    # from 1 September 2012 to 31 August 2020
    out = ask(kb, one(kb, "Q990940", "P6"))
    assert isinstance(out, ChainQuestion), out
    assert out.question.startswith("In 2006, who was the head of government of Oxford (")
    assert select(kb, "Q144488", "P1075").when == "2019"


def test_a_term_holding_no_whole_year_is_not_asked(kb):
    # Soviet Union (Q15180): head of government from 6 September 1991 to 26 December 1991
    out = ask(kb, one(kb, "Q15180", "P6"))
    assert isinstance(out, Reject) and out.reason == "undated_change", out


def test_a_changing_property_with_no_date_is_not_asked_at_any_hop(kb):
    # France (Q142): VAT rate 20, no qualifier; asked alone and as the second hop from Cluny (Q192982)
    alone = ask(kb, one(kb, "Q142", "P2855"))
    assert isinstance(alone, Reject) and alone.reason == "undated_change", alone
    chained = ask(kb, one(kb, "Q192982", "P17"), one(kb, "Q142", "P2855"))
    assert isinstance(chained, Reject) and chained.reason == "undated_change", chained
    assert chained.detail.startswith("hop 1: (France, VAT-rate)")


def test_several_points_in_time_give_the_latest(kb):
    # United States of America: life expectancy 78.69024 with points in time 2015 and 2016
    out = ask(kb, one(kb, "Q30", "P2250"))
    assert isinstance(out, ChainQuestion), out
    assert out.question.startswith("In 2016, what was the life expectancy in United States of America")


def test_a_lasting_value_with_a_start_time_stays_undated(kb):
    # Warsaw (Q270) is in Poland from 8 May 1945: a start time alone on country is no change
    statement = one(kb, "Q270", "P17")
    assert statement.qualifiers["P580"] == ["8 May 1945"]
    assert not changes(statement) and as_of(statement) is None


def test_an_inner_date_goes_where_it_dates_the_right_noun(kb):
    # Ger Lataster (Q884048): work location France, point in time 1950 (the current one of two)
    selection = select(kb, "Q884048", "P937")
    assert selection is not None and selection.when == "1950"
    assert bridge(kb, selection, Phrase("Ger Lataster")).text == "the work location of Ger Lataster in 1950"
    nested = bridge(kb, selection, Phrase("the creator of Stilleven", is_name=False))
    assert nested.text == "the work location in 1950 of the creator of Stilleven"
    # a phrase ending in a clause cannot take the date after it ("... where X is located in 1829")
    boat_race = select(kb, "Q887604", "P131")  # The Boat Race: in Oxfordshire, point in time 10 June 1829
    with pytest.raises(NotWritable, match="no place for the date"):
        bridge(kb, boat_race, Phrase("the successor of The Boat Race", is_name=False))


def test_dated_templates_change_tense():
    assert dated_template("Who is the head of government of {x}?") == "Who was the head of government of {x}?"
    assert dated_template("Who is the head of government of {x}?", since=True) == (
        "Who has been the head of government of {x}?"
    )
    assert dated_template("Which organisation is {x} a member of?", since=True) == (
        "Which organisation has {x} been a member of?"
    )
    assert dated_template("Which award did {x} receive?") == "Which award did {x} receive?"
    assert dated_template("Which award did {x} receive?", since=True) is None
    assert AsOf("20 January 2017", since=True).iso == "2017-01-20"
    assert AsOf("December 2013").iso == "2013-12"


# --- builds: no changing value asked undated, and each sample records its dates -----------------------


def _build(dump: Path, out: Path) -> list[dict]:
    result = CliRunner().invoke(main, ["build", "--source", "wikidata-dump", "--offline", "--dump", str(dump),
                                       "--quiet", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    text = (out / "benchmark" / "samples.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]


@pytest.mark.parametrize("name", [OPENREFINE.name, HUNDRED.name])
def test_no_realdata_sample_asks_a_changing_value_undated(name, tmp_path):
    dump = REALDATA / name
    if not dump.exists():
        pytest.skip(f"real data not found at {dump}")
    base = KnowledgeBase([r for r in read_wikidata_dump(dump) if isinstance(r, WikidataEntity)])
    samples = _build(dump, tmp_path / "run")
    dated = 0
    for sample in samples:
        extra = sample["attributes"]["extra"]
        assert len(extra["as_of"]) == sample["hops"]
        for index, (head, prop, tail) in enumerate(sample["provenance"]["triple_chain"]):
            statement = next(s for s in base.tails(head, prop) if (s.tail.id or s.tail.text) == tail)
            date = extra["as_of"][index]
            assert not changes(statement) or date, (sample["id"], index, sample["question"])
            if date:
                dated += 1
                assert date[:4] in sample["question"], (sample["id"], sample["question"])
    assert dated >= 5

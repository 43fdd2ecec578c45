"""Popularity kinds (sitelinks, Wikipedia frequency, counts file), thresholds and newness labels."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from irbgen.errors import BadInputError
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import (
    DEFAULT_THRESHOLDS,
    POPULARITY_KINDS,
    CountsFilePopularity,
    Newness,
    is_popular,
    label_hop,
    make_popularity,
    read_counts_file,
)
from irbgen.wikidata.records import Statement, Value, WikidataEntity


def edge(head: str, prop: str, tail: str) -> Statement:
    return Statement(head=head, property=prop, tail=Value(type="entity", id=tail, text=tail), rank="normal")


def date(head: str, prop: str, raw: str) -> Statement:
    value = Value(type="time", text=raw[1:11], raw=raw, precision=11)
    return Statement(head=head, property=prop, tail=value, rank="normal")


def make_kb(statements: list[Statement], sitelinks: dict[str, int] | None = None) -> KnowledgeBase:
    """Items for every head and entity tail, with the given sitelink counts (default 0)."""
    sitelinks = sitelinks or {}
    ids = {s.head for s in statements} | {s.tail.id for s in statements if s.tail.id} | set(sitelinks)
    entities = [
        WikidataEntity(
            id=qid,
            kind="item",
            label=f"label {qid}",
            sitelinks=sitelinks.get(qid, 0),
            statements=[s for s in statements if s.head == qid],
        )
        for qid in sorted(ids)
    ]
    return KnowledgeBase(entities)


BORN = date("Q1", "P569", "+1952-03-11T00:00:00Z")
DIRECTOR = edge("Q1", "P57", "Q2")
KB = make_kb([BORN, DIRECTOR, edge("Q2", "P19", "Q3")], {"Q1": 40, "Q2": 7, "Q3": 100})


# --- sitelinks ------------------------------------------------------------------------------------------


def test_sitelinks_scores_the_head_for_a_literal_and_the_smaller_end_for_an_entity_tail():
    popularity = make_popularity("sitelinks", KB)
    assert popularity.kind == "sitelinks"
    assert popularity.score(BORN) == 40
    assert popularity.score(DIRECTOR) == 7
    assert popularity.score(edge("Q3", "P17", "Q1")) == 40


def test_sitelinks_counts_an_entity_missing_from_the_base_as_zero():
    popularity = make_popularity("sitelinks", KB)
    assert popularity.score(edge("Q3", "P17", "Q404")) == 0
    assert popularity.score(date("Q404", "P569", "+2001-01-01T00:00:00Z")) == 0


def test_thresholds_split_at_or_above_and_default_per_kind():
    assert is_popular(10, 10) and is_popular(10.5, 10)
    assert not is_popular(9.99, 10)
    assert make_popularity("sitelinks", KB).threshold == DEFAULT_THRESHOLDS["sitelinks"] == 10
    frequency = make_popularity("wikipedia-frequency", KB, frequencies={})
    assert frequency.threshold == DEFAULT_THRESHOLDS["wikipedia-frequency"] == 2


def test_label_hop_applies_the_threshold_given_not_the_default():
    popularity = make_popularity("sitelinks", KB)
    assert label_hop(DIRECTOR, popularity, 10, None).popular is False
    hop = label_hop(DIRECTOR, popularity, 7, None)
    assert (hop.popularity, hop.popular, hop.new) == (7.0, True, None)
    assert hop.statement == DIRECTOR


# --- Wikipedia frequency --------------------------------------------------------------------------------


def test_frequency_reads_statement_keys_and_triples_and_missing_counts_zero():
    frequencies = Counter({"Q1|P57|Q2": 3, ("Q1", "P569", "time:+1952-03-11T00:00:00Z"): 1})
    popularity = make_popularity("wikipedia-frequency", KB, frequencies=frequencies)
    assert popularity.score(DIRECTOR) == 3
    assert popularity.score(BORN) == 1
    assert popularity.score(edge("Q2", "P19", "Q3")) == 0
    assert label_hop(DIRECTOR, popularity, popularity.threshold, None).popular
    assert not label_hop(BORN, popularity, popularity.threshold, None).popular


def test_frequency_adds_up_the_two_spellings_of_one_triple():
    popularity = make_popularity(
        "wikipedia-frequency", KB, frequencies={"Q1|P57|Q2": 2, ("Q1", "P57", "Q2"): 1}
    )
    assert popularity.score(DIRECTOR) == 3


def test_frequency_needs_frequencies_and_rejects_bad_keys():
    with pytest.raises(BadInputError, match="needs triple frequencies"):
        make_popularity("wikipedia-frequency", KB)
    with pytest.raises(BadInputError, match="head\\|property\\|tail"):
        make_popularity("wikipedia-frequency", KB, frequencies={("Q1", "P57"): 1})


def test_unknown_kind_lists_the_known_ones_sorted():
    with pytest.raises(BadInputError) as error:
        make_popularity("pageviews", KB)
    assert "counts-file, sitelinks, wikipedia-frequency" in str(error.value)
    assert sorted(POPULARITY_KINDS) == ["counts-file", "sitelinks", "wikipedia-frequency"]


# --- counts file ----------------------------------------------------------------------------------------


def test_counts_file_tsv_triples_first_then_entity_pairs(tmp_path):
    path = tmp_path / "counts.tsv"
    lines = ["# my counts", "Q1\tP57\tQ2\t5", "Q1\tP569\t+1952-03-11T00:00:00Z\t2.5", "", "Q2\t30"]
    path.write_text("\n".join([*lines, "Q3\t4", "Q3\t4"]) + "\n", encoding="utf-8")
    popularity = make_popularity("counts-file", KB, counts_file=path)
    assert popularity.kind == "counts-file" and popularity.threshold == DEFAULT_THRESHOLDS["counts-file"]
    assert popularity.score(DIRECTOR) == 5
    assert popularity.score(BORN) == 2.5
    assert popularity.score(edge("Q2", "P19", "Q3")) == 8  # repeated lines add up; min(30, 8)
    assert popularity.score(edge("Q3", "P17", "Q2")) == 8
    assert popularity.score(edge("Q1", "P17", "Q3")) == 0  # Q1 has no entity count


def test_counts_file_matches_a_literal_by_its_value_key_too(tmp_path):
    path = tmp_path / "counts.tsv"
    path.write_text("Q1\tP569\ttime:+1952-03-11T00:00:00Z\t7\n", encoding="utf-8")
    assert CountsFilePopularity(path).score(BORN) == 7


def test_counts_file_jsonl(tmp_path):
    path = tmp_path / "counts.jsonl"
    lines = [{"head": "Q1", "property": "P57", "tail": "Q2", "count": 11}, {"entity": "Q3", "count": 6}]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    triples, entities = read_counts_file(path)
    assert triples == {("Q1", "P57", "Q2"): 11.0}
    assert entities == {"Q3": 6.0}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.tsv", "Q1\t3\nQ1\tP57\t3\n", r"c\.tsv:2: expected 'entity<TAB>count'"),
        ("c.tsv", "Q1\tmany\n", r"c\.tsv:1: count 'many' is not a number"),
        ("c.tsv", "# x\nQ1\t-1\n", r"c\.tsv:2: count '-1' must be a finite number >= 0"),
        ("c.tsv", "Q1\tnan\n", r"c\.tsv:1: count 'nan' must be a finite"),
        ("c.tsv", "\tP57\tQ2\t1\n", r"c\.tsv:1: expected"),
        ("c.tsv", "Q1\t1\t2\t3\t4\n", r"c\.tsv:1: expected .* got 5 field"),
        ("c.jsonl", '{"entity": "Q1", "count": 1}\n{"entity": "Q2"\n', r"c\.jsonl:2: not JSON"),
        ("c.jsonl", '["Q1", 1]\n', r"c\.jsonl:1: expected a JSON object"),
        ("c.jsonl", '{"entity": "Q1", "count": 1, "x": 2}\n', r"c\.jsonl:1: expected keys"),
    ],
)
def test_counts_file_bad_lines_name_the_file_and_line(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BadInputError, match=message):
        make_popularity("counts-file", KB, counts_file=path)


def test_counts_file_missing_or_not_given(tmp_path):
    with pytest.raises(BadInputError, match="nope.tsv: counts file not found"):
        make_popularity("counts-file", KB, counts_file=tmp_path / "nope.tsv")
    with pytest.raises(BadInputError, match="needs --counts-file"):
        make_popularity("counts-file", KB)


# --- newness --------------------------------------------------------------------------------------------

OLD = make_kb([DIRECTOR, date("Q1", "P569", "+1950-01-01T00:00:00Z"), edge("Q2", "P19", "Q3")])


def test_without_an_old_dump_newness_is_unknown():
    newness = Newness(None)
    assert newness.is_new(DIRECTOR) is None
    assert newness.reason(DIRECTOR) is None
    assert label_hop(DIRECTOR, make_popularity("sitelinks", KB), 10, newness).new is None


def test_a_triple_in_both_dumps_is_old():
    newness = Newness(OLD)
    assert newness.is_new(DIRECTOR) is False
    assert newness.reason(DIRECTOR) is None
    assert label_hop(DIRECTOR, make_popularity("sitelinks", KB), 10, newness).new is False


@pytest.mark.parametrize(
    ("statement", "reason"),
    [
        (edge("Q9", "P57", "Q2"), "new-head"),
        (edge("Q1", "P1037", "Q2"), "new-property"),
        (edge("Q1", "P57", "Q9"), "new-tail"),
        (edge("Q1", "P19", "Q3"), "changed"),  # P19 exists in the old dump, on another head
        (BORN, "changed"),  # the birth date was corrected
    ],
)
def test_new_triples_and_why(statement, reason):
    newness = Newness(OLD)
    assert newness.is_new(statement) is True
    assert newness.reason(statement) == reason


def test_the_head_is_checked_before_the_property_and_the_tail():
    assert Newness(OLD).reason(edge("Q9", "P1037", "Q8")) == "new-head"
    assert Newness(OLD).reason(edge("Q1", "P1037", "Q8")) == "new-property"


def test_a_property_known_only_as_an_entity_is_still_new():
    """The issue's 'relation absent' means no statement uses it; a property page alone is not a use."""
    prop = WikidataEntity(id="P1037", kind="property", label="director / manager", datatype="wikibase-item")
    old = KnowledgeBase([*OLD.entities.values(), prop])
    assert Newness(old).reason(edge("Q1", "P1037", "Q2")) == "new-property"


# --- the knowledge base ---------------------------------------------------------------------------------


def test_the_base_shares_repeated_tails_and_answers_membership():
    kb = make_kb(
        [edge("Q1", "P31", "Q5"), edge("Q2", "P31", "Q5"), date("Q2", "P569", "+1901-01-01T00:00:00Z")]
    )
    first, second = kb.tails("Q1", "P31")[0], kb.tails("Q2", "P31")[0]
    assert first.tail == second.tail and first.tail.id == "Q5"
    values = [kb.columns.value[kb.tail_indexes_of(head, "P31")[0]] for head in ("Q1", "Q2")]
    assert values[0] == values[1] and len(kb.columns.value_type) == 2  # one value row per distinct tail
    assert first.qualifiers == {} and first.property == second.property
    assert first.model_fields_set == set(Statement.model_fields)  # shared, and still every field
    assert Statement.model_validate_json(first.model_dump_json()) == first
    changed = first.model_copy(update={"rank": "preferred"})
    assert changed.rank == "preferred" and first.rank == "normal" and second.rank == "normal"
    assert kb.has(edge("Q2", "P31", "Q5")) and kb.has(date("Q2", "P569", "+1901-01-01T00:00:00Z"))
    assert not kb.has(edge("Q2", "P31", "Q6")) and not kb.has(edge("Q3", "P31", "Q5"))
    assert [s.key for s in kb.about("Q5")] == ["Q1|P31|Q5", "Q2|P31|Q5"]

"""The columnar knowledge base: the same records as the entities it was built from, saved and mapped back."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irbgen.wikidata.columns import KnowledgeColumns
from irbgen.wikidata.entity_ids import NO_CODE, id_code
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikidata.saved_base import saved_base

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "wikidata-100-entities.json.bz2"


def statement(head: str, prop: str, tail: Value, **fields) -> Statement:
    return Statement(head=head, property=prop, tail=tail, rank=fields.pop("rank", "normal"), **fields)


def entity(qid: str, *statements: Statement, **fields) -> WikidataEntity:
    label = fields.pop("label", f"label {qid}")
    return WikidataEntity(id=qid, kind="item", label=label, statements=list(statements), **fields)


ENTITIES = [
    entity(
        "Q1",
        statement("Q1", "P6", Value(type="entity", id="Q2", text="Q2")),
        statement(
            "Q1", "P1082", Value(type="quantity", text="12", raw="+12", unit="Q11573"),
            qualifiers={"P585": ["2019"], "P459": ["census", "estimate"]},
            rank="preferred", datatype="quantity",
        ),
        aliases=["one", "uno"], description="first", enwiki="One", sitelinks=7,
    ),
    entity("Q2", statement("Q2", "P6", Value(type="entity", id="Q1", text="Q1")), sitelinks=3),
    WikidataEntity(id="P6", kind="property", label="head of government", datatype="wikibase-item"),
    entity("Q3", statement("Q3", "P6", Value(type="entity", id="Q2", text="Q2"))),
    entity("Q9", label=""),
]  # fmt: skip


def check_same(kb: KnowledgeBase, entities: list[WikidataEntity]) -> None:
    statements = [s for e in entities for s in e.statements]
    assert list(kb.statements) == statements
    assert list(kb.entities) == [e.id for e in entities]
    for original in entities:
        assert kb.entities[original.id] == original.model_copy(update={"statements": []})
        assert kb.by_head.get(original.id, []) == original.statements
        assert kb.by_tail.get(original.id, []) == [s for s in statements if s.tail.id == original.id]
    assert [e.id for e in kb.items()] == ["Q1", "Q2", "Q3", "Q9"]
    assert kb.tails("Q1", "P1082")[0].qualifiers == {"P585": ["2019"], "P459": ["census", "estimate"]}
    assert "Q11573" not in kb and "Q1" in kb and kb.kind("P6") == "property" and kb.sitelinks("Q1") == 7
    assert kb.label("Q9") == "Q9" and kb.entity_datatype("P6") == "wikibase-item"
    assert kb.properties_used() == {"P6", "P1082"}


def test_the_columns_give_back_the_records_they_were_built_from():
    check_same(KnowledgeBase(ENTITIES), ENTITIES)


def test_a_base_built_from_json_rows_is_the_same():
    kb = KnowledgeBase([e.model_dump(mode="json") for e in ENTITIES])
    check_same(kb, ENTITIES)


def test_a_saved_base_maps_back_the_same(tmp_path):
    KnowledgeBase(ENTITIES).save(tmp_path / "kb")
    kb = KnowledgeBase.load(tmp_path / "kb")
    assert isinstance(kb.columns.head.base, np.memmap)  # a plain view of the mapped file
    check_same(kb, ENTITIES)


def test_a_saved_base_is_reused_for_the_same_source_only(tmp_path):
    calls = []

    def entities():
        calls.append(1)
        return ENTITIES

    for source in ({"dump": 1}, {"dump": 1}, {"dump": 2}):
        check_same(saved_base(tmp_path / "kb", source, entities), ENTITIES)
    assert len(calls) == 2


def test_an_entity_read_twice_keeps_its_first_place_and_all_its_statements():
    again = entity("Q1", statement("Q1", "P17", Value(type="entity", id="Q3", text="Q3")), label="Uno")
    kb = KnowledgeBase([*ENTITIES, again])
    assert list(kb.entities)[0] == "Q1" and kb.label("Q1") == "Uno"
    assert [s.property for s in kb.by_head["Q1"]] == ["P6", "P1082", "P17"]
    assert kb.by_tail["Q3"][0].head == "Q1"


def test_ids_are_codes_and_odd_ids_still_resolve():
    assert id_code("Q42") == 84 and id_code("P31") == 63 and id_code("Qx") == NO_CODE
    kb = KnowledgeBase([entity("item-a", statement("item-a", "P6", Value(type="string", text="x", raw="x")))])
    assert kb.by_head["item-a"][0].tail.text == "x" and kb.row("Q404") == -1


@pytest.mark.skipif(not REALDATA.is_file(), reason="needs ../shared/realdata/wikidata-100-entities.json.bz2")
def test_the_real_entities_come_back_whole(tmp_path):
    from irbgen.wikidata.dumps import read_wikidata_dump

    entities = [r for r in read_wikidata_dump(REALDATA) if isinstance(r, WikidataEntity)]
    KnowledgeBase(entities).save(tmp_path)
    kb = KnowledgeBase(columns=KnowledgeColumns.load(tmp_path))
    assert list(kb.statements) == [s for e in entities for s in e.statements]
    assert kb.columns.resident_bytes() / kb.columns.statement_count < 80


def test_new_statements_agree_with_newness_statement_by_statement():
    from irbgen.wikidata.labels import Newness
    from irbgen.wikidata.statement_keys import new_statements

    older = [e.model_copy(update={"statements": e.statements[:1]}) for e in ENTITIES[:2]]
    older.append(entity("Q3", statement("Q3", "P6", Value(type="entity", id="Q1", text="Q1"))))
    new, old = KnowledgeBase(ENTITIES), KnowledgeBase(older)
    mask = new_statements(new.columns, old.columns)
    assert mask.tolist() == [Newness(old).is_new(s) for s in new.statements] == [False, True, False, True]

"""The Wikidata retrieval corpus: linearisation, chunk boundaries, old/new conflicts in separate passages,
deterministic ids, article documents and per-hop evidence, on hand-made knowledge bases."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irbgen.errors import BadInputError
from irbgen.pipeline.runner import run_stage
from irbgen.pipeline.stage import StageContext
from irbgen.wikidata.corpus import (
    article_documents,
    chunk_units,
    documents_by_entity,
    entity_documents,
    evidence_passages,
    hop_evidence,
    pack_units,
    qualifier_text,
    readable_description,
    statement_sentence,
    union,
)
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Chain, ChainHop, Statement, Value, WikidataEntity
from irbgen.wikidata.stages import WritePassages, item_ranges

PROPERTIES = {
    "P17": "country",
    "P36": "capital",
    "P69": "educated at",
    "P131": "located in the administrative territorial entity",
    "P580": "start time",
    "P582": "end time",
    "P585": "point in time",
    "P642": "of",
    "P1082": "population",
    "P2044": "elevation above sea level",
}


def entity(value: str) -> Value:
    return Value(type="entity", id=value, text=value)


def statement(head: str, prop: str, tail: Value | str, **qualifiers: list[str]) -> Statement:
    tail = entity(tail) if isinstance(tail, str) else tail
    return Statement(head=head, property=prop, tail=tail, rank="normal", qualifiers=qualifiers)


RAW_ID = re.compile(r"\b[PQ]\d+\b")
POPULATION = Value(type="quantity", text="18400", raw="+18400")
ELEVATION = Value(type="quantity", text="12.5", raw="+12.5", unit="Q20")


def make_kb(items: list[tuple[str, str, str, list[Statement]]], **extra: WikidataEntity) -> KnowledgeBase:
    entities = [
        WikidataEntity(id=i, kind="item", label=label, description=desc, statements=stmts)
        for i, label, desc, stmts in items
    ]
    props = [WikidataEntity(id=p, kind="property", label=label) for p, label in PROPERTIES.items()]
    return KnowledgeBase([*entities, *extra.values(), *props])


NEW_ITEMS = [
    ("Q10", "Aster", "capital of Norland", []),
    ("Q1", "Ada Vance", "Scottish chemist.", [statement("Q1", "P69", "Q2")]),
    ("Q2", "Corran College", "", [statement("Q2", "P131", "Q3")]),
    ("Q3", "Lisbrook", "city on the Amber coast", [
        statement("Q3", "P17", "Q4"),
        statement("Q3", "P1082", POPULATION, P585=["2020"]),
        statement("Q3", "P2044", ELEVATION),
    ]),
    ("Q4", "Norland", "country", [statement("Q4", "P36", "Q10")]),
    ("Q20", "metre", "unit of length", []),
]  # fmt: skip
ALIASED = WikidataEntity(id="Q5", kind="item", label="Vell", aliases=["Vell Province", "Vell"])
NEW = make_kb(NEW_ITEMS, aliased=ALIASED)


# --- linearisation -----------------------------------------------------------------------------------


def test_passages_linearise_label_description_and_statements():
    documents = {document.id: document for document in entity_documents(NEW)}
    lisbrook = documents["Q3#0"]
    assert lisbrook.text == (
        "Lisbrook: city on the Amber coast. The country where Lisbrook is located is Norland. "
        "The population of Lisbrook is 18,400 (as of 2020). "
        "The elevation above sea level of Lisbrook is 12.5 metre."
    )
    assert lisbrook.title == "Lisbrook"
    assert lisbrook.metadata == {
        "entity": "Q3",
        "source": "wikidata",
        "snapshot": "new",
        "chunk": 0,
        "statements": ["Q3|P17|Q4", "Q3|P1082|quantity:+18400", "Q3|P2044|quantity:+12.5@Q20"],
    }
    assert (
        documents["Q1#0"].text
        == "Ada Vance: Scottish chemist. The school where Ada Vance was educated is Corran College."
    )
    assert documents["Q2#0"].text.startswith("Corran College. The administrative region that contains")
    assert documents["Q5#0"].text == "Vell. Vell is also known as Vell Province."
    assert documents["Q10#0"].text == "Aster: capital of Norland."  # a tail-only entity still has a passage


def test_qualifiers_read_briefly():
    assert qualifier_text(NEW, {"P585": ["2020"]}) == "(as of 2020)"
    assert qualifier_text(NEW, {"P580": ["2010"], "P582": ["2015"]}) == "(from 2010 to 2015)"
    assert qualifier_text(NEW, {"P582": ["2015"]}) == "(until 2015)"
    assert qualifier_text(NEW, {"P642": ["Q4", "free text"], "P580": ["2010"], "P17": []}) == (
        "(from 2010; of: Norland, free text)"
    )
    assert qualifier_text(NEW, {}) == ""


def test_qualifiers_without_words_are_left_out():
    qualifiers = {
        "P585": ["2016"],
        "P459": ["Q791801"],  # determination method: its value has no label anywhere
        "P642": ["Q999", "Q4"],  # "of": a label, but Q999 is outside the base
        "P805": ["Q3088698"],  # "statement is subject of" with an item outside the base
        "P7938": ["50"],  # a literal under a property with no label (newer than irbgen's table)
    }
    assert qualifier_text(NEW, qualifiers) == "(as of 2016; of: Norland)"
    assert qualifier_text(NEW, {"P805": ["Q3088698"]}) == ""
    bare = KnowledgeBase([WikidataEntity(id="Q1", kind="item", label="One")])  # no property entities at all
    assert qualifier_text(bare, {"P580": ["2010"], "P585": ["2016"], "P7938": ["census"]}) == (
        "(from 2010; as of 2016)"  # time spans are worded without their labels
    )


def test_no_passage_states_a_raw_id():
    odd = [
        statement("Q6", "P36", "Q999"),  # an item outside the base
        statement("Q6", "P9999", POPULATION),  # a property with no label
        statement("Q6", "P1082", Value(type="other", text="P1082", raw="P1082")),  # a property as a value
        statement("Q6", "P17", "Q4", P805=["Q3088698"], P459=["Q791801"], P580=["1990"]),
    ]
    kb = make_kb([*NEW_ITEMS, ("Q6", "Tarn", "", odd)])
    old = make_kb([("Q6", "Tarn", "", [statement("Q6", "P17", "Q998"), statement("Q6", "P17", "Q30")]),
                   ("Q30", "Old Norland", "", [])])  # fmt: skip
    documents = {document.id: document for document in entity_documents(kb, old_kb=old)}
    assert documents["Q6#0"].text == "Tarn. The country where Tarn is located is Norland (from 1990)."
    assert documents["Q6#old0"].text == (
        "Tarn: statements from an older snapshot of Wikidata, since changed. "
        "The country where Tarn is located is Old Norland."
    )
    assert documents["Q6#0"].metadata["statements"] == ["Q6|P17|Q4"]
    assert not any(RAW_ID.search(document.text) for document in documents.values())


@pytest.mark.parametrize(
    ("description", "readable"),
    [
        ("health care facility (for organizations use medical organization (Q4287745), for individual "
         "buildings use Q39364723)", "health care facility"),
        ("building of a university. If it is a university campus, use Q209465.", "building of a university."),
        ("term for a site (please avoid as a P31 value)", "term for a site"),
        ("use Q5", ""),
        ("city  in Chile (capital)", "city  in Chile (capital)"),  # no id: as it is
    ],
)  # fmt: skip
def test_descriptions_lose_the_notes_that_name_ids(description, readable):
    assert readable_description(description) == readable
    hospital = WikidataEntity(id="Q16917", kind="item", label="hospital", description=description)
    (document,) = entity_documents(KnowledgeBase([hospital]))
    assert not RAW_ID.search(document.text)


def test_ids_are_deterministic_and_in_numeric_order():
    ids = [document.id for document in entity_documents(NEW)]
    assert ids == ["Q1#0", "Q2#0", "Q3#0", "Q4#0", "Q5#0", "Q10#0", "Q20#0"]
    shuffled = make_kb(list(reversed(NEW_ITEMS)), aliased=ALIASED)
    assert entity_documents(shuffled) == entity_documents(NEW)


# --- chunking ----------------------------------------------------------------------------------------


def test_chunks_cut_between_sentences_and_only_cut_an_oversized_one():
    units = ["a b c.", "d e.", "f g h i j k l."]
    assert chunk_units(units, 4) == ["a b c.", "d e.", "f g h i", "j k l."]
    assert pack_units(units, 4) == [("a b c.", [0]), ("d e.", [1]), ("f g h i", [2]), ("j k l.", [2])]
    assert pack_units(units, 5)[0] == ("a b c. d e.", [0, 1])
    assert chunk_units(units, 5) == ["a b c. d e.", "f g h i j", "k l."]
    assert chunk_units(units, 100) == ["a b c. d e. f g h i j k l."]
    assert chunk_units([], 4) == []
    with pytest.raises(BadInputError, match="--chunk-tokens must be at least 1"):
        chunk_units(units, 0)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["x", "yy", "z."]), min_size=1, max_size=12), max_size=15),
    st.integers(min_value=1, max_value=20),
)
def test_chunks_keep_every_token_in_order_within_the_limit(sentences, limit):
    units = [" ".join(words) for words in sentences]
    chunks = chunk_units(units, limit)
    assert [token for chunk in chunks for token in chunk.split()] == [w for words in sentences for w in words]
    assert all(1 <= len(chunk.split()) <= limit for chunk in chunks)
    fitting = [unit for unit in units if len(unit.split()) <= limit]
    assert all(any(unit in chunk for chunk in chunks) for unit in fitting)  # a fitting sentence is never cut


def test_long_passage_is_chunked_into_numbered_documents():
    documents = [d for d in entity_documents(NEW, chunk_tokens=14) if d.metadata["entity"] == "Q3"]
    assert [d.id for d in documents] == ["Q3#0", "Q3#1", "Q3#2"]
    assert [d.metadata["chunk"] for d in documents] == [0, 1, 2]
    first = "Lisbrook: city on the Amber coast. The country where Lisbrook is located is Norland."
    assert documents[0].text == first
    assert documents[1].text == "The population of Lisbrook is 18,400 (as of 2020)."
    assert all(len(d.text.split()) <= 14 for d in documents)


# --- old and new snapshots ---------------------------------------------------------------------------


OLD_POPULATION = Value(type="quantity", text="17000", raw="+17000")
OLD_ITEMS = [
    ("Q1", "Ada Vance", "chemist", [statement("Q1", "P69", "Q2")]),
    ("Q3", "Lisbrook", "town", [
        statement("Q3", "P17", "Q30"),  # changed: new says Norland
        statement("Q3", "P1082", OLD_POPULATION, P585=["2010"]),  # changed
        statement("Q3", "P36", "Q2"),  # gone from new entirely: not a conflict
    ]),
    ("Q4", "Norland", "country", []),  # the capital was added in new: not a conflict
    ("Q30", "Old Norland", "former country", []),
]  # fmt: skip
OLD = make_kb(OLD_ITEMS)


def test_conflicting_old_statements_get_their_own_passage():
    documents = entity_documents(NEW, old_kb=OLD)
    ids = [document.id for document in documents]
    assert ids == ["Q1#0", "Q2#0", "Q3#0", "Q3#old0", "Q4#0", "Q5#0", "Q10#0", "Q20#0"]
    old = documents[3]
    assert old.text == (
        "Lisbrook: statements from an older snapshot of Wikidata, since changed. "
        "The country where Lisbrook is located is Old Norland. "
        "The population of Lisbrook is 17,000 (as of 2010)."
    )
    assert old.metadata == {
        "entity": "Q3",
        "source": "wikidata",
        "snapshot": "old",
        "chunk": 0,
        "statements": ["Q3|P17|Q30", "Q3|P1082|quantity:+17000"],
    }
    new = documents[2]
    assert "Old Norland" not in new.text and "17000" not in new.text and "capital" not in new.text
    assert entity_documents(NEW, old_kb=NEW) == entity_documents(NEW)  # the same snapshot: no conflicts


# --- Wikipedia articles ------------------------------------------------------------------------------


def test_article_documents_link_by_id_or_enwiki_title():
    college = WikidataEntity(id="Q2", kind="item", label="Corran College", enwiki="Corran College")
    kb = make_kb([item for item in NEW_ITEMS if item[0] != "Q2"], college=college)
    texts = {
        "Corran_College": "Corran College is a college.\n\nIt was founded in 1891 by three sisters.",
        "Q4": "Norland is a country.",
        "Some other page": "Not in the base.",
        "Q3": "   ",
    }
    documents = article_documents(texts, kb, chunk_tokens=6)
    assert [(d.id, d.title, d.text) for d in documents] == [
        ("Q2#wiki0", "Corran College", "Corran College is a college."),
        ("Q2#wiki1", "Corran College", "It was founded in 1891 by"),
        ("Q2#wiki2", "Corran College", "three sisters."),
        ("Q4#wiki0", "Norland", "Norland is a country."),
    ]
    assert documents[0].metadata == {"entity": "Q2", "source": "wikipedia", "snapshot": "new", "chunk": 0}


# --- evidence ----------------------------------------------------------------------------------------


def hop(head: str, prop: str) -> ChainHop:
    return ChainHop(statement=NEW.tails(head, prop)[0], popularity=0.0, popular=False)


def test_hop_evidence_picks_the_passages_holding_each_statement():
    documents = [
        *entity_documents(NEW, old_kb=OLD, chunk_tokens=8),
        *article_documents({"Q3": "Lisbrook is a city."}, NEW),
    ]
    by_entity = documents_by_entity(documents)
    assert sorted(by_entity) == ["Q1", "Q10", "Q2", "Q20", "Q3", "Q4", "Q5"]
    chain = Chain(id="c1", hops=[hop("Q1", "P69"), hop("Q2", "P131"), hop("Q3", "P1082")])
    assert (
        statement_sentence(NEW, chain.hops[2].statement)
        == "The population of Lisbrook is 18,400 (as of 2020)."
    )
    # each hop's sentence (9 to 10 tokens) is cut across two passages; Q2#0 is only the label
    assert hop_evidence(chain, by_entity) == [["Q1#1", "Q1#2"], ["Q2#1", "Q2#2"], ["Q3#2", "Q3#3"]]
    to_norland = Chain(id="c2", hops=[hop("Q2", "P131"), hop("Q3", "P17")])
    evidence = hop_evidence(to_norland, by_entity)
    assert evidence == [["Q2#1", "Q2#2"], ["Q3#1", "Q4#0"]]  # old passages and articles are never evidence
    assert union(evidence) == ["Q2#1", "Q2#2", "Q3#1", "Q4#0"]
    assert union([["a", "b"], ["b", "c"], []]) == ["a", "b", "c"]


def test_hop_evidence_falls_back_to_all_the_heads_passages():
    bare = [
        document.model_copy(
            update={"metadata": {k: v for k, v in document.metadata.items() if k != "statements"}}
        )
        for document in entity_documents(NEW, chunk_tokens=11)
    ]
    chain = Chain(id="c3", hops=[hop("Q3", "P1082")])
    assert hop_evidence(chain, documents_by_entity(bare)) == [["Q3#0", "Q3#1", "Q3#2", "Q3#3"]]
    assert hop_evidence(chain, {}) == [[]]


# --- passages written per range of items ------------------------------------------------------------


def saved(kb: KnowledgeBase, directory: Path) -> KnowledgeBase:
    kb.save(directory)
    return KnowledgeBase.load(directory)


@pytest.mark.parametrize("processes", [1, 2])
def test_passages_written_per_range_are_the_whole_corpus_in_order(tmp_path, processes):
    """The passages stage over ranges of 2 items, on this process or on 2 spawned ones (which map the
    saved bases), checkpoints exactly the documents `entity_documents` makes in memory."""
    kb, old = saved(NEW, tmp_path / "kb"), saved(OLD, tmp_path / "old_kb")
    ranges = list(item_ranges(kb, size=2))
    assert [r.key for r in ranges] == ["items 0-1", "items 2-3", "items 4-5", "items 6-6"]
    context = StageContext(run_dir=tmp_path / "run")
    stage = WritePassages(kb, old, chunk_tokens=14)
    result = run_stage(stage, ranges, context, processes=processes, chunk_size=1)
    assert list(result.outputs()) == entity_documents(NEW, old_kb=OLD, chunk_tokens=14)
    assert len(list(result.outputs())) > len(NEW.items())  # chunks and an old passage among them


def test_a_loaded_base_pickles_as_its_directory(tmp_path):
    kb = saved(NEW, tmp_path / "kb")
    data = pickle.dumps(kb)
    assert len(data) < 1000  # the directory, not the columns
    mapped = pickle.loads(data)
    assert mapped.directory == tmp_path / "kb" and entity_documents(mapped) == entity_documents(NEW)
    in_memory = pickle.loads(pickle.dumps(NEW))  # a base built here travels with its columns
    assert in_memory.directory is None and entity_documents(in_memory) == entity_documents(NEW)


def test_items_without_a_q_code_are_ordered_as_ids_are():
    odd = WikidataEntity(id="Qx", kind="item", label="odd one")
    kb = make_kb(NEW_ITEMS, odd=odd)
    ids = [document.id for document in entity_documents(kb)]
    assert ids == ["Qx#0", "Q1#0", "Q2#0", "Q3#0", "Q4#0", "Q10#0", "Q20#0"]


def test_evidence_passages_are_the_corpus_grouped_for_the_chains_entities():
    hops = [
        ChainHop(statement=statement("Q1", "P69", "Q2"), popularity=1.0, popular=True),
        ChainHop(statement=statement("Q2", "P131", "Q3"), popularity=1.0, popular=True),
    ]
    chain = Chain(id="c", hops=hops)
    grouped = evidence_passages([chain], NEW, OLD, chunk_tokens=14)
    whole = documents_by_entity(entity_documents(NEW, old_kb=OLD, chunk_tokens=14))
    assert set(grouped) == {"Q1", "Q2", "Q3"}  # heads, and the answer
    assert grouped == {entity_id: whole[entity_id] for entity_id in grouped}
    assert hop_evidence(chain, grouped) == hop_evidence(chain, whole)

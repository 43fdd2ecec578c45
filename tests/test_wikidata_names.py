"""Issue 27 point 4: every node of a question says which thing it is (irbgen.wikidata.names).

Real entities of the tuning half (even Q-numbers) of ../shared/realdata/wikidata-openrefine-1026.json.bz2;
the file is read once (about 2 s) and the tests skip when it is absent.
"""

from __future__ import annotations

import pytest
from wikidata_openrefine import ask, one, openrefine_kb

from irbgen.records import Reject
from irbgen.wikidata.answerable import why_unusable
from irbgen.wikidata.entity_ids import split_half
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.names import NameIndex, Names, head_noun, name_key, without_nationality
from irbgen.wikidata.records import ChainQuestion, Value, WikidataEntity


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return openrefine_kb()


def tuning(*ids: str) -> None:
    assert all(split_half(entity_id) == "tuning" for entity_id in ids), ids


def test_head_nouns():
    assert head_noun("major political party in the United States") == "party"
    assert head_noun("capital and largest city of Poland") == "capital"  # the first of two
    assert head_noun("constituent college of the University of Oxford in England") == "colleg"
    assert head_noun("") == ""


def test_a_kind_of_thing_gets_its_description(kb):
    # "Republican Party" is the only one in the file, but many countries have one
    tuning("Q29468")
    out = ask(kb, one(kb, "Q29468", "P571"))
    assert isinstance(out, ChainQuestion), out
    assert (
        out.question
        == "On what date was Republican Party (major political party in the United States) founded?"
    )


def test_a_description_holding_the_answer_is_not_used_and_the_chain_is_rejected(kb):
    tuning("Q29468", "Q30")
    out = ask(kb, one(kb, "Q29468", "P17"))  # was "In which country is Republican Party located?"
    assert isinstance(out, Reject) and out.reason == "ambiguous", out
    assert "'major political party in the United States' gives an answer away" in out.detail


def test_a_one_word_title_of_a_work_gets_its_description_unless_it_names_the_answer(kb):
    tuning("Q24056802", "Q884048")
    dated = ask(kb, one(kb, "Q24056802", "P571"))
    assert isinstance(dated, ChainQuestion) and "Stilleven (painting by Ger Lataster)" in dated.question, (
        dated
    )
    creator = ask(kb, one(kb, "Q24056802", "P170"))  # was "Who created Stilleven?"
    assert isinstance(creator, Reject) and creator.reason == "ambiguous", creator


def test_an_adjective_of_the_answer_gives_it_away(kb):
    # Steve Clark shares his label; "American soccer player" would tell the country for sport, so the
    # question names him by what he is without the nationality
    tuning("Q3431192", "Q30")
    out = ask(kb, one(kb, "Q3431192", "P1532"))
    assert isinstance(out, ChainQuestion), out
    assert "Steve Clark (soccer player)" in out.question and "American" not in out.question
    assert Names(kb).gives_away("American soccer player", Value(type="entity", id="Q30", text="Q30"))
    assert without_nationality("Scottish association football player") == "association football player"
    assert without_nationality("Member of Parliament") == "Member of Parliament"


def test_a_bridge_description_giving_a_later_answer_away_is_not_used(kb):
    # the second node is one of several "Oxford" constituencies; its description holds the year asked for
    tuning("Q7115222", "Q56189462")
    out = ask(kb, one(kb, "Q7115222", "P1365"), one(kb, "Q56189462", "P571"))
    assert isinstance(out, Reject) and out.reason == "ambiguous", out
    assert out.detail.startswith("hop 1: 'Oxford' names more than one item") and "1801-1885" in out.detail


def test_specific_labels_stay_bare(kb):
    tuning("Q56764476", "Q5260200")
    names = Names(kb)
    assert names.is_generic("Q56764476") == ""  # "Amsterdam Vroedschap": named by its place
    assert names.name("Q5260200") == "Department of Computer Science, University of Oxford"  # long enough
    assert names.name("Q2038528") == "Amsterdam (town in Montgomery County, New York)"  # shared label


def test_gives_away_reads_labels_aliases_demonyms_years_and_adjectives():
    country = WikidataEntity.model_validate(
        {
            "id": "Q1",
            "kind": "item",
            "label": "Halvoria",
            "aliases": ["Republic of Halvoria"],
            "statements": [
                {
                    "head": "Q1",
                    "property": "P1549",
                    "tail": {"type": "monolingualtext", "text": "Halvish", "raw": "Halvish"},
                    "rank": "normal",
                }
            ],
        }
    )
    names = Names(KnowledgeBase([country]))
    halvoria = Value(type="entity", id="Q1", text="Q1")
    assert names.gives_away("1993 Halvorian film", halvoria)  # an adjective made from the label
    assert names.gives_away("a Halvish film", halvoria)  # the demonym
    assert not names.gives_away("a film by Fenna Kerrigan", halvoria)
    year = Value(type="time", text="1801", raw="+1801-00-00T00:00:00Z", precision=9)
    assert names.gives_away("constituency, 1801-1885", year)
    assert not names.gives_away("constituency, 1885-1983", year)


def test_a_subject_whose_name_gives_a_bridge_away_is_a_leak(kb):
    # "the capital of the country where Warsaw radio mast is located" is Warsaw, which the name says
    tuning("Q1121720", "Q36", "Q270")
    out = ask(kb, one(kb, "Q1121720", "P17"), one(kb, "Q36", "P36"), one(kb, "Q270", "P2044"))
    assert isinstance(out, Reject) and out.reason == "answer_leak", out
    assert "'Warsaw radio mast' gives away hop 1's 'Warsaw'" in out.detail
    names = Names(kb)
    australia = Value(type="entity", id="Q408", text="Q408")
    assert names.name_gives_away("Australian head", australia)  # a word made from a one-word label
    summer = Value(type="entity", id="Q8415", text="Q8415")  # not in the file: no label, no words
    assert not names.name_gives_away("1980 Summer Games", summer)


def test_a_demonym_is_asked_in_english_only(kb):
    tuning("Q270")
    demonyms = {s.tail.raw: why_unusable(kb, s) for s in kb.tails("Q270", "P1549")}
    assert demonyms["warszawiak@pl"] == "text_not_english" and demonyms["Varsovien@fr"] == "text_not_english"
    native = [s for s in kb.tails("Q270", "P1705") if s.tail.raw == "Warszawa@pl"]
    assert native and why_unusable(kb, native[0]) is None  # a native name may be in its own language


def test_a_person_is_named_with_their_description_unless_the_chain_asks_for_their_country(kb):
    tuning("Q827998", "Q5085424")  # the subjects; the UK is only an answer here
    born = ask(kb, one(kb, "Q827998", "P569"))
    assert (
        isinstance(born, ChainQuestion)
        and born.question == "On what date was Ger van Elk (Dutch artist) born?"
    )
    born = ask(kb, one(kb, "Q5085424", "P569"))
    assert isinstance(born, ChainQuestion) and "Charlie Ramsden (English footballer)" in born.question
    citizen = next(s for s in kb.tails("Q5085424", "P27") if s.tail.id == "Q145")
    size = next(s for s in kb.tails("Q145", "P2046") if s.tail.raw == "+242495.406794")
    area = ask(kb, citizen, size)  # "English footballer" would tell the country
    assert isinstance(area, ChainQuestion), area
    assert area.question == "What is the area of the country of citizenship of Charlie Ramsden (footballer)?"


def test_a_work_is_created_and_a_minor_planet_discovered(kb):
    tuning("Q27964894", "Q1072986")
    created = ask(kb, one(kb, "Q27964894", "P571"))
    assert created.question == "In which year was Amsterdam (painting by Jacob Maris) created?"  # not founded
    found = ask(kb, one(kb, "Q1072986", "P575"))
    assert found.question == "On what date was 11945 Amsterdam discovered?"  # not "the time of discovery"


def test_a_shared_person_name_is_not_described_by_the_nationality_the_chain_asks_for(kb):
    # "Denise Ramsden (English sprinter)" told "the country of citizenship of ..." before it was asked
    tuning("Q5257746")
    citizen = next(s for s in kb.tails("Q5257746", "P27") if s.tail.id == "Q145")
    fertility = next(s for s in kb.tails("Q145", "P4841") if s.tail.raw == "+1.83")
    out = ask(kb, citizen, fertility)
    assert isinstance(out, ChainQuestion), out
    assert "Denise Ramsden (sprinter)" in out.question and "English" not in out.question
    dated = ask(kb, one(kb, "Q30274958", "P585"))  # was "What is the point in time of Grenfell Tower fire?"
    assert dated.question == "On what date did Grenfell Tower fire take place?"


def _names_by_definition(kb):
    """Normalised label or alias -> the ids of the items that go by it, from the items themselves."""
    index: dict[str, set[str]] = {}
    for item in kb.items():
        for name in {item.label, *item.aliases}:
            if name:
                index.setdefault(name_key(name), set()).add(item.id)
    return index


def _same_answers(found: NameIndex, expected: dict[str, set[str]], every: int = 1) -> None:
    for key, ids in list(expected.items())[::every]:
        assert key in found and found.ids(key) == ids, key
    for key in ("", "the", "new york city x", *[f"{key} x" for key in list(expected)[:200]]):
        assert (key in found) == (key in expected) and found.ids(key) == expected.get(key, set()), key


def test_the_name_index_finds_the_items_of_each_label_and_alias(kb):
    expected = _names_by_definition(kb)
    assert sum(len(ids) > 1 for ids in expected.values()) > 0  # some names are shared
    _same_answers(NameIndex(kb), expected)


def test_a_name_hash_shared_by_other_names_never_counts_them(kb, monkeypatch):
    import irbgen.wikidata.names as names_module

    monkeypatch.setattr(names_module, "_hash", lambda key: sum(map(ord, key[:2])))  # names collide
    _same_answers(NameIndex(kb), _names_by_definition(kb), every=10)

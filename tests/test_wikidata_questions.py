"""Chain questions: rules realisation for 1-4 hops, ambiguity, answer leaks and answer forms on a
hand-made knowledge base; the llm backend end to end through a loopback OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from irbgen.errors import BadInputError
from irbgen.llm.client import LLMClient
from irbgen.llm.settings import LLMSettings
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.testing import OpenAIStubServer
from irbgen.wikidata.answerable import why_unusable
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.questions import (
    Names,
    WriteChainQuestions,
    answer_texts,
    answer_type,
    chain_facts,
    describe,
    is_answer_alias,
    leaks,
    matches,
)
from irbgen.wikidata.records import Chain, ChainHop, ChainQuestion, Statement, Value, WikidataEntity

PROPERTIES = {
    "P17": "country",
    "P19": "place of birth",
    "P36": "capital",
    "P69": "educated at",
    "P106": "occupation",
    "P131": "located in the administrative territorial entity",
    "P569": "date of birth",
    "P571": "inception",
    "P585": "point in time",
    "P1082": "population",
    "P1448": "official name",
    "P2044": "elevation above sea level",
}


def entity(value: str) -> Value:
    return Value(type="entity", id=value, text=value)


def statement(head: str, prop: str, tail: Value | str, **qualifiers: list[str]) -> Statement:
    tail = entity(tail) if isinstance(tail, str) else tail
    return Statement(head=head, property=prop, tail=tail, rank="normal", qualifiers=qualifiers)


BIRTH = Value(type="time", text="11 March 1952", raw="+1952-03-11T00:00:00Z", precision=11)
FOUNDED = Value(type="time", text="1891", raw="+1891-00-00T00:00:00Z", precision=9)
POPULATION = Value(type="quantity", text="18400", raw="+18400", unit=None)
ELEVATION = Value(type="quantity", text="12.5", raw="+12.5", unit="Q20")
NAME = Value(type="monolingualtext", text="Republic of Norland")

ITEMS = [
    ("Q1", "Ada Vance", "Scottish chemist", [], [
        statement("Q1", "P69", "Q2"), statement("Q1", "P19", "Q3"), statement("Q1", "P569", BIRTH),
        statement("Q1", "P106", "Q9"), statement("Q1", "P106", "Q10"),
    ]),
    ("Q2", "Corran College", "college", [], [
        statement("Q2", "P131", "Q3"), statement("Q2", "P571", FOUNDED),
    ]),
    ("Q3", "Lisbrook", "city on the Amber coast", [], [
        statement("Q3", "P17", "Q4"), statement("Q3", "P1082", POPULATION, P585=["2020"]),
        statement("Q3", "P2044", ELEVATION),
    ]),
    ("Q4", "Norland", "country", ["Kingdom of Norland", "NL", "N"], [
        statement("Q4", "P36", "Q5"), statement("Q4", "P1448", NAME),
    ]),
    ("Q5", "Aster", "capital of Norland", [], []),
    ("Q6", "Lisbrook", "village in Vell", [], [statement("Q6", "P17", "Q4")]),
    ("Q7", "Marren", "river", [], [statement("Q7", "P17", "Q4")]),
    ("Q8", "Marren", "river", [], []),
    ("Q9", "chemist", "", [], []),
    ("Q10", "teacher", "", [], []),
    ("Q11", "Norland Football Association", "sports body", [], [statement("Q11", "P17", "Q4")]),
    ("Q12", "Tessa Marr", "", ["Lisbrook"], []),
    ("Q20", "metre", "unit of length", [], []),
]  # fmt: skip


def make_kb() -> KnowledgeBase:
    items = [
        WikidataEntity(id=i, kind="item", label=label, description=desc, aliases=aliases, statements=stmts)
        for i, label, desc, aliases, stmts in ITEMS
    ]
    props = [WikidataEntity(id=p, kind="property", label=label) for p, label in PROPERTIES.items()]
    return KnowledgeBase([*items, *props])


KB = make_kb()


def chain(*props: str, start: str = "Q1") -> Chain:
    """A chain following the first statement of each property from the start entity."""
    hops, head = [], start
    for prop in props:
        found = KB.tails(head, prop)[0]
        hops.append(ChainHop(statement=found, popularity=1.0, popular=False, new=True))
        head = found.tail.id or ""
    return Chain(id=f"c-{start}-{'-'.join(props)}", hops=hops)


def rules(record: Chain) -> ChainQuestion | Reject:
    (out,) = WriteChainQuestions("rules", kb=KB).process(record, StageContext(run_dir=Path(".")))
    return out


FOUR_HOPS = ("P69", "P131", "P17", "P36")


# --- rules realisation -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "phrase"),
    [
        ("country", "the country of X"),
        ("place of birth", "the place of birth of X"),
        ("educated at", "the entity that X is educated at"),
        ("instance of", "the class that X is an instance of"),
        ("located in the administrative territorial entity",
         "the administrative territorial entity that X is located in"),
        ("located in/on physical feature", "the physical feature that X is located in/on"),
        ("member of sports team", "the sports team that X is a member of"),
        ("has part(s)", "the part(s) of X"),
        ("award received", "the award received by X"),
        ("follows", "the entity that X follows"),
        ("shares border with", "the entity that X shares border with"),
    ],
)  # fmt: skip
def test_describe_reads_property_labels(label, phrase):
    assert describe(label, "X") == phrase


@pytest.mark.parametrize(
    ("hops", "question", "answers"),
    [
        (1, "Where was Ada Vance educated?", ["Corran College"]),
        (2, "In which administrative region is the school where Ada Vance was educated located?",
         ["Corran College", "Lisbrook"]),
        (3, "In which country is the administrative region that contains the school where Ada Vance was "
            "educated located?", ["Corran College", "Lisbrook", "Norland"]),
        (4, "What is the capital of the country where the administrative region that contains the school "
            "where Ada Vance was educated is located?", ["Corran College", "Lisbrook", "Norland", "Aster"]),
    ],
)  # fmt: skip
def test_rules_realise_one_to_four_hops(hops, question, answers):
    out = rules(chain(*FOUR_HOPS[:hops]))
    assert isinstance(out, ChainQuestion), out
    assert out.question == question
    assert out.sub_answers == answers
    expected_subs = [
        "Where was Ada Vance educated?",
        "In which administrative region is Corran College located?",
        # Q6 is also "Lisbrook" (and Q12's alias): the intermediate is named with its description
        "In which country is Lisbrook (city on the Amber coast) located?",
        "What is the capital of Norland?",
    ][:hops]
    assert out.sub_questions == (expected_subs if hops > 1 else [question])
    assert (out.method, out.attempts, out.prompts, out.model) == ("rules", 1, [], None)


def test_rules_literal_answers():
    out = rules(chain("P569"))
    assert isinstance(out, ChainQuestion)
    assert (out.question, out.sub_answers) == ("On what date was Ada Vance born?", ["11 March 1952"])
    out = rules(chain("P1082", start="Q3"))  # its point in time is part of the question
    assert isinstance(out, ChainQuestion)
    assert out.question == "In 2020, what was the population of Lisbrook (city on the Amber coast)?"
    assert out.sub_answers == ["18,400"]
    out = rules(chain("P2044", start="Q3"))  # the unit's label from its item in the base
    assert isinstance(out, ChainQuestion) and out.sub_answers == ["12.5 metre"]


def test_a_question_names_no_id_from_a_description():
    notes = "health care facility (for individual buildings use Q39364723)"
    items = [
        WikidataEntity(id="Q1", kind="item", label="hospital", description=notes),
        WikidataEntity(id="Q2", kind="item", label="hospital", description="Q5 only"),
    ]
    names = Names(KnowledgeBase(items))
    assert names.name("Q1") == "hospital (health care facility)"
    assert names.name("Q2") is None  # nothing readable tells it apart: ambiguous


def test_shared_label_with_same_description_is_ambiguous():
    out = rules(chain("P17", start="Q7"))
    assert isinstance(out, Reject)
    assert (out.stage, out.reason, out.key) == ("questions", "ambiguous", "c-Q7-P17")
    assert "'Marren' names more than one item" in out.detail
    # description told apart: kept
    out = rules(chain("P17", start="Q6"))
    assert (
        isinstance(out, ChainQuestion)
        and out.question == "In which country is Lisbrook (village in Vell) located?"
    )


def test_head_property_with_two_current_values_is_many_values():
    hop = ChainHop(statement=KB.tails("Q1", "P106")[0], popularity=0.0, popular=False)
    out = rules(Chain(id="c-occupation", hops=[hop]))
    assert isinstance(out, Reject) and out.reason == "many_values"
    assert out.detail == "hop 0: (Ada Vance, occupation) has values chemist, teacher, not one current value"
    stray = statement("Q1", "P19", "Q4")  # not in the base at all
    out = rules(Chain(id="c-stray", hops=[ChainHop(statement=stray, popularity=0.0, popular=False)]))
    assert isinstance(out, Reject) and out.reason == "many_values" and "has values Lisbrook" in out.detail


def test_question_holding_its_answer_is_a_leak():
    out = rules(chain("P17", start="Q11"))
    assert isinstance(out, Reject)
    assert (out.reason, out.key) == ("answer_leak", "c-Q11-P17")
    assert "gives away hop 0's 'Norland'" in out.detail  # the subject's name holds it
    golds = answer_texts(KB, entity("Q4"), every_alias=True)  # the leak check reads every alias
    assert leaks("Which NL team won?", golds) == "NL"
    assert leaks("Which NL team won?", answer_texts(KB, entity("Q4"))) is None
    assert leaks("Is plan N the best?", golds) is None  # a one-letter alias is too common to count
    assert leaks("How many moons has Moon 5?", ["5"]) == "5"  # but a one-digit answer is checked


# --- answers ---------------------------------------------------------------------------------------


def test_answer_types_and_texts():
    assert [answer_type(v) for v in (entity("Q4"), BIRTH, POPULATION, NAME)] == [
        "entity",
        "date",
        "quantity",
        "string",
    ]
    assert answer_type(Value(type="globecoordinate", text="1, 2")) == "string"
    assert answer_texts(KB, entity("Q4")) == ["Norland", "Kingdom of Norland"]  # not the aliases "NL", "N"
    assert answer_texts(KB, BIRTH) == ["11 March 1952", "March 11, 1952", "1952-03-11"]
    assert answer_texts(KB, FOUNDED) == ["1891"]
    month = Value(type="time", text="1891-05", raw="+1891-05-00T00:00:00Z", precision=10)
    assert answer_texts(KB, month) == ["1891-05", "May 1891"]
    ancient = Value(type="time", text="44 BC", raw="-0044-03-15T00:00:00Z", precision=11)
    assert answer_texts(KB, ancient) == ["44 BC", "44 BCE"]
    assert answer_texts(KB, ELEVATION) == ["12.5 metre", "12.5"]
    assert answer_texts(KB, POPULATION) == ["18,400", "18400"]
    assert answer_texts(KB, NAME) == ["Republic of Norland"]
    ratio = Value(type="quantity", text="1.50", raw="+1.50")
    assert answer_texts(KB, ratio) == ["1.50", "1.5"] and matches("about 1.5", answer_texts(KB, ratio))


@pytest.mark.parametrize(
    ("alias", "kept"),
    [
        ("de", False), ("cl", False), ("PT", False), ("N", False), ("d:", False), ("U.S.", False),
        ("US$", False), ("G. B.", False), ("\U0001f1e9\U0001f1ea", False), ("\u26fc", False),
        ("Germany \U0001f1e9\U0001f1ea", False), ("\u2b50 star", False),
        ("USA", True), ("FRG", True), ("U.S.A.", True), ("30 °C", True), ("Coca-Cola®", True),
        ("Zürich", True), ("東京都", True),
    ],
)  # fmt: skip
def test_answer_aliases_need_three_letters_or_digits_and_no_emoji(alias, kept):
    assert is_answer_alias(alias) is kept


def test_a_short_label_stays_an_answer_while_short_and_emoji_aliases_go():
    aliases = ["U.K.", "GB", "\U0001f1ec\U0001f1e7", "Britain", "United Kingdom"]
    uk = WikidataEntity(id="Q145", kind="item", label="UK", aliases=aliases)
    kb = KnowledgeBase([uk])
    value = Value(type="entity", id="Q145", text="Q145")
    assert answer_texts(kb, value) == ["UK", "Britain", "United Kingdom"]
    assert answer_texts(kb, value, every_alias=True) == ["UK", *aliases]
    assert matches("the UK", answer_texts(kb, value))


def test_answer_matching_is_normalised_and_whole_word():
    golds = answer_texts(KB, entity("Q4"))
    assert matches("norland.", golds) and matches("The Kingdom of Norland", golds)
    assert not matches("Norlandia", golds) and not matches("unknown", golds)
    assert matches("March 11, 1952", answer_texts(KB, BIRTH))
    assert matches("18,400", answer_texts(KB, POPULATION))
    assert not matches("1952", answer_texts(KB, BIRTH))


def test_stage_contract_and_config_errors():
    stage = WriteChainQuestions(kb=KB)
    record = chain("P19")
    assert (stage.name, stage.input_model, stage.output_model) == ("questions", Chain, ChainQuestion)
    assert stage.key(record) == "c-Q1-P19" and stage._prompts == {}  # no prompt read yet
    (out,) = asyncio.run(stage.aprocess(record, StageContext(run_dir=Path("."))))
    assert isinstance(out, ChainQuestion) and out.question == "Where was Ada Vance born?"
    with pytest.raises(BadInputError, match=r"unknown backend 'gpt' \(choose from: llm, rules\)"):
        WriteChainQuestions("gpt", kb=KB)
    with pytest.raises(BadInputError, match="max_attempts must be at least 1"):
        WriteChainQuestions("llm", kb=KB, max_attempts=0)
    with pytest.raises(TypeError, match="aprocess"):
        WriteChainQuestions("llm", kb=KB).process(record, StageContext(run_dir=Path(".")))
    with pytest.raises(BadInputError, match="needs an LLM client"):
        asyncio.run(WriteChainQuestions("llm", kb=KB).aprocess(record, StageContext(run_dir=Path("."))))


# --- llm backend through a real loopback server ------------------------------------------------------


TWO_HOPS = chain("P69", "P131")
MAIN = "In which administrative territorial entity is the college Ada Vance attended located?"
SUB0 = "Where was Ada Vance educated?"
SUB1 = "In which administrative territorial entity is Corran College located?"
RIGHT = {MAIN: "Lisbrook", SUB0: "Corran College", SUB1: "Lisbrook"}


def written(question: str = MAIN, subs: tuple[str, ...] = (SUB0, SUB1)) -> str:
    return json.dumps({"question": question, "sub_questions": [{"question": q, "answer": "x"} for q in subs]})


class Responder:
    """Writes the queued question replies in turn (the last repeats) and answers from a table."""

    def __init__(self, writes: list[str], answers: dict[str, str]) -> None:
        self.writes, self.answers = list(writes), answers
        self.asked: list[str] = []

    def __call__(self, request: dict[str, Any]) -> str:
        system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
        if "You write questions" in system:
            return self.writes.pop(0) if len(self.writes) > 1 else self.writes[0]
        question = user.split("Question: ", 1)[1].strip()
        self.asked.append(question)
        return json.dumps({"answer": self.answers.get(question, "unknown")})


def settings_for(server: OpenAIStubServer) -> LLMSettings:
    return LLMSettings(
        base_url=server.base_url,
        model="stub",
        timeout=2.0,
        max_retries=0,
        backoff_base=0.01,
        backoff_max=0.02,
    )


def run_llm(server: OpenAIStubServer, record: Chain) -> ChainQuestion | Reject:
    async def go() -> list[ChainQuestion | Reject]:
        async with LLMClient(settings_for(server)) as client:
            return await WriteChainQuestions("llm", kb=KB).aprocess(
                record, StageContext(Path("."), llm=client)
            )

    (out,) = asyncio.run(go())
    return out


def test_llm_valid_run_checks_every_question_once():
    responder = Responder([written()], RIGHT)
    with OpenAIStubServer(responder) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 4  # one write, three answers
        write_user = server.bodies[0]["messages"][-1]["content"]
        answer_user = server.bodies[1]["messages"][-1]["content"]
    assert isinstance(out, ChainQuestion), out
    assert (out.question, out.sub_questions, out.sub_answers) == (
        MAIN,
        [SUB0, SUB1],
        ["Corran College", "Lisbrook"],
    )
    assert (out.method, out.attempts, out.model) == ("llm", 1, "stub")
    assert [(p.name, p.version) for p in out.prompts] == [("mintqa_question", "1"), ("mintqa_answer", "1")]
    assert responder.asked == [MAIN, SUB0, SUB1]
    facts = chain_facts(KB, TWO_HOPS, ["Ada Vance", "Corran College"])
    assert facts == (
        "1. (Ada Vance; educated at; Corran College)\n"
        "2. (Corran College; located in the administrative territorial entity; Lisbrook)"
    )
    assert facts in write_user and "The answer to the question is: Lisbrook" in write_user
    assert "Note: (first attempt)" in write_user and facts in answer_user


def test_llm_one_hop_sub_question_is_the_question():
    question = "Where was Ada Vance born?"
    reply = json.dumps({"question": question, "sub_questions": [{"question": "Birthplace?", "answer": "x"}]})
    with OpenAIStubServer(Responder([reply], {question: "Lisbrook (city on the Amber coast)"})) as server:
        out = run_llm(server, chain("P19"))
        assert server.requests == 2
    assert (
        isinstance(out, ChainQuestion) and out.sub_questions == [question] and out.sub_answers == ["Lisbrook"]
    )


def test_llm_question_without_its_hops_date_is_rejected():
    # Lisbrook's population is qualified 2020: a written question that drops the year asks it undated
    undated = "What is the population of Lisbrook?"
    reply = json.dumps({"question": undated, "sub_questions": [{"question": undated, "answer": "x"}]})
    with OpenAIStubServer(Responder([reply], {undated: "18,400"})) as server:
        out = run_llm(server, chain("P1082", start="Q3"))
    assert isinstance(out, Reject) and out.reason == "undated_change", out
    assert out.detail == "hop 0: the question omits its date 2020"


def test_llm_regenerates_after_failed_validation():
    first, second = MAIN.replace("In which", "In what"), MAIN.replace("college", "school")
    responder = Responder([written(first), written(second), written()], RIGHT)
    with OpenAIStubServer(responder) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 8  # (write + failed answer) x 2, then write + 3 answers
        retry_user = server.bodies[2]["messages"][-1]["content"]
    assert isinstance(out, ChainQuestion) and out.attempts == 3 and out.question == MAIN
    assert f"An earlier attempt was rejected: the question {first!r} was answered 'unknown'" in retry_user


def test_llm_gives_up_after_three_failed_validations():
    wrong = dict(RIGHT, **{SUB1: "Norland"})  # the main question passes, the last sub-question does not
    with OpenAIStubServer(Responder([written()], wrong)) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 12
    assert isinstance(out, Reject)
    assert (out.stage, out.reason, out.key) == ("questions", "failed_validation", TWO_HOPS.id)
    assert out.extra["attempts"] == 3 and out.detail.count("sub-question 1") == 3
    assert (
        "answered 'Norland', expected 'Lisbrook'" in out.detail
        and json.loads(out.extra["raw"])["question"] == MAIN
    )


def test_llm_malformed_json_is_repaired_or_an_llm_error():
    with OpenAIStubServer(Responder(['{"question": "In which', written()], RIGHT)) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 5  # the client's one repair call, then three answers
    assert isinstance(out, ChainQuestion) and out.attempts == 1
    with OpenAIStubServer(Responder(['{"question": "In which'], RIGHT)) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 2  # no regeneration after a failed call
    assert isinstance(out, Reject) and out.reason == "llm_error"
    assert out.detail.startswith("mintqa_question: invalid structured output") and out.extra["raw"]


@pytest.mark.parametrize(
    ("reply", "detail"),
    [
        (written(subs=(SUB0,)), "1 sub-questions for 2 hops"),
        (written(subs=(SUB0, "  ")), "an empty question or sub-question"),
        (written(question=""), "an empty question or sub-question"),
    ],
)
def test_llm_off_schema_reply_is_bad_reply(reply, detail):
    with OpenAIStubServer(Responder([reply], RIGHT)) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 3  # rewritten, never answered
    assert isinstance(out, Reject) and out.reason == "bad_reply" and out.extra["attempts"] == 3
    assert f"attempt 3: {detail}" in out.detail


def test_llm_leak_then_good_question():
    leaky = "Is Lisbrook where the college Ada Vance attended is located?"
    with OpenAIStubServer(Responder([written(leaky), written()], RIGHT)) as server:
        out = run_llm(server, TWO_HOPS)
        assert server.requests == 5  # the leak is caught before any answer call
    assert isinstance(out, ChainQuestion) and out.attempts == 2
    with OpenAIStubServer(Responder([written(leaky)], RIGHT)) as server:
        out = run_llm(server, TWO_HOPS)
    assert isinstance(out, Reject) and out.reason == "answer_leak" and "'Lisbrook'" in out.detail


def test_llm_ambiguous_chain_makes_no_call():
    with OpenAIStubServer(Responder([written()], RIGHT)) as server:
        out = run_llm(server, chain("P17", start="Q7"))
        assert server.requests == 0
    assert isinstance(out, Reject) and out.reason == "ambiguous"


# --- generic wording and the length limit --------------------------------------------------------------


def test_generic_wording_takes_its_question_word_from_the_answer_type():
    human = statement("Q30", "P31", "Q5")
    located = statement("Q31", "P17", "Q4")
    headquartered = statement("Q32", "P159", "Q3")
    items = [
        WikidataEntity(id="Q30", kind="item", label="Mira Holt", statements=[human]),
        WikidataEntity(id="Q31", kind="item", label="Port Ellen", statements=[located]),
        WikidataEntity(id="Q32", kind="item", label="Holt & Co", statements=[headquartered]),
        WikidataEntity(id="Q5", kind="item", label="human"),
        WikidataEntity(id="Q33", kind="item", label="Harbour Festival", statements=[
            statement("Q33", "P9001", "Q30"), statement("Q33", "P9002", "Q31"),
            statement("Q33", "P9003", "Q32"), statement("Q33", "P9004", "Q5"),
        ]),
        *(WikidataEntity(id=p, kind="property", label=label) for p, label in
          [("P9001", "patron"), ("P9002", "venue"), ("P9003", "sponsor"), ("P9004", "audience")]),
    ]  # fmt: skip
    kb = KnowledgeBase([*(e for e in make_kb().entities.values()), *items])
    stage = WriteChainQuestions("rules", kb=kb)
    asked = {}
    for prop in ("P9001", "P9002", "P9003", "P9004"):
        hop = ChainHop(statement=kb.tails("Q33", prop)[0], popularity=0.0, popular=False)
        (out,) = stage.process(Chain(id=prop, hops=[hop]), StageContext(run_dir=Path(".")))
        asked[prop] = out.question
    assert asked == {
        "P9001": "Who is the patron of Harbour Festival?",
        "P9002": "Which place is the venue of Harbour Festival?",
        "P9003": "Which organisation is the sponsor of Harbour Festival?",
        "P9004": "What is the audience of Harbour Festival?",
    }


def test_a_question_over_the_word_limit_is_rejected(monkeypatch):
    monkeypatch.setattr("irbgen.wikidata.rules.questions.MAX_QUESTION_WORDS", 12)
    assert isinstance(rules(chain(*FOUR_HOPS[:1])), ChainQuestion)  # 5 words
    out = rules(chain(*FOUR_HOPS))
    assert isinstance(out, Reject) and out.reason == "too_long" and "over 12 words" in out.detail


def test_coarse_dates_and_unnamed_units_make_no_answer():
    decade = Value(type="time", text="1890s", raw="+1890-00-00T00:00:00Z", precision=8)
    # a unit that neither irbgen's table nor the base names, then one the table names
    odd_unit = Value(type="quantity", text="4", raw="+4", unit="Q999999")
    square_km = Value(type="quantity", text="4", raw="+4", unit="Q712226")
    reasons = [
        why_unusable(KB, statement("Q2", "P571", value)) for value in (decade, FOUNDED, odd_unit, square_km)
    ]
    assert reasons == ["coarse_date", None, "no_unit_label", None]

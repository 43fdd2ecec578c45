"""The question stage: rules realisation of hand-built plans (every answer type, subjects, dates, 2 and 3
hops, node changes), answer leaks, the uniqueness index, rules rejects, and the llm backend end to end
through a loopback OpenAI-compatible server (valid run, repair, off-schema reply, check, leak)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from irbgen.errors import BadInputError
from irbgen.irb.questions import UniquenessIndex, WriteQuestions, plan_rows, relation_key
from irbgen.irb.records import GeneratedQuestion, KnowledgeGraph, NodeChange, PlanHop, QuestionPlan, Triple
from irbgen.irb.rules.questions import NodeNotFound, realize_plan, tidy_question
from irbgen.llm.client import LLMClient
from irbgen.llm.settings import LLMSettings
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.testing import OpenAIStubServer
from irbgen.text import contains_answer, is_question

CONTEXT = StageContext(run_dir=Path("."))


def triple(head: str, head_type: str, relation: str, tail: str, tail_type: str) -> Triple:
    return Triple(head=head, head_type=head_type, relation=relation, tail=tail, tail_type=tail_type)


def hop(
    text: str | list[str],
    answer: str,
    answer_type: str,
    *,
    bridge: str | None = None,
    triples: tuple[Triple, ...] = (),
    fact: str = "f",
) -> PlanHop:
    return PlanHop(
        fact_id=fact,
        keypoints=[text] if isinstance(text, str) else text,
        triples=list(triples),
        answer=answer,
        answer_type=answer_type,
        answer_label=SPACY_LABELS.get(answer_type),
        bridge=bridge,
        documents=[f"d-{fact}"],
    )


SPACY_LABELS = {
    "Person": "PERSON",
    "Organization": "ORG",
    "Date": "DATE",
    "Location": "GPE",
    "Quantity": "CARDINAL",
}


def plan(*hops: PlanHop, changes: tuple[NodeChange, ...] = (), kind: str | None = None) -> QuestionPlan:
    kind = kind or ("multi_hop" if len(hops) > 1 else "single_hop")
    return QuestionPlan(id="q1", kind=kind, hops=list(hops), changes=list(changes))


def ask(text: str, answer: str, answer_type: str) -> str:
    return realize_plan(plan(hop(text, answer, answer_type))).question


# --- rules realisation -------------------------------------------------------------------------------

JOINED = "Ilse Marrow joined Halden & Rusk in 2007."
DESIGNED = "The Vellmouth Harbour Bridge was designed by the engineering firm Halden & Rusk."
OPENED = "The Vellmouth Harbour Bridge opened to traffic on 12 March 2024 after four years of construction."


@pytest.mark.parametrize(
    ("text", "answer", "answer_type", "expected"),
    [
        ("Ilse Marrow led the foundation design of the Vellmouth Harbour Bridge.", "Ilse Marrow", "Person",
         "Who led the foundation design of the Vellmouth Harbour Bridge?"),
        ("The bridge was opened by Anne Roe in 2024.", "Anne Roe", "Person",
         "The bridge was opened by whom in 2024?"),
        ("In 2024 the Institution of Vellshire Engineers awarded Marrow its Gold Medal.", "Marrow", "Person",
         "The Institution of Vellshire Engineers awarded whom its Gold Medal in 2024?"),
        ("Ilse Marrow's firm designed the bridge.", "Ilse Marrow", "Person",
         "Whose firm designed the bridge?"),
        ("Engineer Ilse Marrow led the foundation design.", "Ilse Marrow", "Person",
         "Which engineer led the foundation design?"),
        (JOINED, "Halden & Rusk", "Organization", "Ilse Marrow joined which organization in 2007?"),
        (DESIGNED, "Halden & Rusk", "Organization",
         "The Vellmouth Harbour Bridge was designed by which engineering firm?"),
        ("Marrow was born in Vellmouth.", "Vellmouth", "Location", "Marrow was born in which place?"),
        ("The railway reached Vellmouth in 1871.", "Vellmouth", "Location",
         "The railway reached which place in 1871?"),
        ("The bridge was opened by Anne Roe in France.", "France", "Country",
         "The bridge was opened by Anne Roe in which country?"),
        ("Brightwater employed 240 people in 2024.", "240", "Quantity",
         "Brightwater employed how many people in 2024?"),
        ("The museum attracts about 60,000 visitors a year.", "60,000", "Quantity",
         "The museum attracts how many visitors a year?"),
        ("Vellmouth had a population of 18,400 at the 2023 census.", "18,400", "Quantity",
         "Vellmouth had what population at the 2023 census?"),
        ("The project cost £212 million.", "£212 million", "Quantity", "The project cost what amount?"),
        ("The bridge has a main span of 310 m.", "310", "Quantity", "The bridge has what main span?"),
        ("The wall was raised by 1.2 m along the front.", "1.2", "Quantity",
         "The wall was raised by what amount along the front?"),
        ("The deck carries four traffic lanes.", "four", "Quantity",
         "The deck carries how many traffic lanes?"),
        ("Three graduates founded the company.", "Three", "Quantity",
         "How many graduates founded the company?"),
        (OPENED, "Vellmouth Harbour Bridge", "Other",
         "What opened to traffic on 12 March 2024 after four years of construction?"),
        ("Ilse Marrow wrote Piles in Chalk in 2006.", "Piles in Chalk", "Work",
         "Ilse Marrow wrote what in 2006?"),
    ],
)  # fmt: skip
def test_realisation_per_answer_type(text, answer, answer_type, expected):
    assert ask(text, answer, answer_type) == expected


def test_masked_subject_and_object_of_one_keypoint():
    text = "The Institution of Vellshire Engineers awarded Ilse Marrow the Gold Medal."
    assert ask(text, "Institution of Vellshire Engineers", "Organization") == (
        "Which organization awarded Ilse Marrow the Gold Medal?"
    )
    assert (
        ask(text, "Ilse Marrow", "Person")
        == "The Institution of Vellshire Engineers awarded whom the Gold Medal?"
    )


@pytest.mark.parametrize(
    ("text", "answer", "expected"),
    [
        ("The railway reached Vellmouth in 1871.", "1871", "The railway reached Vellmouth in what year?"),
        (OPENED, "12 March 2024",
         "The Vellmouth Harbour Bridge opened to traffic on what date after four years of construction?"),
        ("The char population has declined since the 1990s.", "the 1990s",
         "The char population has declined since when?"),
        ("The festival moved to the gardens in May 2009.", "May 2009",
         "The festival moved to the gardens in what month and year?"),
        ("Ilse Marrow (born 1979) is a structural engineer.", "1979",
         "Ilse Marrow (born what year) is a structural engineer?"),
        ("In 2024, the Institution of Vellshire Engineers awarded Marrow its Gold Medal.", "2024",
         "The Institution of Vellshire Engineers awarded Marrow its Gold Medal in what year?"),
        ("Services ended after 1963.", "1963", "Services ended after what year?"),
        ("The lake formed long ago when a moraine dammed the valley.", "long ago",
         "The lake formed at what time when a moraine dammed the valley?"),
    ],
)  # fmt: skip
def test_date_questions_follow_the_span_and_its_preposition(text, answer, expected):
    assert ask(text, answer, "Date") == expected


def test_two_hops_nest_the_first_answer_as_a_relative_clause():
    first = hop(JOINED, "Halden & Rusk", "Organization", fact="a")
    second = hop(DESIGNED, "Vellmouth Harbour Bridge", "Other", bridge="Halden & Rusk", fact="b")
    result = realize_plan(plan(first, second))
    assert result.sub_questions == (
        "Ilse Marrow joined which organization in 2007?",
        "What was designed by the engineering firm that Ilse Marrow joined in 2007?",
    )
    assert result.question == result.sub_questions[-1]


def test_three_hops_nest_twice_and_take_the_keypoint_holding_both_nodes():
    first = hop(["Ilse Marrow was born in 1979.", JOINED], "Halden & Rusk", "Organization", fact="a")
    second = hop(DESIGNED, "Vellmouth Harbour Bridge", "Other", bridge="Halden & Rusk", fact="b")
    third = hop(
        ["The bridge is long.", OPENED], "12 March 2024", "Date", bridge="Vellmouth Harbour Bridge", fact="c"
    )
    result = realize_plan(plan(first, second, third))
    assert len(result.sub_questions) == 3
    assert result.question == (
        "The thing that was designed by the engineering firm that Ilse Marrow joined in 2007 opened to "
        "traffic on what date after four years of construction?"
    )


def test_person_bridge_and_date_description():
    first = hop("Ilse Marrow led the foundation design of the bridge.", "Ilse Marrow", "Person", fact="a")
    second = hop("Marrow was born in Vellmouth.", "Vellmouth", "Location", bridge="Marrow", fact="b")
    third = hop("The railway reached Vellmouth in 1871.", "1871", "Date", bridge="Vellmouth", fact="c")
    fourth = hop(
        "The Copse line opened in 1871 to carry slate.", "Copse line", "Other", bridge="1871", fact="d"
    )
    result = realize_plan(plan(first, second, third, fourth))
    assert result.sub_questions[1] == (
        "The person who led the foundation design of the bridge was born in which place?"
    )
    assert result.sub_questions[2] == (
        "The railway reached the place where the person who led the foundation design of the bridge was "
        "born in what year?"
    )
    assert result.question.startswith("What opened in the year in which the railway reached the place where")


def test_a_possessive_bridge_becomes_an_of_phrase():
    robots = "Brightwater Robotics builds underwater robots."
    first = hop(robots, "Brightwater Robotics", "Organization", fact="a")
    second = hop(
        "Brightwater Robotics' largest customer is the Skarra Wind Farm.", "Skarra Wind Farm", "Other",
        bridge="Brightwater Robotics", fact="b",
    )  # fmt: skip
    assert realize_plan(plan(first, second)).question == (
        "The largest customer of the organization that builds underwater robots is what?"
    )


def test_changes_apply_to_unmasked_nodes_also_inside_descriptions():
    initials = NodeChange(
        node="Ilse Marrow", node_type="Person", replacement="I. Marrow", kind="paraphrase", rule="initials"
    )
    first = hop(JOINED, "Halden & Rusk", "Organization", fact="a")
    second = hop(DESIGNED, "Vellmouth Harbour Bridge", "Other", bridge="Halden & Rusk", fact="b")
    result = realize_plan(plan(first, second, changes=(initials,)))
    assert result.sub_questions[0] == "I. Marrow joined which organization in 2007?"
    assert "the engineering firm that I. Marrow joined in 2007" in result.question
    false = NodeChange(node="2007", node_type="Date", replacement="2011", kind="false_premise", rule="year")
    premise = realize_plan(plan(hop(JOINED, "Halden & Rusk", "Organization"), changes=(false,)))
    assert premise.question == "Ilse Marrow joined which organization in 2011?"
    relative = NodeChange(node="2007", node_type="Date", replacement="18 years ago", kind="paraphrase",
                          rule="relative_date")  # fmt: skip
    paraphrased = realize_plan(plan(hop(JOINED, "Halden & Rusk", "Organization"), changes=(relative,)))
    assert paraphrased.question == "Ilse Marrow joined which organization 18 years ago?"
    fronted = "In 2007 Ilse Marrow joined Halden & Rusk."  # moved to the end before the change
    paraphrased = realize_plan(plan(hop(fronted, "Halden & Rusk", "Organization"), changes=(relative,)))
    assert paraphrased.question == "Ilse Marrow joined which organization 18 years ago?"
    # a change never rewrites the masked node itself
    masked = NodeChange(
        node="Halden & Rusk", node_type="Organization", replacement="HR", kind="paraphrase", rule="x"
    )
    assert (
        "HR"
        not in realize_plan(plan(hop(JOINED, "Halden & Rusk", "Organization"), changes=(masked,))).question
    )


def test_missing_nodes_raise_node_not_found():
    with pytest.raises(NodeNotFound, match="hop 0: the answer 'Brightwater'"):
        realize_plan(plan(hop(JOINED, "Brightwater", "Organization")))
    first = hop(JOINED, "Halden & Rusk", "Organization")
    second = hop(OPENED, "12 March 2024", "Date", bridge="Halden & Rusk")
    with pytest.raises(NodeNotFound, match="hop 1: the bridge 'Halden & Rusk'"):
        realize_plan(plan(first, second))


def test_tidy_question():
    assert tidy_question("  who  led the the design .  ") == "Who led the design?"
    assert tidy_question("what opened ( in 2024 ) ??") == "What opened (in 2024)?"
    assert tidy_question(" . ") == ""


# --- answer leaks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "answer", "answer_type", "leaks"),
    [
        ("Did Ilse Marrow join Halden and Rusk?", "Halden & Rusk", "Organization", True),
        ("Which firm did THE Halden & Rusk, hire?", "the Halden & Rusk", "Organization", True),
        ("Which place had 18400 people?", "18,400", "Quantity", True),
        ("Did the project cost 212 million pounds?", "£212 million", "Quantity", True),
        ("Did Brightwater employ two hundred and forty people?", "240", "Quantity", True),
        ("What happened on 12 March in 2024?", "12 March 2024", "Date", True),
        ("What happened in March 2024?", "12 March 2024", "Date", False),
        ("Who joined in 20071?", "2007", "Date", False),
        ("Who did I. Marrow advise?", "Ilse Marrow", "Person", True),
        ("Who did I. Marrow advise?", "Ilse Marrow", "Organization", False),
        ("Who designed the Marrowfield dam?", "Ilse Marrow", "Person", False),
        ("Who led the foundation design?", "Ilse Marrow", "Person", False),
        ("Who led it?", "the", "Other", False),
    ],
)  # fmt: skip
def test_contains_answer(question, answer, answer_type, leaks):
    assert contains_answer(question, answer, answer_type) is leaks


def test_is_question():
    assert is_question("Who led the design?")
    assert not is_question("Who led the design.")
    assert not is_question("Which organization?")
    assert not is_question("   ")


# --- uniqueness index --------------------------------------------------------------------------------


def graph(fact_id: str, *triples: Triple) -> KnowledgeGraph:
    return KnowledgeGraph(fact_id=fact_id, triples=list(triples), coverage=1.0, method="rules")


JOIN_HR = triple("Ilse Marrow", "Person", "joined", "Halden & Rusk", "Organization")


def test_relation_key_ignores_auxiliaries_articles_and_inflection():
    assert relation_key("was designed by") == relation_key("designed by") == "design by"
    assert relation_key("Joined") == relation_key("joins")
    assert relation_key("founded") != relation_key("joined")


def test_uniqueness_index_finds_a_second_node_of_the_same_type():
    other = triple("Ilse Marrow", "Person", "has joined", "Brightwater Robotics", "Organization")
    index = UniquenessIndex([graph("a", JOIN_HR), graph("b", other)])
    assert len(index) == 2
    (clash,) = index.conflicts("a", JOIN_HR, "tail")
    assert (clash.fact_id, clash.node) == ("b", "Brightwater Robotics")
    assert "'Brightwater Robotics' fits too" in str(clash) and "in fact b" in str(clash)
    # the head slot (who joined Halden & Rusk?) is unique: the other fact's tail differs
    assert index.conflicts("a", JOIN_HR, "head") == []


@pytest.mark.parametrize(
    "other",
    [
        triple("Ilse Marrow", "Person", "joined", "Halden and Rusk", "Organization"),  # same node, spelt out
        triple("Ilse Marrow", "Person", "founded", "Brightwater Robotics", "Organization"),  # other relation
        triple("Ilse Marrow", "Person", "joined", "2016", "Date"),  # other type
        triple("Anne Roe", "Person", "joined", "Brightwater Robotics", "Organization"),  # other head
    ],
)
def test_uniqueness_index_unique_cases(other):
    index = UniquenessIndex([graph("a", JOIN_HR), graph("b", other)])
    assert index.conflicts("a", JOIN_HR, "tail") == []


def test_uniqueness_index_checks_the_hops_own_graph_and_person_surnames():
    trout = triple("Anglers", "Person", "catch", "brown trout", "Other")
    char = triple("Anglers", "Person", "catch", "Arctic char", "Other")
    (clash,) = UniquenessIndex().ambiguities(
        hop("Anglers catch brown trout.", "brown trout", "Other", triples=(trout, char))
    )
    assert clash.node == "Arctic char"
    led = triple("Ilse Marrow", "Person", "led", "foundation design", "Other")
    same_person = triple("Marrow", "Person", "led", "foundation design", "Other")
    index = UniquenessIndex([graph("b", same_person)])
    assert (
        index.ambiguities(
            hop("Ilse Marrow led the foundation design.", "Ilse Marrow", "Person", triples=(led,))
        )
        == []
    )


# --- the rules stage ---------------------------------------------------------------------------------


def run_rules(stage: WriteQuestions, record: QuestionPlan) -> GeneratedQuestion | Reject:
    (out,) = stage.process(record, CONTEXT)
    return out


def test_rules_stage_writes_a_question_and_its_contract():
    stage = WriteQuestions(prompt_dir="/nonexistent/prompts")  # no I/O until an llm call needs a prompt
    assert (stage.name, stage.input_model, stage.output_model) == (
        "questions",
        QuestionPlan,
        GeneratedQuestion,
    )
    record = plan(hop(JOINED, "Halden & Rusk", "Organization", triples=(JOIN_HR,)))
    assert stage.key(record) == "q1"
    out = run_rules(stage, record)
    assert isinstance(out, GeneratedQuestion)
    assert out.question == "Ilse Marrow joined which organization in 2007?"
    assert out.sub_questions == [out.question] and out.steps == [] and out.method == "rules"
    assert out.prompts == [] and out.model is None
    assert asyncio.run(stage.aprocess(record, CONTEXT)) == [out]
    with pytest.raises(BadInputError, match=r"unknown backend 'gpt' \(choose from: llm, rules\)"):
        WriteQuestions("gpt")
    with pytest.raises(TypeError, match="aprocess"):
        WriteQuestions("llm").process(record, CONTEXT)


def test_rules_stage_rejects():
    stage = WriteQuestions(
        graphs=[graph("a", JOIN_HR), graph("b", JOIN_HR.model_copy(update={"tail": "Brightwater"}))]
    )

    def reject(record: QuestionPlan) -> Reject:
        out = run_rules(stage, record)
        assert isinstance(out, Reject) and out.stage == "questions" and out.key == "q1", out
        return out

    out = reject(plan(hop(JOINED, "Brightwater", "Organization", fact="a")))
    assert out.reason == "node_not_found" and "the answer 'Brightwater'" in out.detail

    out = reject(plan(hop(JOINED, "Halden & Rusk", "Organization", triples=(JOIN_HR,), fact="a")))
    assert out.reason == "not_unique" and out.detail == (
        "hop 0: 'Brightwater' fits too: (Ilse Marrow; joined; Brightwater) in fact b"
    )

    twice = "Halden & Rusk hired Ilse Marrow, who joined Halden & Rusk in 2007."
    out = reject(plan(hop(twice, "Halden & Rusk", "Organization", fact="c")))
    assert (
        out.reason == "answer_leak" and "sub-question 0 contains its own answer 'Halden & Rusk'" in out.detail
    )

    out = reject(plan(hop("Ilse Marrow was hired by Marrow & Co.", "Ilse Marrow", "Person", fact="c")))
    assert out.reason == "answer_leak"  # the surname gives the person away

    first = hop(JOINED, "Halden & Rusk", "Organization", fact="c")
    second = hop(
        "Halden & Rusk designed the bridge, and Halden & Rusk is based in Vellmouth.",
        "Vellmouth", "Location", bridge="Halden & Rusk", fact="d",
    )  # fmt: skip
    out = reject(plan(first, second))
    assert out.reason == "answer_leak" and "sub-question 1 contains hop 0's answer" in out.detail

    out = reject(plan(hop("Halden & Rusk.", "Halden & Rusk", "Organization", fact="c")))
    assert out.reason == "bad_question" and "'Which organization?'" in out.detail


def test_rules_false_premise_question_keeps_the_perturbed_node():
    change = NodeChange(node="Ilse Marrow", node_type="Person", replacement="C. Smith", kind="false_premise",
                        rule="other_surname")  # fmt: skip
    record = plan(hop(JOINED, "Halden & Rusk", "Organization"), changes=(change,), kind="false_premise")
    out = run_rules(WriteQuestions(), record)
    assert (
        isinstance(out, GeneratedQuestion) and out.question == "C. Smith joined which organization in 2007?"
    )


# --- llm backend through a real loopback server ------------------------------------------------------

DESIGN_TRIPLE = triple(
    "Vellmouth Harbour Bridge", "Other", "was designed by", "Halden & Rusk", "Organization"
)
PARTNER = triple("Ilse Marrow", "Person", "became a partner in", "2016", "Date")
INITIALS = NodeChange(node="Ilse Marrow", node_type="Person", replacement="I. Marrow", kind="paraphrase",
                      rule="initials")  # fmt: skip


def two_hop_plan() -> QuestionPlan:
    first = hop(JOINED, "Halden & Rusk", "Organization", triples=(PARTNER, JOIN_HR), fact="a")
    second = hop(DESIGNED, "Vellmouth Harbour Bridge", "Other", bridge="Halden & Rusk",
                 triples=(DESIGN_TRIPLE,), fact="b")  # fmt: skip
    return plan(first, second, changes=(INITIALS,))


def first_user(request: dict[str, Any]) -> str:
    return next(message["content"] for message in request["messages"] if message["role"] == "user")


def responder(
    *, unique: bool = True, refined: str | None = None, broken_first: bool = False, step_reply=None
):
    """Answers each prompt from the request: numbered step questions, a verdict, a polished question."""
    state = {"calls": 0}

    def respond(request: dict[str, Any]) -> str:
        state["calls"] += 1
        if broken_first and state["calls"] == 1:
            return '{"question": "Which'
        user = first_user(request)
        if "Next triple:" in user:
            if step_reply is not None:
                return step_reply
            number = len(re.findall(r"^\d+\. ", user, flags=re.M)) + 1
            target = re.search(r"must ask for: (\?x\d)", user).group(1)
            return json.dumps({"question": f"Which node is {target.replace('?', '')} after step {number}?"})
        if "Question to check:" in user:
            return json.dumps({"unique": unique, "reason": "ok" if unique else "many bridges fit"})
        question = re.search(r"Question to polish: (.+)", user).group(1)
        return json.dumps({"question": refined or f"{question[:-1]}, polished?"})

    return respond


def settings_for(server: OpenAIStubServer) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, model="stub", timeout=2.0, max_retries=1, backoff_base=0.01,
                       backoff_max=0.02)  # fmt: skip


def run_llm(server: OpenAIStubServer, record: QuestionPlan) -> GeneratedQuestion | Reject:
    async def go() -> list[GeneratedQuestion | Reject]:
        async with LLMClient(settings_for(server)) as client:
            return await WriteQuestions("llm").aprocess(record, StageContext(run_dir=Path("."), llm=client))

    (out,) = asyncio.run(go())
    return out


def test_plan_rows_order_hops_put_the_masked_triple_first_and_mask_with_variables():
    assert plan_rows(two_hop_plan()) == [
        (0, "(I. Marrow [Person]; joined; ?x0 [Organization])"),
        (0, "(I. Marrow [Person]; became a partner in; 2016 [Date])"),
        (1, "(?x1 [Other]; was designed by; ?x0 [Organization])"),
    ]


def test_llm_valid_run_one_call_per_triple_then_check_and_refine():
    with OpenAIStubServer(responder()) as server:
        out = run_llm(server, two_hop_plan())
        assert server.requests == 3 + 2
        users = [first_user(body) for body in server.bodies]
    assert isinstance(out, GeneratedQuestion), out
    assert out.steps == [
        "Which node is x0 after step 1?",
        "Which node is x0 after step 2?",
        "Which node is x1 after step 3?",
    ]
    assert out.sub_questions == ["Which node is x0 after step 2?", "Which node is x1 after step 3, polished?"]
    assert out.question == out.sub_questions[-1] and out.method == "llm" and out.model == "stub"
    assert [(p.name, p.version) for p in out.prompts] == [
        ("irb_question_step", "4"), ("irb_question_check", "2"), ("irb_question_refine", "5")
    ]  # fmt: skip
    assert "Next triple: (I. Marrow [Person]; joined; ?x0 [Organization])" in users[0]
    assert "Question so far: (none yet)" in users[0] and "Unknown nodes: ?x0 (Organization)" in users[0]
    assert "1. (I. Marrow [Person]; joined; ?x0 [Organization]) -> Which node is x0 after step 1?" in users[1]
    assert "The question must ask for: ?x1" in users[2] and "?x0 (Organization), ?x1 (Other)" in users[2]
    assert "Question so far: Which node is x0 after step 2?" in users[2]
    assert not any("Halden" in user or "Ilse" in user for user in users[:3])  # masked and changed nodes
    assert "expected answer is: Vellmouth Harbour Bridge" in users[3]
    assert "Question to polish: Which node is x1 after step 3?" in users[4]


def test_llm_malformed_json_is_repaired():
    with OpenAIStubServer(responder(broken_first=True)) as server:
        out = run_llm(server, two_hop_plan())
        assert server.requests == 3 + 2 + 1
    assert isinstance(out, GeneratedQuestion) and out.steps[0] == "Which node is x0 after step 1?"


def test_llm_off_schema_reply_is_an_llm_error_with_the_raw_reply():
    with OpenAIStubServer(responder(step_reply=json.dumps({"text": "Which firm?"}))) as server:
        out = run_llm(server, two_hop_plan())
        assert server.requests == 2  # the call and its one repair
    assert isinstance(out, Reject) and (out.stage, out.reason, out.key) == ("questions", "llm_error", "q1")
    assert (
        out.detail.startswith("step 1 of 3: invalid structured output") and "Which firm?" in out.extra["raw"]
    )


def test_llm_check_saying_not_unique_is_a_reject():
    with OpenAIStubServer(responder(unique=False)) as server:
        out = run_llm(server, two_hop_plan())
        assert server.requests == 3 + 1  # no refinement after a failed check
    assert isinstance(out, Reject) and (out.reason, out.detail) == ("not_unique", "many bridges fit")


def test_llm_refined_question_that_leaks_the_answer_is_dropped():
    leaky = "Which bridge, the Vellmouth Harbour Bridge, did the firm design?"
    with OpenAIStubServer(responder(refined=leaky)) as server:
        out = run_llm(server, two_hop_plan())
    assert isinstance(out, Reject) and out.reason == "answer_leak"
    assert "sub-question 1 contains its own answer 'Vellmouth Harbour Bridge'" in out.detail


def test_llm_step_that_is_not_a_question_and_plans_without_the_masked_triple():
    with OpenAIStubServer(responder(step_reply=json.dumps({"question": "  "}))) as server:
        out = run_llm(server, two_hop_plan())
    assert isinstance(out, Reject) and out.reason == "bad_question"
    no_triple = plan(hop(JOINED, "Halden & Rusk", "Organization", triples=(PARTNER,)))
    with OpenAIStubServer(responder()) as server:
        out = run_llm(server, no_triple)
        assert server.requests == 0
    assert isinstance(out, Reject) and out.reason == "node_not_found"
    assert out.detail == "hop 0: no triple holds the answer 'Halden & Rusk'"
    with pytest.raises(BadInputError, match="needs an LLM client"):
        asyncio.run(WriteQuestions("llm").aprocess(two_hop_plan(), CONTEXT))

"""The llm backend faces the rules backend's gates, through a real loopback OpenAI-compatible server: a
question failing a gate is refined once, told the gate, then kept or rejected with the gate's reason;
the prompts carry a bad -> good example of each failure class; the keypoint gates judge llm keypoints
(no refine prompt there: rejected at once)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from irbgen.irb.gates import keypoint_failure, question_failure
from irbgen.irb.keypoints import KEYPOINT_PROMPT, MakeKeypoints
from irbgen.irb.questions import REFINE_PROMPT, STEP_PROMPT, WriteQuestions
from irbgen.irb.records import GeneratedQuestion, Keypoint, NodeChange, PlanHop, QuestionPlan, Triple
from irbgen.llm.prompts import load_prompt
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.testing import OpenAIStubServer
from irbgen.testing.stages import replies, run_llm_stage
from irbgen.wikipedia.records import Citation, Segment
from irbgen.wikipedia.stages import load_parser


def triple(head: str, head_type: str, relation: str, tail: str, tail_type: str) -> Triple:
    return Triple(head=head, head_type=head_type, relation=relation, tail=tail, tail_type=tail_type)


TESSALY = "Tessaly Ferry Company"
FERRY = PlanHop(
    fact_id="a",
    keypoints=["The Tessaly Ferry Company began a ferry service to Lake Orin in 1962."],
    triples=[triple(TESSALY, "Organization", "began", "a ferry service to Lake Orin", "Other"),
             triple(TESSALY, "Organization", "began a ferry service in", "1962", "Date")],
    answer=TESSALY,
    answer_type="Organization",
    answer_label="ORG",
    documents=["d-a"],
)  # fmt: skip
SINGLE = QuestionPlan(id="s1", kind="single_hop", hops=[FERRY])
GOOD = "Which company began a ferry service to Lake Orin in 1962?"

FOUNDED = PlanHop(
    fact_id="b",
    keypoints=["Ana Ruiz founded Lantern Studio in 2003."],
    triples=[triple("Ana Ruiz", "Person", "founded", "Lantern Studio", "Organization"),
             triple("Ana Ruiz", "Person", "founded in", "2003", "Date")],
    answer="Lantern Studio",
    answer_type="Organization",
    answer_label="ORG",
    documents=["d-b"],
)  # fmt: skip
BASED = PlanHop(
    fact_id="c",
    keypoints=["Lantern Studio is based in Brennholt."],
    triples=[triple("Lantern Studio", "Organization", "is based in", "Brennholt", "Location")],
    answer="Brennholt",
    answer_type="Location",
    answer_label="GPE",
    bridge="Lantern Studio",
    documents=["d-c"],
)
MULTI = QuestionPlan(id="m1", kind="multi_hop", hops=[FOUNDED, BASED])
INNER_GOOD = "Which studio did Ana Ruiz found in 2003?"
FINAL_GOOD = "In which town is the studio that Ana Ruiz founded in 2003 based?"

PROBLEM = "Problem found by irbgen's checks: "


def user_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def system_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "system")


def kind(request: dict[str, Any]) -> str:
    """Which prompt a request is: step, check, polish (a refine told no problem) or fix (told one)."""
    text = user_text(request)
    if "Next triple:" in text:
        return "step"
    if "Question to check:" in text:
        return "check"
    return "polish" if PROBLEM + "(none)" in text else "fix"


def responder(steps: list[str], polished: str, fixes: list[str]) -> Callable[[dict[str, Any]], str]:
    """Step n gets steps[n-1], the check says unique, the polish gets `polished`, each fix the next of
    `fixes` (the last repeats)."""
    queue = list(fixes)

    def respond(request: dict[str, Any]) -> str:
        text = user_text(request)
        if kind(request) == "step":
            number = len(re.findall(r"^\d+\. ", text, flags=re.M))
            return json.dumps({"question": steps[number]})
        if kind(request) == "check":
            return json.dumps({"unique": True, "reason": "one firm fits"})
        if kind(request) == "polish":
            return json.dumps({"question": polished})
        return json.dumps({"question": queue.pop(0) if len(queue) > 1 else queue[0]})

    return respond


def run(plan: QuestionPlan, respond: Callable[[dict[str, Any]], str]) -> tuple[Any, list[dict[str, Any]]]:
    """The stage's one output and the requests the server saw, in order."""
    with OpenAIStubServer(respond) as server:
        out = run_llm_stage(WriteQuestions("llm"), plan, server.base_url)
        assert server.requests == len(server.bodies)
        return out, list(server.bodies)


# --- a failed gate: one refinement told the gate, then kept or rejected ---------------------------------

FAILING = [
    ("question_wh_outside_main_clause",
     "Ferries on Lake Orin were run by Orin County until which company began a service in 1962?"),
    ("question_unresolved_reference", "Which company began the service in 1962?"),
    ("wh_mismatch", "Who began a ferry service to Lake Orin in 1962?"),
    ("answer_leak", "Which company, the Tessaly Ferry Company, began a ferry service to Lake Orin in 1962?"),
]  # fmt: skip


@pytest.mark.parametrize(("gate", "bad"), FAILING, ids=[gate for gate, _ in FAILING])
def test_a_question_failing_a_gate_is_refined_once_told_the_gate_and_kept_when_fixed(gate, bad):
    out, requests = run(SINGLE, responder([bad, bad], bad, [GOOD]))
    assert [kind(r) for r in requests] == ["step", "step", "check", "polish", "fix"]
    assert isinstance(out, GeneratedQuestion), out
    assert out.question == GOOD and out.sub_questions == [GOOD] and out.steps == [bad, bad]
    fix = user_text(requests[-1])
    assert f"Question to polish: {bad}\n" in fix and "which must not appear in the question: Tessaly" in fix
    assert f"{PROBLEM}{gate}: sub-question 0" in fix
    assert "(?x0 [Organization]; began a ferry service in; 1962 [Date])" in fix  # the triples, masked


@pytest.mark.parametrize(("gate", "bad"), FAILING, ids=[gate for gate, _ in FAILING])
def test_a_question_still_failing_after_its_refinement_is_rejected_naming_the_gate(gate, bad):
    out, requests = run(SINGLE, responder([bad, bad], bad, [bad]))
    assert [kind(r) for r in requests] == ["step", "step", "check", "polish", "fix"]  # exactly one fix
    assert isinstance(out, Reject) and (out.stage, out.key, out.reason) == ("questions", "s1", gate)
    assert out.detail.startswith("sub-question 0") and out.detail.endswith(bad)
    assert out.extra["refined_after"] == gate and out.extra["before_refine"] == bad


def test_a_refinement_that_trades_one_failure_for_another_is_rejected_by_the_second():
    clause, wrong_word = FAILING[0][1], FAILING[2][1]
    out, requests = run(SINGLE, responder([GOOD, GOOD], clause, [wrong_word, GOOD]))
    assert [kind(r) for r in requests] == ["step", "step", "check", "polish", "fix"]
    assert isinstance(out, Reject) and out.reason == "wh_mismatch"
    assert out.extra["refined_after"] == "question_wh_outside_main_clause"
    assert out.extra["before_refine"] == clause


def test_a_failing_inner_sub_question_is_refined_with_its_own_answer_and_triples():
    inner_bad = "Which studio did she found in 2003?"
    steps = ["Which studio did Ana Ruiz found?", inner_bad, FINAL_GOOD]
    out, requests = run(MULTI, responder(steps, FINAL_GOOD, [INNER_GOOD]))
    assert [kind(r) for r in requests] == ["step"] * 3 + ["check", "polish", "fix"]
    assert isinstance(out, GeneratedQuestion), out
    assert out.sub_questions == [INNER_GOOD, FINAL_GOOD] and out.question == FINAL_GOOD
    fix = user_text(requests[-1])
    assert (
        f"Question to polish: {inner_bad}\n" in fix
        and "must not appear in the question: Lantern Studio" in fix
    )
    assert f"{PROBLEM}question_unresolved_reference: sub-question 0" in fix
    assert "(Ana Ruiz [Person]; founded; ?x0 [Organization])" in fix and "?x1" not in fix  # hop 0's only


def test_each_failing_sub_question_gets_its_own_single_refinement():
    inner_bad, final_bad = "Which studio did she found in 2003?", FAILING[0][1]
    steps = [INNER_GOOD, inner_bad, final_bad]
    out, requests = run(MULTI, responder(steps, final_bad, [INNER_GOOD, final_bad]))
    assert [kind(r) for r in requests] == ["step"] * 3 + ["check", "polish", "fix", "fix"]
    assert isinstance(out, Reject) and out.reason == "question_wh_outside_main_clause"
    assert out.detail.startswith("sub-question 1") and out.extra["before_refine"] == final_bad


def test_a_false_premise_dropped_by_the_polish_is_refined_once_and_named():
    moved = NodeChange(node="1962", node_type="Date", replacement="1965", kind="false_premise", rule="year")
    plan = QuestionPlan(id="f1", kind="false_premise", hops=[FERRY], changes=[moved])
    false = "Which company began a ferry service to Lake Orin in 1965?"
    out, requests = run(plan, responder([false, false], GOOD, [false]))
    assert [kind(r) for r in requests] == ["step", "step", "check", "polish", "fix"]
    assert "began a ferry service in; 1965 [Date])" in user_text(requests[1])  # the steps see the change
    assert f"{PROBLEM}false_premise_lost: the false detail '1965' is not in the question" in user_text(
        requests[-1]
    )
    assert isinstance(out, GeneratedQuestion) and out.question == false


def test_a_question_passing_the_gates_gets_no_extra_refinement():
    out, requests = run(SINGLE, responder([GOOD, GOOD], GOOD, ["never asked?"]))
    assert [kind(r) for r in requests] == ["step", "step", "check", "polish"]
    assert isinstance(out, GeneratedQuestion) and out.question == GOOD


# --- the prompts carry an example of each failure class --------------------------------------------------

QUESTION_PAIR = re.compile(r'"([^"]+\?)"[^"]*?->\s*"([^"]+\?)"')
STATEMENT_PAIR = re.compile(r'"([^"]+\.)"[^"]*?->\s*"([^"]+\.)"')
CLASSES = {
    "not self-contained": ("Not self-contained",),
    "not a well-formed question": (
        "Not a well-formed question", "No inversion", "A question word inside", "Two sentences",
        "A list cut short", "A tense broken by a relative date",
    ),
    "answer not unique or a fragment of a name": ("More than one answer",),
    "wrong question word": ("The wrong question word",),
    "false premise still true": ("false premise",),
}  # fmt: skip
LABELS = ("PERSON", "ORG", "GPE", "DATE", "CARDINAL", "MONEY", "WORK_OF_ART", None)


def test_the_prompts_sent_carry_a_bad_and_good_example_of_each_failure_class():
    out, requests = run(SINGLE, responder([FAILING[0][1]] * 2, FAILING[0][1], [GOOD]))
    assert isinstance(out, GeneratedQuestion)
    sent = {kind(r): system_text(r) for r in requests}
    for prompt in ("step", "fix"):
        for name, markers in CLASSES.items():
            missing = [marker for marker in markers if marker.lower() not in sent[prompt].lower()]
            assert not missing, f"{prompt} prompt lacks the {name} class: {missing}"
        assert len(QUESTION_PAIR.findall(sent[prompt])) >= 10
    assert sent["polish"] == sent["fix"]  # one refine prompt, problem or none
    check = sent["check"]
    for marker in (
        "including",
        "one of",
        "a piece of the name",
        "asks for something other",
        "inside a clause",
    ):
        assert marker in check
    with OpenAIStubServer(
        replies(json.dumps({"keypoint": "Anarchism was first used as a word in 1539."}))
    ) as server:
        run_llm_stage(MakeKeypoints("llm"), segment(*TUNING_SEGMENTS[0][:4]), server.base_url)
        keypoint = system_text(server.bodies[0])
    for marker in (
        "not the page",
        "a plural stays plural",
        "the remaining",
        "name the sport",
        "unclear referent",
    ):
        assert marker in keypoint
    assert len(STATEMENT_PAIR.findall(keypoint)) >= 5


@pytest.mark.parametrize("name", [STEP_PROMPT, REFINE_PROMPT])
def test_every_good_example_of_the_question_prompts_passes_the_question_gates(name):
    nlp = load_parser(DEFAULT_MODEL)
    pairs = QUESTION_PAIR.findall(load_prompt(name).system)
    assert len(pairs) >= 10
    for _, good in pairs:
        assert any(question_failure(good, label, nlp(good)) is None for label in LABELS), good


def test_every_good_example_of_the_keypoint_prompt_passes_the_keypoint_gates():
    nlp = load_parser(DEFAULT_MODEL)
    text = load_prompt(KEYPOINT_PROMPT).system
    pairs = STATEMENT_PAIR.findall(text)
    assert len(pairs) >= 5
    for _, good in pairs:
        assert keypoint_failure(good, nlp(good)) is None, good
    failing = [bad for bad, _ in pairs if keypoint_failure(bad, nlp(bad)) is not None]
    assert len(failing) >= 4  # the gates see most of the bad ones; a wrong referent they cannot


# --- keypoint gates judge llm keypoints as they judge the rules backend's -------------------------------

ANARCHISM_LEAD = "Anarchism is a political philosophy that advocates self-governed societies."
AWARDS_LEAD = 'The Academy Awards, or "Oscars", is an annual American awards ceremony.'

# Real segments of the tuning half (even page ids: Anarchism is 12, Academy Awards 324), with the reject
# the rules build gave the keypoint that copies each: the llm keypoint that copies it gets the same.
TUNING_SEGMENTS = [
    ("12:11:0", "Anarchism", ANARCHISM_LEAD, "The first known use of this word was in 1539.",
     "unresolved_reference", "'this' points outside the text"),
    ("12:20:0", "Anarchism", ANARCHISM_LEAD, 'A great brigand becomes a ruler of a Nation."',
     "broken_text", 'an unclosed "'),
    ("12:78:0", "Anarchism", ANARCHISM_LEAD,
     "In response, the federalist sections formed their own International at the St. Imier Congress, "
     "adopting a revolutionary anarchist program.",
     "leading_connective", "starts with 'In response'"),
    ("324:14:0", "Academy Awards", AWARDS_LEAD,
     "Since then, for the rest of the first decade, the results were given to newspapers for publication "
     "at 11:00 pm on the night of the awards.",
     "leading_connective", "starts with 'Since then'"),
]  # fmt: skip


def segment(key: str, title: str, lead: str, text: str) -> Segment:
    page, sentence, _ = key.split(":")
    return Segment(
        id=key, page_id=int(page), title=title, lead=lead, section=["History"], sentence=text, text=text,
        before=[], after=[], citations=[Citation(url="https://example.org/source")],
    )  # fmt: skip


@pytest.mark.parametrize(("key", "title", "lead", "text", "reason", "detail"), TUNING_SEGMENTS,
                         ids=[row[0] for row in TUNING_SEGMENTS])  # fmt: skip
def test_an_llm_keypoint_failing_a_keypoint_gate_is_rejected_as_the_rules_keypoint_was(
    key, title, lead, text, reason, detail
):
    with OpenAIStubServer(replies(json.dumps({"keypoint": text}))) as server:
        out = run_llm_stage(MakeKeypoints("llm"), segment(key, title, lead, text), server.base_url)
        assert server.requests == 1  # no refine prompt for keypoints: rejected at once
    assert isinstance(out, Reject) and (out.stage, out.key, out.reason) == ("keypoints", key, reason)
    assert out.detail == f"{detail}: {text}"


def test_an_llm_keypoint_that_resolves_the_reference_is_kept():
    key, title, lead, text = TUNING_SEGMENTS[0][:4]
    resolved = "The first known use of the word anarchism was in 1539."
    with OpenAIStubServer(replies(json.dumps({"keypoint": resolved}))) as server:
        out = run_llm_stage(MakeKeypoints("llm"), segment(key, title, lead, text), server.base_url)
    assert isinstance(out, Keypoint) and out.text == resolved and out.method == "llm"

"""The question stage: a question plan becomes a question with one sub-question per hop, or a reject.

Two backends, chosen by name. "rules" (offline): template realisation of the masked keypoints
(`irbgen.irb.rules.questions`), uniqueness by looking in the run's knowledge graphs for another node of
the same type on the same relation and other end (`UniquenessIndex`). "llm": one irb_question_step call
per masked triple with the earlier triples and questions given, then irb_question_check (one answer?)
and irb_question_refine (fluency); a question failing a gate is refined once more, told the gate, then
rejected if it still fails. Either way a question that contains its own answer is dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from rapidfuzz import fuzz

from irbgen.irb.gates import (
    answer_is_a_source,
    described_badly,
    false_premise_lost,
    false_premise_nonsense,
    false_premise_still_true,
    multi_hop_too_long,
    question_failure,
)
from irbgen.irb.leads import is_lead_fact
from irbgen.irb.records import GeneratedQuestion, KnowledgeGraph, PlanHop, QuestionPlan, Triple
from irbgen.irb.rules.questions import BridgeNotWritable, NodeNotFound, generic_wh, realize_plan
from irbgen.irb.transforms import apply_changes
from irbgen.llm.stage import LLMStage
from irbgen.records import Reject
from irbgen.spacy_models import DEFAULT_MODEL
from irbgen.text import contains_answer, fold, is_question, normalize, squash, stem, words

STEP_PROMPT = "irb_question_step"
CHECK_PROMPT = "irb_question_check"
REFINE_PROMPT = "irb_question_refine"
FUZZY_SAME = 90  # rapidfuzz ratio above which two digit-free spellings name the same node
_RELATION_FILLERS = frozenset("a an the is was were are be been being has have had".split())

Position = Literal["head", "tail"]


class QuestionStepReply(BaseModel):
    """One step's reply: the question rewritten to carry one more triple."""

    model_config = ConfigDict(extra="ignore")

    question: str


class QuestionCheckReply(BaseModel):
    """The check's reply: whether the question admits one answer, and why."""

    model_config = ConfigDict(extra="ignore")

    unique: bool
    reason: str = ""


class QuestionRefineReply(BaseModel):
    """The refinement's reply: the polished question."""

    model_config = ConfigDict(extra="ignore")

    question: str


# --- uniqueness over the run's graphs ----------------------------------------------------------------


def relation_key(relation: str) -> str:
    """A relation's comparable form: stemmed words without articles or auxiliaries ("was designed by")."""
    tokens = [stem(word) for word in words(relation) if word not in _RELATION_FILLERS]
    return " ".join(tokens) or fold(relation).strip()


def same_node(a: str, b: str, node_type: str = "") -> bool:
    """Whether two spellings name one node: equal normalised, a Person's part name, or a close spelling."""
    left, right = normalize(a), normalize(b)
    if left == right:
        return bool(left)
    if node_type == "Person":
        small, large = sorted((set(left.split()), set(right.split())), key=len)
        if small and small <= large:
            return True
    if re.search(r"\d", left + right):
        return False
    return fuzz.ratio(left, right) >= FUZZY_SAME


def _ends(triple: Triple, position: Position) -> tuple[str, str, str]:
    """(masked node, its type, other end) of a triple for a masked position."""
    if position == "head":
        return triple.head, triple.head_type, triple.tail
    return triple.tail, triple.tail_type, triple.head


@dataclass(frozen=True)
class Ambiguity:
    """Another triple that fits the masked slot with a different node: a second answer."""

    fact_id: str
    triple: Triple
    node: str

    def __str__(self) -> str:
        t = self.triple
        return f"{self.node!r} fits too: ({t.head}; {t.relation}; {t.tail}) in fact {self.fact_id}"


def masked_triples(triples: Sequence[Triple], answer: str, answer_type: str) -> list[tuple[Triple, Position]]:
    """The triples holding the masked node, with the end it is at."""
    found: list[tuple[Triple, Position]] = []
    for triple in triples:
        if same_node(triple.head, answer, answer_type):
            found.append((triple, "head"))
        elif same_node(triple.tail, answer, answer_type):
            found.append((triple, "tail"))
    return found


def _clash(masked: Triple, position: Position, other: Triple) -> str | None:
    """The other triple's node if it fills the same slot (same relation and other end) differently."""
    node, node_type, end = _ends(masked, position)
    other_node, other_type, other_end = _ends(other, position)
    if relation_key(other.relation) != relation_key(masked.relation) or other_type != node_type:
        return None
    if not same_node(other_end, end) or same_node(other_node, node, node_type):
        return None
    if _generic(end):
        return None  # "(Bulgaria; has; an embassy)" says nothing the question asks of its answer
    return other_node


def _generic(node: str) -> bool:
    """A node of a few common words only ("an embassy", "the passage", "population"): a triple through it
    ties two facts by a word, not by a thing."""
    tokens = node.split()
    return len(tokens) <= 3 and all(token.isalpha() and token.islower() for token in tokens)


class UniquenessIndex:
    """Every triple of a run's knowledge graphs by relation, to find a second node that fits a masked slot.

    Conservative: qualifiers held in other triples (a year, a place) are not compared, so two facts
    "X joined A" and "X joined B" make both ambiguous even if they happened in different years. A shared
    end of common words only ("an embassy", "population") ties nothing.
    """

    def __init__(self, graphs: Iterable[KnowledgeGraph] = ()) -> None:
        self._by_relation: dict[str, list[tuple[str, Triple]]] = {}
        for graph in graphs:
            for triple in graph.triples:
                self._by_relation.setdefault(relation_key(triple.relation), []).append(
                    (graph.fact_id, triple)
                )

    def __len__(self) -> int:
        return sum(len(entries) for entries in self._by_relation.values())

    def conflicts(self, fact_id: str, triple: Triple, position: Position) -> list[Ambiguity]:
        """Other facts' triples that fill the masked slot of `triple` with a different node of its type."""
        found = []
        for other_fact, other in self._by_relation.get(relation_key(triple.relation), []):
            if other_fact != fact_id:
                node = _clash(triple, position, other)
                if node is not None:
                    found.append(Ambiguity(other_fact, other, node))
        return sorted(found, key=lambda a: (a.fact_id, a.triple.head, a.triple.relation, a.triple.tail))

    def ambiguities(self, hop: PlanHop) -> list[Ambiguity]:
        """Second answers for a hop's masked node: in its own graph, then in the other facts'."""
        found: list[Ambiguity] = []
        for triple, position in masked_triples(hop.triples, hop.answer, hop.answer_type):
            for other in hop.triples:
                node = _clash(triple, position, other)
                if node is not None:
                    found.append(Ambiguity(hop.fact_id, other, node))
            found.extend(self.conflicts(hop.fact_id, triple, position))
        return found


# --- the stage ---------------------------------------------------------------------------------------


def variable(index: int) -> str:
    """The name a masked node goes by in the prompts: hop 0's answer is ?x0."""
    return f"?x{index}"


def render_triple(triple: Triple, hop: PlanHop, index: int, plan: QuestionPlan) -> str:
    """A triple as the prompts show it: masked nodes as variables, other nodes with the plan's changes."""

    def node(text: str) -> str:
        if same_node(text, hop.answer, hop.answer_type):
            return variable(index)
        if index > 0 and hop.bridge and same_node(text, hop.bridge, plan.hops[index - 1].answer_type):
            return variable(index - 1)
        return apply_changes(text, plan.changes)

    head, tail = node(triple.head), node(triple.tail)
    return f"({head} [{triple.head_type}]; {triple.relation}; {tail} [{triple.tail_type}])"


def plan_rows(plan: QuestionPlan) -> list[tuple[int, str]]:
    """(hop index, rendered triple) in generation order: hop by hop, the masked node's triples first."""
    rows = []
    for index, hop in enumerate(plan.hops):
        masked = [triple for triple, _ in masked_triples(hop.triples, hop.answer, hop.answer_type)]
        ordered = masked + [triple for triple in hop.triples if triple not in masked]
        rows.extend((index, render_triple(triple, hop, index, plan)) for triple in ordered)
    return rows


def _missing_node(plan: QuestionPlan) -> str | None:
    """Why the masked graph cannot be written (a hop's answer or bridge in none of its triples), or None."""
    for index, hop in enumerate(plan.hops):
        if not masked_triples(hop.triples, hop.answer, hop.answer_type):
            return f"hop {index}: no triple holds the answer {hop.answer!r}"
        if index > 0:
            bridge_type = plan.hops[index - 1].answer_type
            if not hop.bridge or not masked_triples(hop.triples, hop.bridge, bridge_type):
                return f"hop {index}: no triple holds the bridge {hop.bridge!r}"
    return None


class WriteQuestions(LLMStage):
    """QuestionPlan -> GeneratedQuestion (or Reject). "rules" runs in `process`, "llm" in `aprocess`."""

    name = "questions"
    input_model = QuestionPlan
    output_model = GeneratedQuestion
    prompts = {
        STEP_PROMPT: QuestionStepReply,
        CHECK_PROMPT: QuestionCheckReply,
        REFINE_PROMPT: QuestionRefineReply,
    }  # in the order of GeneratedQuestion.prompts
    what = "question"

    def __init__(
        self,
        backend: str = "rules",
        *,
        graphs: Iterable[KnowledgeGraph] = (),
        temperature: float = 0.0,
        prompt_dir: Path | str | None = None,
        parser_model: str = DEFAULT_MODEL,
    ) -> None:
        super().__init__(backend, temperature=temperature, prompt_dir=prompt_dir)
        self.parser_model = parser_model  # spaCy tagger and parser for the gates
        self.index = UniquenessIndex(graphs)

    def __repr__(self) -> str:
        return f"WriteQuestions(backend={self.backend!r}, graphs={len(self.index)} triples)"

    def key(self, record: QuestionPlan) -> str:
        """The plan id."""
        return record.id

    # --- gates -------------------------------------------------------------------------------------

    def _parser(self) -> Any:
        """spaCy's tagger and parser (`parser_model`), loaded once per process."""
        from irbgen.wikipedia.stages import load_parser

        return load_parser(self.parser_model)

    def _gate_failure(self, plan: QuestionPlan, sub_questions: Sequence[str]) -> tuple[int, str, str] | None:
        """(sub-question index, gate, detail) of the first question gate failed (irb/gates.py), or None."""
        nlp = self._parser()
        for index, (written, hop) in enumerate(zip(sub_questions, plan.hops, strict=True)):
            inner = index < len(plan.hops) - 1
            question = generic_wh(written, hop.answer, hop.answer_type)
            doc = nlp(question)
            failure = question_failure(
                question,
                hop.answer_label,
                doc,
                nested=index > 0,
                answer=hop.answer,
                answer_type=hop.answer_type,
                keypoints=hop.keypoints,
                described=inner,
            )
            if failure is not None and not self._description_misread(plan, index, failure[0], question):
                return index, failure[0], failure[1]
            described = described_badly(question) if inner else None
            if described is not None:
                return index, "described_too_long", described
            long = multi_hop_too_long(question) if index > 0 and not inner else None
            if long is not None:
                return index, "multi_hop_too_long", long
            source = answer_is_a_source(doc) if index > 0 and not inner else None
            if source is not None:
                return index, "multi_hop_answer_without_bridge", source
        return None

    def _description_misread(self, plan: QuestionPlan, index: int, gate: str, question: str) -> bool:
        """Whether the outer hop `index` failed only because the parser read its question word into the
        bridge's description ("... growth for the country whose capital is Tirana in what year"): the
        gate is the main-clause one, the question is the hop's own with its bridge described, the
        description has no comma of its own (", where its robots inspect ... each year in what year"
        would mislead a reader too), and the hop's own question, its bridge named, passes every gate."""
        if index == 0 or gate != "question_wh_outside_main_clause":
            return False
        hop = plan.hops[index]
        alone = QuestionPlan(id=f"s:{hop.fact_id}", kind="single_hop", hops=[hop], changes=plan.changes)
        try:
            named = generic_wh(realize_plan(alone, self._parser()).question, hop.answer, hop.answer_type)
        except (NodeNotFound, BridgeNotWritable):
            return False
        asked, alone_words = question.split(), named.split()
        start = len(os.path.commonprefix([asked, alone_words]))
        end = len(os.path.commonprefix([asked[start:][::-1], alone_words[start:][::-1]]))
        if normalize(" ".join(alone_words[start : len(alone_words) - end])) != normalize(hop.bridge or ""):
            return False  # not the hop's own question with its bridge described (an llm's wording)
        description = " ".join(asked[start : len(asked) - end])
        if "," in re.sub(r"\b\d{1,2}, (?=\d{3,4}\b)", "", description):
            return False  # a comma of its own, not a date's ("born on April 29, 1970")
        found = question_failure(
            named,
            hop.answer_label,
            self._parser()(named),
            answer=hop.answer,
            answer_type=hop.answer_type,
            keypoints=hop.keypoints,
        )
        return found is None

    def _premise_failure(self, plan: QuestionPlan, question: str) -> tuple[str, str] | None:
        """(reason, detail) when the false-premise change leaves the final question's claim true or makes
        it nonsense (irb/gates.py), or None; the question is parsed once."""
        from irbgen.wikipedia.stages import load_parser

        changes = [change for change in plan.changes if change.kind == "false_premise"]
        question = generic_wh(question, plan.hops[-1].answer, plan.hops[-1].answer_type)
        doc = load_parser(self.parser_model)(question) if changes else None
        for change in changes:
            true = false_premise_still_true(doc, change.node, change.replacement, change.rule)
            if true is not None:
                return "false_premise_still_true", true
        for change in changes:
            nonsense = false_premise_nonsense(doc, change.replacement, change.rule)
            if nonsense is not None:
                return nonsense
        return None

    def gate(self, plan: QuestionPlan, question: GeneratedQuestion) -> Reject | None:
        """bad_question for a non-question; answer_leak when sub-question i holds the answer of hop <= i;
        then the quality gates, each its own reason."""
        failure = self._failure(plan, question.sub_questions)
        if failure is None:
            return None
        _, reason, detail, raw = failure
        return self.reject(plan, reason, detail, raw=raw)

    def _failure(
        self, plan: QuestionPlan, sub_questions: Sequence[str]
    ) -> tuple[int, str, str, str | None] | None:
        """(index of the sub-question at fault, reason, detail, the text kept as `raw`) of the first gate
        failed, or None."""
        last = len(sub_questions) - 1
        for index, text in enumerate(sub_questions):
            if not is_question(text):
                detail = "empty question" if not text.strip() else f"not a question: {text!r}"
                return index, "bad_question", f"sub-question {index}: {detail}", text
        for index, text in enumerate(sub_questions):
            for earlier, hop in enumerate(plan.hops[: index + 1]):
                if contains_answer(text, hop.answer, hop.answer_type):
                    whose = "its own answer" if earlier == index else f"hop {earlier}'s answer"
                    detail = f"sub-question {index} contains {whose} {hop.answer!r}: {text}"
                    return index, "answer_leak", detail, None
        for change in plan.changes:
            lost = false_premise_lost(sub_questions[-1], change.replacement)
            if change.kind == "false_premise" and lost is not None:
                return last, "false_premise_lost", f"{lost}: {sub_questions[-1]}", None
        premise = self._premise_failure(plan, sub_questions[-1])
        if premise is not None:
            return last, premise[0], f"{premise[1]}: {sub_questions[-1]}", None
        failure = self._gate_failure(plan, sub_questions)
        if failure is None:
            return None
        index, gate, detail = failure
        return index, gate, f"sub-question {index}: {detail}: {sub_questions[index]}", None

    # --- rules -------------------------------------------------------------------------------------

    def rules(self, plan: QuestionPlan) -> GeneratedQuestion | Reject:
        """The offline backend: `realize_plan`, then no second answer in the run's graphs."""
        try:
            realization = realize_plan(plan, self._parser())
        except NodeNotFound as error:
            return self.reject(plan, "node_not_found", str(error))
        except BridgeNotWritable as error:
            return self.reject(plan, "bridge_not_writable", str(error))
        for index, hop in enumerate(plan.hops):
            if is_lead_fact(hop.fact_id):
                continue  # a lead claim picks its page's subject out (irb/leads.py), whatever its graph
            ambiguities = self.index.ambiguities(hop)
            if ambiguities:
                return self.reject(plan, "not_unique", f"hop {index}: {ambiguities[0]}")
        true = self._true_failure(plan)
        if true is not None:
            return true
        return GeneratedQuestion(
            plan_id=plan.id,
            question=realization.question,
            sub_questions=list(realization.sub_questions),
            method="rules",
        )

    def rules_failure(self, plan: QuestionPlan) -> Reject | None:
        """The reject of the rules backend for this plan, written and then gated, or None when its
        question would be kept."""
        written = self.rules(plan)
        return written if isinstance(written, Reject) else self.gate(plan, written)

    def _true_failure(self, plan: QuestionPlan) -> Reject | None:
        """For a false-premise plan, the reject of the first gate its question fails when written without
        the false change (the question it was made from), or None: a false premise passes every gate of
        its true question, whatever the changed words do to the parse."""
        if plan.kind != "false_premise":
            return None
        changes = [change for change in plan.changes if change.kind != "false_premise"]
        kind = "single_hop" if len(plan.hops) == 1 else "multi_hop"
        true = plan.model_copy(update={"kind": kind, "changes": changes})
        failure = self.rules_failure(true)
        if failure is None:
            return None
        return self.reject(plan, failure.reason, f"without its false premise: {failure.detail}")

    # --- llm ---------------------------------------------------------------------------------------

    async def _write_steps(self, plan: QuestionPlan, client: Any) -> tuple[list[str], list[str]] | Reject:
        """One step call per triple: (the drafts, the draft after each hop's last triple) or a reject."""
        rows = plan_rows(plan)
        history: list[str] = []
        steps: list[str] = []
        sub_questions: list[str] = []
        for number, (hop_index, triple) in enumerate(rows, start=1):
            known = (f"{variable(i)} ({plan.hops[i].answer_type})" for i in range(hop_index + 1))
            values = {
                "variables": ", ".join(known),
                "variable": variable(hop_index),
                "history": "\n".join(history) or "(none)",
                "question": steps[-1] if steps else "(none yet)",
                "triple": triple,
            }
            where = f"step {number} of {len(rows)}"
            answer = await self.ask(client, plan, STEP_PROMPT, values, where=where)
            if isinstance(answer, Reject):
                return answer
            question = squash(answer.reply.question)
            if not is_question(question):
                detail = f"{where}: not a question: {question!r}"
                return self.reject(plan, "bad_question", detail, raw=answer.raw)
            steps.append(question)
            history.append(f"{number}. {triple} -> {question}")
            if number == len(rows) or rows[number][0] != hop_index:
                sub_questions.append(question)
        return steps, sub_questions

    async def llm(self, plan: QuestionPlan, client: Any) -> GeneratedQuestion | Reject:
        """Step calls, one check call (one answer?) and a refine call; then the gates of `gate`. A
        sub-question that fails a gate is refined once more, told the gate and its detail; if the
        question still fails, the gate rejects it, and the reject names the gate that asked for the
        refinement (`refined_after`) and the sub-question before it (`before_refine`)."""
        missing = _missing_node(plan)
        if missing is not None:
            return self.reject(plan, "node_not_found", missing)
        written = await self._write_steps(plan, client)
        if isinstance(written, Reject):
            return written
        steps, sub_questions = written
        rows = plan_rows(plan)
        triples = "\n".join(triple for _, triple in rows)
        values = {
            "question": steps[-1],
            "triples": triples,
            "variable": variable(len(plan.hops) - 1),
            "answer": plan.answer,
        }
        verdict = await self.ask(client, plan, CHECK_PROMPT, values, where="check")
        if isinstance(verdict, Reject):
            return verdict
        if not verdict.reply.unique:
            why = verdict.reply.reason.strip() or "the check found several answers"
            return self.reject(plan, "not_unique", why)
        values = {"question": steps[-1], "answer": plan.answer, "triples": triples, "problems": "(none)"}
        polished = await self.ask(client, plan, REFINE_PROMPT, values, where="refine")
        if isinstance(polished, Reject):
            return polished
        sub_questions[-1] = squash(polished.reply.question)
        refined: dict[int, tuple[str, str]] = {}  # sub-question -> (gate that failed it, its text then)
        while True:
            failure = self._failure(plan, sub_questions)
            if failure is None:
                return GeneratedQuestion(
                    plan_id=plan.id,
                    question=sub_questions[-1],
                    sub_questions=sub_questions,
                    steps=steps,
                    method="llm",
                    **self.provenance(client),
                )
            index, reason, detail, raw = failure
            if index in refined:  # refined once already: the gate rejects it
                gate, before = refined[index]
                return self.reject(plan, reason, detail, raw=raw, refined_after=gate, before_refine=before)
            refined[index] = (reason, sub_questions[index])
            values = {
                "question": sub_questions[index],
                "answer": plan.hops[index].answer,
                "triples": "\n".join(triple for hop, triple in rows if hop <= index),
                "problems": f"{reason}: {detail}",
            }
            again = await self.ask(client, plan, REFINE_PROMPT, values, where=f"refine after {reason}")
            if isinstance(again, Reject):
                return again
            sub_questions = sub_questions.copy()
            sub_questions[index] = squash(again.reply.question)

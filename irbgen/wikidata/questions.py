"""The question stage of a Wikidata build: a Chain becomes a main question with one sub-question per hop.

Two backends (`irbgen.llm.stage.LLMStage`). "rules" (offline) words questions with
`irbgen.wikidata.rules.questions`: a template per common property, else a pattern from the property
label; the main question nests the earlier hops as a description ("What is the capital of the country
where Potsdam is located?").
"llm" writes the questions with the mintqa_question prompt and checks them by answering each from
the chain's triples with the mintqa_answer prompt; a question is kept only when every answer
matches the gold (label or alias), else it is written again with the reason, up to `max_attempts`
writes in all.

Both backends name every entity as `irbgen.wikidata.names` says: its label, with its description when
the label is shared or too generic, and reject the chain as "ambiguous" when nothing singles it out. A hop
whose property has no English label is "no_property_label"; a hop that is not the one current value of
its (head, property) (`answerable.select`) is "many_values"; one whose value changes over time with no
date its qualifiers give (`dating.undated_change`: head of government, population ... with no point in
time or start time) is "undated_change", whichever hop it is; a chain whose subject or a bridge is a class
(`relations.is_class`) is "class_subject" or "class_bridge"; one that comes back to an entity it has
visited, or takes a relation right after its inverse (`relations.inverse_step`), is "walks_back". The
rules backend words the chain with `rules.grammar` and rejects one it cannot word naturally as
"chain_not_writable". A question holding its
own answer is an "answer_leak"; one asking twice ("On what date did what X is named after die?",
`rules.grammar.question_words`) is "two_question_words"; one over the word limit is "too_long".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from irbgen.errors import BadInputError
from irbgen.llm.stage import LLMStage
from irbgen.records import Reject
from irbgen.text import contains_answer, fold, normalize, squash
from irbgen.wikidata.answerable import Selection, select
from irbgen.wikidata.corpus import number_text, qualifier_text, value_text
from irbgen.wikidata.dating import time_key, undated_change
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.names import Names
from irbgen.wikidata.records import Chain, ChainQuestion, Value
from irbgen.wikidata.relations import class_marker, inverse_step, other_successions
from irbgen.wikidata.rules import questions as wording
from irbgen.wikidata.rules.grammar import NotWritable, compose, has_two_question_words
from irbgen.wikidata.rules.questions import describe, too_long
from irbgen.wikidata.vocabulary import load_units

__all__ = ["WriteChainQuestions", "answer_texts", "answer_type", "check_chain", "describe", "matches"]

QUESTION_PROMPT = "mintqa_question"
ANSWER_PROMPT = "mintqa_answer"
MONTHS = "January February March April May June July August September October November December".split()
AnswerType = Literal["entity", "date", "quantity", "string"]

_TIME_ISO = re.compile(r"^([+-])(\d+)-(\d\d)-(\d\d)T")
PICTOGRAPHS_FROM = 0x2190  # arrows, then technical and miscellaneous symbols, dingbats and every emoji block


# --- answers --------------------------------------------------------------------------------------------


def answer_type(value: Value) -> AnswerType:
    """The answer type a sample records: entity, date, quantity, or string for every other literal."""
    if value.type == "entity":
        return "entity"
    if value.type == "time":
        return "date"
    if value.type == "quantity":
        return "quantity"
    return "string"


def date_forms(value: Value) -> list[str]:
    """Common spellings of a time value from its raw form and precision ("12 March 2024", "2024-03-12")."""
    match = _TIME_ISO.match(value.raw)
    if match is None:
        return []
    sign, year_digits, month, day = match.groups()
    year = int(year_digits)
    if sign == "-":
        return [f"{year} BC", f"{year} BCE"]
    precision = value.precision if value.precision is not None else 11
    if precision < 9:  # a decade or coarser: the text says it best
        return []
    if month == "00" or precision == 9:
        return [str(year)]
    name = MONTHS[int(month) - 1]
    if day == "00" or precision == 10:
        return [f"{name} {year}", f"{year:04d}-{month}"]
    return [f"{int(day)} {name} {year}", f"{name} {int(day)}, {year}", f"{year:04d}-{month}-{day}"]


def _unique(texts: Sequence[str]) -> list[str]:
    seen: dict[str, str] = {}
    for text in texts:
        text = text.strip()
        if text and fold(text) not in seen:
            seen[fold(text)] = text
    return list(seen.values())


def is_pictograph(char: str) -> bool:
    """An emoji or pictograph (a flag's regional indicators, ⛼): an "other symbol" past the letterlike
    block, so "°", "©" and "℃" are not."""
    return unicodedata.category(char) == "So" and ord(char) >= PICTOGRAPHS_FROM


def is_answer_alias(alias: str) -> bool:
    """Whether an alias may stand as a gold answer: more than two letters or digits, since answers are
    matched on those ("de" and "cl" are words and syllables, "US$" matches "us"), and no emoji."""
    return sum(char.isalnum() for char in alias) > 2 and not any(is_pictograph(char) for char in alias)


def answer_texts(kb: KnowledgeBase, value: Value, every_alias: bool = False) -> list[str]:
    """Every accepted spelling of a gold answer: label and aliases, or the literal's forms. The label
    counts whatever its length; an alias only when `is_answer_alias`, unless `every_alias` (leak checks:
    a question naming "NL" still gives Norland away)."""
    if value.type == "entity" and value.id:
        entity = kb.entities.get(value.id)
        aliases = [a for a in (entity.aliases if entity else []) if every_alias or is_answer_alias(a)]
        return _unique([kb.label(value.id), *aliases])
    forms = [value_text(kb, value), value.text]
    if value.type == "time":
        forms.extend(date_forms(value))
    elif value.type == "quantity" and value.raw:
        number = value.raw.lstrip("+")
        forms.extend([number_text(number), number])
        if "." in number:  # "1.50" is also "1.5"
            forms.append(number.rstrip("0").rstrip("."))
        unit = load_units().get(value.unit or "")
        if unit is not None and unit.symbol:
            forms.append(f"{number_text(number)} {unit.symbol}")
    return _unique(forms)


def matches(reply: str, golds: Sequence[str]) -> bool:
    """Whether a reply gives the gold answer: a gold spelling occurs in it as whole words, normalised."""
    said = f" {normalize(reply)} "
    return any(normalize(gold) and f" {normalize(gold)} " in said for gold in golds)


def leaks(question: str, golds: Sequence[str]) -> str | None:
    """The gold spelling a question gives away, or None (one-character aliases are too common to count)."""
    for index, gold in enumerate(golds):
        if (index == 0 or len(normalize(gold)) >= 2) and contains_answer(question, gold):
            return gold
    return None


# --- rules realisation ------------------------------------------------------------------------------


def check_chain(
    kb: KnowledgeBase, names: Names, chain: Chain
) -> tuple[list[str], list[Selection], tuple[str, str] | None]:
    """(the name of each hop's head, each hop's selection, None), or ([], [], (reason, detail)) when the
    chain cannot be asked unambiguously: "walks_back", "class_subject", "class_bridge",
    "no_property_label", "many_values", "undated_change", "ambiguous", or "answer_leak" when the
    subject's name gives an answer of the chain away (its label or a word made from it: "Australian
    head", a painting whose creator is Australian, asked for the creator's country)."""
    if not chain.hops:
        return [], [], ("ambiguous", "the chain has no hops")
    nodes = [chain.hops[0].statement.head, *(hop.statement.tail.key for hop in chain.hops)]
    again = next((index for index, node in enumerate(nodes) if node in nodes[:index]), None)
    if again is not None:
        return [], [], ("walks_back", f"hop {again - 1}: back to {kb.label(nodes[again])}, visited before")
    back = inverse_step(hop.statement.property for hop in chain.hops)
    if back is not None:
        first, second = chain.hops[back - 1].statement.property, chain.hops[back].statement.property
        return [], [], ("walks_back", f"hop {back}: {second} undoes {first} of the hop before")
    selections = []
    for index, hop in enumerate(chain.hops):  # what the chain is, before how its nodes are named
        statement = hop.statement
        if not kb.property_label(statement.property):
            return [], [], ("no_property_label", f"hop {index}: {statement.property} has no English label")
        marker = class_marker(kb, statement.head)
        if marker is not None:
            reason = "class_subject" if index == 0 else "class_bridge"
            return [], [], (reason, f"hop {index}: {kb.label(statement.head)} is a class ({marker})")
        selection = select(kb, statement.head, statement.property)
        if selection is None or selection.statement.tail.key != statement.tail.key:
            tails = kb.tails(statement.head, statement.property)
            found = ", ".join(sorted({value_text(kb, s.tail) for s in tails})) or "none"
            where = f"({kb.label(statement.head)}, {kb.property_label(statement.property)})"
            return [], [], ("many_values", f"hop {index}: {where} has values {found}, not one current value")
        others = other_successions(kb, statement.head, statement.property, statement.tail.key)
        if others:
            where = f"({kb.label(statement.head)}, {kb.property_label(statement.property)})"
            named = ", ".join(kb.label(other) for other in others)
            return [], [], ("many_values", f"hop {index}: {where}, while other successions name {named}")
        if undated_change(statement, selection.when):
            where = f"({kb.label(statement.head)}, {kb.property_label(statement.property)})"
            return [], [], ("undated_change", f"hop {index}: {where} changes over time and has no date")
        selections.append(selection)
    heads = []
    for index, hop in enumerate(chain.hops):
        name, why = names.resolve(hop.statement.head, [later.statement.tail for later in chain.hops[index:]])
        if name is None:
            return [], [], ("ambiguous", f"hop {index}: {why}")
        heads.append(name)
    for index, hop in enumerate(chain.hops):  # the subject's own name holds a later answer: "Australian head"
        if names.name_gives_away(heads[0], hop.statement.tail):
            given = value_text(kb, hop.statement.tail)
            detail = f"the subject's name {heads[0]!r} gives away hop {index}'s {given!r}"
            return [], [], ("answer_leak", detail)
    return heads, selections, None


# --- llm replies ------------------------------------------------------------------------------------


class SubQuestion(BaseModel):
    """One hop's question and the answer the writer expects."""

    model_config = ConfigDict(extra="ignore")

    question: str
    answer: str = ""


class ChainQuestionReply(BaseModel):
    """The writer's reply: the main question and one sub-question per hop."""

    model_config = ConfigDict(extra="ignore")

    question: str
    sub_questions: list[SubQuestion]


class AnswerReply(BaseModel):
    """The checker's reply: a short answer."""

    model_config = ConfigDict(extra="ignore")

    answer: str


def chain_facts(kb: KnowledgeBase, chain: Chain, heads: Sequence[str]) -> str:
    """The chain as numbered (subject; property; value) lines, qualifiers after: the source context."""
    lines = []
    # A bridge entity goes by the same name as a tail as it does as the next head.
    tails = [*heads[1:], value_text(kb, chain.hops[-1].statement.tail)]
    for index, (hop, head, tail) in enumerate(zip(chain.hops, heads, tails, strict=True), start=1):
        statement = hop.statement
        qualifiers = qualifier_text(kb, statement.qualifiers)
        triple = f"({head}; {kb.property_label(statement.property)}; {tail})"
        lines.append(f"{index}. {triple}" + (f" {qualifiers}" if qualifiers else ""))
    return "\n".join(lines)


class _Failure(Exception):
    """One written attempt that did not pass: a reject reason and what to tell the writer next time."""

    def __init__(self, reason: str, detail: str, raw: str = "") -> None:
        super().__init__(detail)
        self.reason, self.detail, self.raw = reason, detail, raw


# --- the stage --------------------------------------------------------------------------------------


class WriteChainQuestions(LLMStage):
    """Chain -> ChainQuestion (or Reject). "rules" runs in `process`, either backend in `aprocess`."""

    name = "questions"
    input_model = Chain
    output_model = ChainQuestion
    prompts = {QUESTION_PROMPT: ChainQuestionReply, ANSWER_PROMPT: AnswerReply}  # as in ChainQuestion.prompts
    what = "question"

    def __init__(
        self,
        backend: str = "rules",
        *,
        kb: KnowledgeBase,
        temperature: float = 0.0,
        max_attempts: int = 3,
        prompt_dir: Path | str | None = None,
    ) -> None:
        if max_attempts < 1:
            raise BadInputError(f"max_attempts must be at least 1, got {max_attempts}")
        super().__init__(backend, temperature=temperature, prompt_dir=prompt_dir)
        self.kb = kb
        self.names = Names(kb)
        self.max_attempts = max_attempts

    def __repr__(self) -> str:
        return f"WriteChainQuestions(backend={self.backend!r}, max_attempts={self.max_attempts})"

    def key(self, record: Chain) -> str:
        """The chain id."""
        return record.id

    # --- shared ------------------------------------------------------------------------------------

    def golds(self, chain: Chain, every_alias: bool = False) -> list[list[str]]:
        """The accepted answer spellings of each hop (`answer_texts`)."""
        return [answer_texts(self.kb, hop.statement.tail, every_alias) for hop in chain.hops]

    def sub_answers(self, chain: Chain) -> list[str]:
        """Each hop's gold answer as text."""
        return [value_text(self.kb, hop.statement.tail) for hop in chain.hops]

    def _leak(self, chain: Chain, question: str, sub_questions: Sequence[str]) -> str | None:
        """Why a question gives its answer away (main or sub-question), or None."""
        golds = self.golds(chain, every_alias=True)
        found = leaks(question, golds[-1])
        if found is not None:
            return f"the question contains its answer {found!r}: {question}"
        for index, (sub_question, gold) in enumerate(zip(sub_questions, golds, strict=True)):
            found = leaks(sub_question, gold)
            if found is not None:
                return f"sub-question {index} contains its answer {found!r}: {sub_question}"
        return None

    def gate(self, chain: Chain, question: ChainQuestion) -> Reject | None:
        """An "answer_leak" reject when the question or a sub-question holds its answer, a
        "two_question_words" reject when one asks twice, an "undated_change" reject when a hop's date
        (`answerable.select`) is missing from the question or the hop's sub-question, else None. (The llm
        backend checks each attempt for leaks before this, to write again.)"""
        leak = self._leak(chain, question.question, question.sub_questions)
        if leak is not None:
            return self.reject(chain, "answer_leak", leak)
        for index, hop in enumerate(chain.hops):
            selection = select(self.kb, hop.statement.head, hop.statement.property)
            year = str(abs(time_key(selection.when)[0])) if selection is not None and selection.when else ""
            sub_question = question.sub_questions[index] if index < len(question.sub_questions) else ""
            if year and not (year in question.question and year in sub_question):
                detail = f"hop {index}: the question omits its date {year}"
                return self.reject(chain, "undated_change", detail)
        heads = [hop.statement.head for hop in chain.hops]
        names = tuple(name for head in heads for name in (self.kb.label(head), self.names.name(head)) if name)
        for text in (question.question, *question.sub_questions):
            if has_two_question_words(text, names):
                return self.reject(chain, "two_question_words", text)
        return None

    # --- rules -------------------------------------------------------------------------------------

    def rules(self, chain: Chain) -> ChainQuestion | Reject:
        """The offline backend: `rules.grammar.compose` the chain's checked hops, within the word limit."""
        heads, selections, problem = check_chain(self.kb, self.names, chain)
        if problem is not None:
            return self.reject(chain, *problem)
        try:
            question, sub_questions = compose(self.kb, selections, heads)
        except NotWritable as error:
            return self.reject(chain, "chain_not_writable", str(error))
        if too_long(question):
            return self.reject(chain, "too_long", f"over {wording.MAX_QUESTION_WORDS} words: {question}")
        return ChainQuestion(
            chain_id=chain.id,
            question=question,
            sub_questions=sub_questions,
            sub_answers=self.sub_answers(chain),
            method="rules",
        )

    # --- llm ---------------------------------------------------------------------------------------

    async def _call(self, client: Any, chain: Chain, name: str, values: dict[str, str]) -> Any:
        """The parsed reply of one call; a failed call raises _Failure("llm_error")."""
        answer = await self.ask(client, chain, name, values, where=name)
        if isinstance(answer, Reject):
            raise _Failure("llm_error", answer.detail, answer.extra.get("raw", ""))
        return answer.reply

    def _read_reply(self, chain: Chain, reply: ChainQuestionReply) -> tuple[str, list[str]]:
        """(question, sub-questions) from a reply that has the right shape; else _Failure("bad_reply")."""
        question = squash(reply.question)
        sub_questions = [squash(item.question) for item in reply.sub_questions]
        if len(sub_questions) != len(chain.hops):
            detail = f"{len(sub_questions)} sub-questions for {len(chain.hops)} hops"
            raise _Failure("bad_reply", detail)
        if not question or not all(sub_questions):
            raise _Failure("bad_reply", "an empty question or sub-question")
        if len(chain.hops) == 1:
            sub_questions = [question]  # one hop: the sub-question is the question
        return question, sub_questions

    async def _validate(self, client: Any, chain: Chain, facts: str, asked: Sequence[str]) -> None:
        """Answer the main question, then each sub-question, from the facts; _Failure on a wrong answer."""
        golds = self.golds(chain)
        checks = [("the question", asked[0], golds[-1])]
        if len(chain.hops) > 1:
            checks.extend(
                (f"sub-question {i}", q, g) for i, (q, g) in enumerate(zip(asked[1:], golds, strict=True))
            )
        for what, question, gold in checks:
            reply = await self._call(client, chain, ANSWER_PROMPT, {"facts": facts, "question": question})
            if not matches(reply.answer, gold):
                detail = f"{what} {question!r} was answered {reply.answer!r}, expected {gold[0]!r}"
                raise _Failure("failed_validation", detail)

    async def _attempt(self, client: Any, chain: Chain, values: dict[str, str]) -> tuple[str, list[str]]:
        """One written and checked question, or _Failure."""
        reply = await self._call(client, chain, QUESTION_PROMPT, values)
        try:
            question, sub_questions = self._read_reply(chain, reply)
            leak = self._leak(chain, question, sub_questions)
            if leak is not None:
                raise _Failure("answer_leak", leak)
            await self._validate(client, chain, values["facts"], [question, *sub_questions])
        except _Failure as failure:
            failure.raw = failure.raw or reply.model_dump_json()  # the written reply, to see what failed
            raise
        return question, sub_questions

    async def llm(self, chain: Chain, client: Any) -> ChainQuestion | Reject:
        """Write and check up to `max_attempts` times, telling the writer why the last one failed."""
        heads, _, problem = check_chain(self.kb, self.names, chain)
        if problem is not None:
            return self.reject(chain, *problem)
        values = {
            "hops": str(len(chain.hops)),
            "facts": chain_facts(self.kb, chain, heads),
            "start": heads[0],
            "answer": value_text(self.kb, chain.hops[-1].statement.tail),
            "feedback": "(first attempt)",
        }
        failures: list[str] = []
        last = _Failure("failed_validation", "no attempt")
        for attempt in range(1, self.max_attempts + 1):
            try:
                question, sub_questions = await self._attempt(client, chain, values)
            except _Failure as failure:
                if failure.reason == "llm_error":
                    return self.reject(chain, "llm_error", failure.detail, failure.raw, attempts=attempt)
                failures.append(f"attempt {attempt}: {failure.detail}")
                values["feedback"] = f"An earlier attempt was rejected: {failure.detail}. Write a new one."
                last = failure
                continue
            return ChainQuestion(
                chain_id=chain.id,
                question=question,
                sub_questions=sub_questions,
                sub_answers=self.sub_answers(chain),
                method="llm",
                attempts=attempt,
                **self.provenance(client),
            )
        detail = "; ".join(failures)
        return self.reject(chain, last.reason, detail, last.raw, attempts=self.max_attempts)

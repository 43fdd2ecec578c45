"""The LLM stage base: dispatch, the missing client, prompts loaded once, reply checks, rejects with the raw
reply, provenance and gates, on a toy stage with a fake client (the real stages have their own tests)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pydantic import BaseModel

from irbgen.errors import BadInputError
from irbgen.llm.backends import BACKENDS, LLM_CHOICES, MAX_RAW_CHARS, stage_backend
from irbgen.llm.stage import LLMStage
from irbgen.llm.types import Completion
from irbgen.pipeline.stage import StageContext
from irbgen.records import Record, Reject


class Word(Record):
    id: str
    text: str


class Echo(Record):
    id: str
    text: str
    method: str
    prompt: Any = None
    prompts: Any = None
    model: str | None = None


class EchoReply(BaseModel):
    text: str


class OtherReply(BaseModel):
    score: int


class EchoStage(LLMStage):
    name = "echo"
    input_model = Word
    output_model = Echo
    prompts = {"echo": EchoReply}
    what = "echo"

    def key(self, record: Word) -> str:
        return record.id

    def rules(self, record: Word) -> Echo:
        return Echo(id=record.id, text=record.text.upper(), method=self.backend)

    def values(self, record: Word) -> dict[str, str]:
        return {"word": record.text}

    def accept(self, record: Word, reply: EchoReply, raw: str) -> Echo | Reject:
        if not reply.text:
            return self.reject(record, "empty", "no text", raw=raw)
        return Echo(id=record.id, text=reply.text, method=self.backend)

    def gate(self, record: Word, output: Echo) -> Reject | None:
        return self.reject(record, "too_long", output.text) if len(output.text) > 10 else None


class TwoCalls(EchoStage):
    prompts = {"echo": EchoReply, "score": OtherReply}


class FakeClient:
    """Answers every call with the next queued completion; records what it was asked."""

    def __init__(self, *completions: Completion) -> None:
        self.completions = list(completions)
        self.calls: list[dict[str, Any]] = []
        self.settings = SimpleNamespace(model="toy-model")

    async def complete(self, messages: list[dict[str, str]], **options: Any) -> Completion:
        self.calls.append({"messages": messages, **options})
        return self.completions.pop(0)


PROMPT = (
    'name = "{name}"\nversion = "3"\ndescription = "d"\noutput = "{output}"\nsystem = "s"\nuser = "{user}"\n'
)


@pytest.fixture
def prompt_dir(tmp_path: Path) -> Path:
    (tmp_path / "echo.toml").write_text(PROMPT.format(name="echo", output="EchoReply", user="Say {word}"))
    (tmp_path / "score.toml").write_text(PROMPT.format(name="score", output="OtherReply", user="Score"))
    return tmp_path


def run(stage: LLMStage, record: Word, client: Any = None) -> Any:
    (out,) = asyncio.run(stage.aprocess(record, StageContext(run_dir=Path("."), llm=client)))
    return out


WORD = Word(id="w1", text="hello")


def test_rules_backend_runs_in_process_and_aprocess_and_is_gated():
    stage = EchoStage()
    assert repr(stage) == "EchoStage(backend='rules')" and stage._prompts == {}
    expected = Echo(id="w1", text="HELLO", method="rules")
    assert stage.process(WORD, StageContext(run_dir=Path("."))) == [expected]
    assert run(stage, WORD).text == "HELLO"
    long = run(stage, Word(id="w2", text="hello world!"))
    assert isinstance(long, Reject) and (long.stage, long.reason, long.key) == ("echo", "too_long", "w2")


def test_backend_names_and_the_missing_client():
    with pytest.raises(BadInputError, match=r"unknown backend 'gpt' \(choose from: llm, rules\)"):
        EchoStage("gpt")
    with pytest.raises(TypeError, match="asynchronous: call aprocess"):
        EchoStage("llm").process(WORD, StageContext(run_dir=Path(".")))
    with pytest.raises(BadInputError, match=r"the llm echo backend needs an LLM client \(context"):
        run(EchoStage("llm"), WORD)


def test_llm_reply_is_accepted_with_provenance_and_gated(prompt_dir):
    stage = EchoStage("llm", temperature=0.3, prompt_dir=prompt_dir)
    client = FakeClient(Completion(text='{"text": "hi"}', parsed=EchoReply(text="hi")))
    out = run(stage, WORD, client)
    assert (out.text, out.method, out.model, out.prompt.name, out.prompt.version) == (
        "hi", "llm", "toy-model", "echo", "3",
    )  # fmt: skip
    (call,) = client.calls
    assert call["messages"][-1] == {"role": "user", "content": "Say hello"} and call["stage"] == "echo"
    assert call["response_model"] is EchoReply and call["temperature"] == 0.3
    assert stage.messages(WORD) == call["messages"] and stage.prompt() is stage.prompt("echo")  # loaded once

    client = FakeClient(Completion(text="{...}", parsed=EchoReply(text="far too long a reply")))
    gated = run(stage, WORD, client)
    assert isinstance(gated, Reject) and gated.reason == "too_long"
    client = FakeClient(Completion(text='{"text": ""}', parsed=EchoReply(text="")))
    empty = run(stage, WORD, client)
    assert (empty.reason, empty.detail, empty.extra) == ("empty", "no text", {"raw": '{"text": ""}'})


def test_a_failed_call_or_a_reply_of_the_wrong_model_is_an_llm_error_with_the_raw_reply(prompt_dir):
    stage = EchoStage("llm", prompt_dir=prompt_dir)
    raw = "x" * (MAX_RAW_CHARS + 50)
    failed = run(stage, WORD, FakeClient(Completion(text=raw, error="invalid structured output")))
    assert (failed.stage, failed.reason, failed.key, failed.detail) == (
        "echo", "llm_error", "w1", "invalid structured output",
    )  # fmt: skip
    assert failed.extra == {"raw": "x" * MAX_RAW_CHARS}
    no_text = run(stage, WORD, FakeClient(Completion(text=None, error="http 500 after 3 attempts")))
    assert (no_text.detail, no_text.extra) == ("http 500 after 3 attempts", {})
    wrong = run(stage, WORD, FakeClient(Completion(text='{"score": 1}', parsed=OtherReply(score=1))))
    assert (wrong.reason, wrong.detail) == ("llm_error", "reply is not a EchoReply")
    assert wrong.extra == {"raw": '{"score": 1}'}


def test_ask_composes_calls_and_provenance_names_every_prompt(prompt_dir):
    stage = TwoCalls("llm", prompt_dir=prompt_dir)
    client = FakeClient(
        Completion(text='{"score": 2}', parsed=OtherReply(score=2)), Completion(text="", error="timeout")
    )
    answer = asyncio.run(stage.ask(client, WORD, "score", {}))
    assert answer.reply == OtherReply(score=2) and answer.raw == '{"score": 2}'
    failed = asyncio.run(stage.ask(client, WORD, "echo", {"word": "hi"}, where="step 2 of 3"))
    assert isinstance(failed, Reject) and failed.detail == "step 2 of 3: timeout"
    provenance = stage.provenance(client)
    assert [ref.name for ref in provenance["prompts"]] == ["echo", "score"] and "prompt" not in provenance
    assert provenance["model"] == "toy-model"


def test_stage_backend_turns_the_llm_choice_into_a_stage_backend():
    assert [stage_backend(choice) for choice in LLM_CHOICES] == ["rules", "llm"]
    assert all(stage_backend(choice) in BACKENDS for choice in LLM_CHOICES)
    with pytest.raises(BadInputError, match=r"unknown --llm 'llm' \(choose from: rules, openai\)"):
        stage_backend("llm")

"""An LLM judge that labels a response correct, incorrect or not attempted (SimpleQA style, as IRB does).

One or two judges (different models) see the question, the gold answers and the response. Each verdict
scores 1 for "correct" and 0 otherwise; the judge score of a response is the mean over the judges that
answered. A failed judge call is kept as a verdict with its error, never dropped.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from irbgen.errors import IrbgenError
from irbgen.llm.prompts import Prompt, load_prompt

if TYPE_CHECKING:
    from irbgen.llm.client import LLMClient

JUDGE_PROMPT = "qa_judge"
JUDGE_TEMPERATURE = 0.0
LABELS = ("correct", "incorrect", "not_attempted")
FALSE_PREMISE_GOLD = (
    "none: the question rests on a false premise, so the correct response says so "
    '(e.g. "False premise question")'
)


class JudgeVerdict(BaseModel):
    """The judge's structured reply."""

    model_config = ConfigDict(extra="ignore")

    label: Literal["correct", "incorrect", "not_attempted"]


def load_judge_prompt(directory: Path | str | None = None) -> Prompt:
    """The judge prompt, its output model resolved to JudgeVerdict."""
    return load_prompt(JUDGE_PROMPT, directory, models={"JudgeVerdict": JudgeVerdict})


def gold_text(gold: list[str], false_premise: bool) -> str:
    """The gold answers as the judge reads them; answers are joined by " | " since they may hold commas."""
    if false_premise:
        return FALSE_PREMISE_GOLD
    return " | ".join(gold)


def label_score(label: str | None) -> float:
    """1 for "correct", 0 for any other label."""
    return 1.0 if label == "correct" else 0.0


def judge_score(verdicts: list[dict[str, Any]]) -> float | None:
    """Mean verdict score over the judges that answered; None when none did."""
    scores = [label_score(v["label"]) for v in verdicts if v.get("error") is None and v.get("label")]
    return sum(scores) / len(scores) if scores else None


@dataclass
class Judge:
    """One judge: a client for its model, the judge prompt and the stage its calls are booked under."""

    client: LLMClient
    model: str
    prompt: Prompt
    stage: str = "qa.judge"
    temperature: float = JUDGE_TEMPERATURE

    def describe(self) -> dict[str, Any]:
        """What config.json records about this judge."""
        return {
            "model": self.model,
            "prompt": {"name": self.prompt.name, "version": self.prompt.version},
            "temperature": self.temperature,
            "stage": self.stage,
        }

    async def verdict(
        self, question: str, gold: list[str], false_premise: bool, prediction: str
    ) -> dict[str, Any]:
        """This judge's verdict as a record: model, label, score, error and the call's usage."""
        messages = self.prompt.render(
            question=question, gold=gold_text(gold, false_premise), prediction=prediction or "(empty)"
        )
        completion = await self.client.complete(
            messages,
            stage=self.stage,
            response_model=self.prompt.output_model or JudgeVerdict,
            temperature=self.temperature,
        )
        label = None
        error = completion.error
        if error is None:
            parsed = completion.parsed
            if isinstance(parsed, JudgeVerdict):
                label = parsed.label
            else:
                error = "judge reply was not a JudgeVerdict"
        return {
            "model": self.model,
            "label": label,
            "score": label_score(label) if label is not None else None,
            "error": error,
            "completion": completion.to_record(),
        }


async def judge_prediction(
    judges: list[Judge], question: str, gold: list[str], false_premise: bool, prediction: str
) -> dict[str, Any]:
    """Every judge's verdict on one response and their mean score (None if no judge answered)."""
    verdicts = list(
        await asyncio.gather(*(judge.verdict(question, gold, false_premise, prediction) for judge in judges))
    )
    return {"score": judge_score(verdicts), "verdicts": verdicts}


def summarize_verdicts(
    judges: list[dict[str, Any]], results: Iterable[dict[str, Any] | None]
) -> dict[str, Any] | None:
    """How many samples the judges scored, and label counts per judge model.

    A result of None is a sample not put to the judges (its prediction failed). `judged` samples have a
    judge score; `failed` ones were put to the judges and every call failed, so they have none.
    """
    if not judges:
        return None
    labels: dict[str, Counter[str]] = {judge["model"]: Counter() for judge in judges}
    samples = judged = failed = failed_calls = 0
    for result in results:
        samples += 1
        if result is None:
            continue
        if judge_score(result["verdicts"]) is None:
            failed += 1
        else:
            judged += 1
        for verdict in result["verdicts"]:
            error = verdict.get("error") is not None
            failed_calls += error
            labels.setdefault(verdict["model"], Counter())["failed" if error else verdict["label"]] += 1
    return {
        "samples": samples,
        "judged": judged,
        "failed": failed,
        "failed_calls": failed_calls,
        "labels": {model: dict(sorted(counts.items())) for model, counts in labels.items()},
        "judges": judges,
    }


def judged_text(summary: dict[str, Any]) -> str:
    """'judge: 0 of 100 judged (100 failed)': how many samples the judge score is over."""
    text = f"judge: {summary['judged']} of {summary['samples']} judged"
    extra = [f"{summary['failed']} failed"] if summary.get("failed") else []
    unasked = summary["samples"] - summary["judged"] - summary.get("failed", 0)
    if unasked:
        extra.append(f"{unasked} not asked: no prediction")
    return text + (f" ({'; '.join(extra)})" if extra else "")


class JudgeFailed(IrbgenError):
    """The judges were asked and not one call succeeded: the run lacks the score it was asked for (exit 1)."""


def check_judged(summary: dict[str, Any] | None) -> None:
    """JudgeFailed when samples were put to the judges and none got a verdict (a wrong judge model or URL,
    a judge that does not answer in JSON): one line, never a silent 0 and exit 0."""
    if summary and summary["judged"] == 0 and summary.get("failed"):
        raise JudgeFailed(
            f"{judged_text(summary)}: every judge call failed, so there is no judge score (the errors are "
            "in predictions.jsonl; fix --judge-model or --judge-base-url, then rerun to ask the judge again)"
        )

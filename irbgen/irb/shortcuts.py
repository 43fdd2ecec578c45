"""Multi-hop shortcuts: multi-hop plans whose final answer already stands in a first-hop document.

A retriever that finds the first hop's page, and a reader of that page, then answer without the later
hops, so the question does not test multi-hop retrieval. Such plans are rejected as
"multi_hop_shortcut" (stage "plans"). The test is literal, the one that keeps answers out of questions
(`questions.answer_in`): the answer's words, or all its numbers in digits or words, or a person's surname
occur in the document's main text. It errs towards dropping a plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import cache

from irbgen.irb.records import QuestionPlan
from irbgen.records import Reject
from irbgen.text import answer_in, normalize

STAGE = "plans"
REASON = "multi_hop_shortcut"


def shortcut_document(plan: QuestionPlan, normalised: Callable[[str], str | None]) -> str | None:
    """The first first-hop document (by id) whose text holds the plan's final answer, else None.

    `normalised(document id)` gives the document's text passed through `questions.normalize`, or None.
    """
    if len(plan.hops) < 2:
        return None
    for document in sorted(plan.hops[0].documents):
        text = normalised(document)
        if text is not None and answer_in(text, plan.answer, plan.answer_type):
            return document
    return None


def normaliser(documents: Mapping[str, str]) -> Callable[[str], str | None]:
    """document id -> its text passed through `normalize` (each document once, when first asked), or None."""

    @cache
    def normalised(document: str) -> str | None:
        text = documents.get(document)
        return None if text is None else normalize(text)

    return normalised


def drop_shortcuts(
    plans: Iterable[QuestionPlan], documents: Mapping[str, str]
) -> tuple[list[QuestionPlan], list[Reject]]:
    """(kept plans, rejects) over plans; `documents` maps document id -> main text."""
    normalised = normaliser(documents)
    kept: list[QuestionPlan] = []
    rejects: list[Reject] = []
    for plan in plans:
        document = shortcut_document(plan, normalised)
        if document is None:
            kept.append(plan)
            continue
        detail = f"the answer {plan.answer!r} is in {document}, a document of the first hop"
        rejects.append(Reject(stage=STAGE, reason=REASON, key=plan.id, detail=detail))
    return kept, rejects

"""Answer scoring for QA evaluation (and retrieval scoring of the documents shown): pure functions, no I/O.

Three conventions meet here. PhantomWiki compares answer *sets*: the reply is split on a separator and
each part normalised, then precision, recall, F1 and exact match compare that set with the gold set.
MINTQA counts a reply correct when a gold answer appears in it (containment accuracy). IRB lets the
reader say "I don't know" (an abstention) or "False premise question"; for a false-premise sample, which
has no gold answers, the reply is correct exactly when it flags the false premise.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from irbgen.eval.metrics import per_query

ABSTENTION = "I don't know"
FALSE_PREMISE = "False premise question"
ANSWER_SEPARATOR = ", "  # what the prompts ask the model to join several answers with

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”")
_WHITESPACE = re.compile(r"\s+")
# Normalised forms that count as declining to answer. "dont" because normalising drops the apostrophe.
_ABSTAIN = re.compile(r"^(i dont know|i do not know)\b")
_FALSE_PREMISE = re.compile(r"\bfalse premise\b")


class SetScores(NamedTuple):
    """Answer-set precision, recall, F1 and exact match (1.0 when the two sets are equal)."""

    precision: float
    recall: float
    f1: float
    em: float


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, drop punctuation and articles, collapse whitespace."""
    text = text.lower().translate(_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return _WHITESPACE.sub(" ", text).strip()


def split_answers(text: str, separator: str = ",") -> list[str]:
    """The answers in a reply joined by `separator`, stripped, empty parts and repeats dropped."""
    seen: set[str] = set()
    answers = []
    for part in text.split(separator):
        part = part.strip()
        if part and part not in seen:
            seen.add(part)
            answers.append(part)
    return answers


def answer_set(answers: Iterable[str]) -> frozenset[str]:
    """Normalised answers as a set; answers that normalise to nothing are dropped."""
    return frozenset(n for n in map(normalize_answer, answers) if n)


def set_scores(predicted: Iterable[str], gold: Iterable[str]) -> SetScores:
    """Precision, recall, F1 and EM of predicted answers against gold answers, compared as normalised sets.

    An empty prediction scores 0 everywhere (nothing was predicted, so nothing is right); two empty sets
    are equal and score 1, which only happens when a caller scores a false-premise sample this way.
    """
    pred, true = answer_set(predicted), answer_set(gold)
    if not pred and not true:
        return SetScores(1.0, 1.0, 1.0, 1.0)
    hits = len(pred & true)
    precision = hits / len(pred) if pred else 0.0
    recall = hits / len(true) if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return SetScores(precision, recall, f1, float(pred == true))


def contains_answer(prediction: str, gold: Iterable[str]) -> bool:
    """MINTQA accuracy: some gold answer occurs in the normalised prediction, on word boundaries.

    Word boundaries keep "1" from matching inside "10" or "Ann" inside "Anna".
    """
    haystack = f" {normalize_answer(prediction)} "
    return any(f" {needle} " in haystack for needle in answer_set(gold))


def is_abstention(prediction: str) -> bool:
    """Whether the reply declines to answer ("I don't know" and close variants)."""
    return bool(_ABSTAIN.match(normalize_answer(prediction)))


def flags_false_premise(prediction: str) -> bool:
    """Whether the reply says the question rests on a false premise ("False premise question")."""
    return bool(_FALSE_PREMISE.search(normalize_answer(prediction)))


def predicted_answers(prediction: str, separator: str = ",") -> list[str]:
    """The answers a reply gives: none for an abstention or a false-premise flag, else its parts."""
    if is_abstention(prediction) or flags_false_premise(prediction):
        return []
    return split_answers(prediction, separator)


def score_prediction(
    prediction: str, gold: list[str], false_premise: bool, separator: str = ","
) -> dict[str, float]:
    """Every per-query answer measure of one reply, as floats.

    For a false-premise sample all answer measures are 1 when the reply flags the false premise and 0
    otherwise, and "false_premise_detected" is added. For any other sample, flagging a false premise or
    abstaining gives no answers, so it scores 0.
    """
    if false_premise:
        detected = float(flags_false_premise(prediction))
        return {
            "precision": detected,
            "recall": detected,
            "f1": detected,
            "em": detected,
            "contains": detected,
            "false_premise_detected": detected,
        }
    answers = predicted_answers(prediction, separator)
    scores = set_scores(answers, gold)
    return {
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f1,
        "em": scores.em,
        "contains": float(bool(answers) and contains_answer(prediction, gold)),
    }


def false_premise_detection_rate(outcomes: Iterable[tuple[bool, str]]) -> float | None:
    """Share of false-premise samples whose reply flags the false premise; None if there are none.

    `outcomes` holds (sample is false-premise, prediction) pairs; valid-premise samples are ignored.
    """
    flags = [flags_false_premise(prediction) for is_fp, prediction in outcomes if is_fp]
    return sum(flags) / len(flags) if flags else None


def false_alarm_rate(outcomes: Iterable[tuple[bool, str]]) -> float | None:
    """Share of valid-premise samples whose reply wrongly flags a false premise; None if there are none."""
    flags = [flags_false_premise(prediction) for is_fp, prediction in outcomes if not is_fp]
    return sum(flags) / len(flags) if flags else None


def retrieval_measures(k: int) -> list[str]:
    """The retrieval measures reported for a QA method that shows documents: nDCG@k and R@k."""
    return [f"nDCG@{k}", f"R@{k}"]


def retrieval_scores(
    qrels: Mapping[str, Mapping[str, int]], shown: Mapping[str, list[str]], k: int
) -> dict[str, dict[str, float]]:
    """nDCG@k and R@k (trec_eval) of the documents shown per query, in the order shown.

    Only queries that have qrels are scored; a query shown no documents scores 0.
    """
    judged = {qid: qrels[qid] for qid in shown if qrels.get(qid)}
    # The i-th of n documents gets score n - i, so the order shown is the ranking trec_eval sees.
    run = {
        qid: {doc_id: float(len(docs) - i) for i, doc_id in enumerate(docs)}
        for qid, docs in shown.items()
        if qid in judged and docs
    }
    return per_query(judged, run, retrieval_measures(k)) if judged else {}

"""Answer scoring (normalisation, answer sets, containment, abstention, false premises) and retrieval of
the documents shown, with values worked out by hand."""

from __future__ import annotations

import math

import pytest

from irbgen.eval.qa.scoring import (
    SetScores,
    answer_set,
    contains_answer,
    false_alarm_rate,
    false_premise_detection_rate,
    flags_false_premise,
    is_abstention,
    normalize_answer,
    predicted_answers,
    retrieval_scores,
    score_prediction,
    set_scores,
    split_answers,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Malik Marciano", "malik marciano"),
        ("  The   Beatles!  ", "beatles"),
        ("an apple, a pear", "apple pear"),
        ("Theatre", "theatre"),  # "the" inside a word stays
        ("Anna", "anna"),  # so does "an"
        ("O'Brien-Smith", "obriensmith"),
        ("1658-10-22", "16581022"),
        ("“Quoted”\ttext\n", "quoted text"),
        ("", ""),
        ("the a an", ""),
        ("I don't know.", "i dont know"),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "separator", "expected"),
    [
        ("A, B, C", ",", ["A", "B", "C"]),
        ("A,B", ",", ["A", "B"]),
        ("  A  ", ",", ["A"]),
        ("A, , B,", ",", ["A", "B"]),
        ("A, A, B", ",", ["A", "B"]),
        ("", ",", []),
        ("A; B, C", ";", ["A", "B, C"]),
        ("x and y", " and ", ["x", "y"]),
    ],
)
def test_split_answers(text: str, separator: str, expected: list[str]) -> None:
    assert split_answers(text, separator) == expected


def test_answer_set_normalises_and_drops_empty() -> None:
    assert answer_set(["The Cat", "cat", "  ", "the", "Dog!"]) == frozenset({"cat", "dog"})


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        # identical sets, whatever the case, punctuation and order
        (["limor pohl", "Rajiv Albanese."], ["Rajiv Albanese", "Limor Pohl"], SetScores(1.0, 1.0, 1.0, 1.0)),
        # one of two gold answers: P 1, R 1/2, F1 2/3
        (["Limor Pohl"], ["Limor Pohl", "Rajiv Albanese"], SetScores(1.0, 0.5, 2 / 3, 0.0)),
        # one right and one wrong out of one gold: P 1/2, R 1, F1 2/3
        (["Limor Pohl", "X"], ["Limor Pohl"], SetScores(0.5, 1.0, 2 / 3, 0.0)),
        # 2 of 3 predicted right, 2 of 4 gold found: P 2/3, R 1/2, F1 = 2*(1/3)/(7/6) = 4/7
        (["a1", "b2", "zz"], ["a1", "b2", "c3", "d4"], SetScores(2 / 3, 0.5, 4 / 7, 0.0)),
        (["X"], ["Y"], SetScores(0.0, 0.0, 0.0, 0.0)),
        ([], ["Y"], SetScores(0.0, 0.0, 0.0, 0.0)),
        # duplicates after normalisation collapse: {"cat"} vs {"cat"}
        (["The cat", "cat"], ["Cat"], SetScores(1.0, 1.0, 1.0, 1.0)),
        # counts are compared as strings: {"0", "2"} vs {"0", "1", "2"}
        (["0", "2"], ["0", "1", "2"], SetScores(1.0, 2 / 3, 0.8, 0.0)),
        ([], [], SetScores(1.0, 1.0, 1.0, 1.0)),
    ],
)
def test_set_scores(predicted: list[str], gold: list[str], expected: SetScores) -> None:
    assert set_scores(predicted, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("The answer is Limor Pohl.", ["Limor Pohl"], True),
        ("limor pohl", ["Rajiv Albanese", "Limor Pohl"], True),
        ("Rajiv", ["Rajiv Albanese"], False),
        ("10", ["1"], False),  # word boundaries: "1" is not in "10"
        ("Anna Smith", ["Ann"], False),
        ("She has 1 sister", ["1"], True),
        ("the Beatles", ["Beatles"], True),
        ("", ["x"], False),
        ("anything", [], False),
    ],
)
def test_contains_answer(prediction: str, gold: list[str], expected: bool) -> None:
    assert contains_answer(prediction, gold) is expected


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("I don't know", True),
        ("i dont know.", True),
        ("I do not know the answer", True),
        ("I don’t know", True),
        ("Limor Pohl", False),
        ("Who knows? I don't know", False),  # only a reply that starts by declining
        ("", False),
    ],
)
def test_is_abstention(prediction: str, expected: bool) -> None:
    assert is_abstention(prediction) is expected


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("False premise question", True),
        ("false premise question.", True),
        ("This question has a FALSE PREMISE.", True),
        ("False-premise question", False),  # normalising turns the hyphen into "falsepremise"
        ("False", False),
        ("premise", False),
        ("", False),
    ],
)
def test_flags_false_premise(prediction: str, expected: bool) -> None:
    assert flags_false_premise(prediction) is expected


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("A, B", ["A", "B"]),
        ("I don't know", []),
        ("False premise question", []),
        ("", []),
    ],
)
def test_predicted_answers(prediction: str, expected: list[str]) -> None:
    assert predicted_answers(prediction) == expected


def test_score_prediction_valid_premise() -> None:
    scores = score_prediction("Limor Pohl, X", ["Limor Pohl", "Rajiv Albanese"], false_premise=False)
    # P 1/2, R 1/2, F1 1/2, EM 0; "limor pohl" occurs in the reply
    assert scores == pytest.approx({"precision": 0.5, "recall": 0.5, "f1": 0.5, "em": 0.0, "contains": 1.0})
    assert "false_premise_detected" not in scores


def test_score_prediction_exact() -> None:
    scores = score_prediction("rajiv albanese, Limor Pohl", ["Limor Pohl", "Rajiv Albanese"], False)
    assert scores == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "em": 1.0, "contains": 1.0}


@pytest.mark.parametrize("prediction", ["I don't know", "False premise question", ""])
def test_score_prediction_no_answer_scores_zero(prediction: str) -> None:
    scores = score_prediction(prediction, ["know"], False)
    assert scores == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "em": 0.0, "contains": 0.0}


def test_score_prediction_false_premise_flagged() -> None:
    scores = score_prediction("False premise question", [], false_premise=True)
    assert scores == {
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
        "em": 1.0,
        "contains": 1.0,
        "false_premise_detected": 1.0,
    }


@pytest.mark.parametrize("prediction", ["C. Smith", "I don't know", ""])
def test_score_prediction_false_premise_missed(prediction: str) -> None:
    scores = score_prediction(prediction, [], false_premise=True)
    assert set(scores.values()) == {0.0}
    assert scores["false_premise_detected"] == 0.0


def test_score_prediction_separator() -> None:
    assert score_prediction("X; Y", ["X", "Y"], False, separator=";")["em"] == 1.0
    assert score_prediction("X; Y", ["X", "Y"], False)["em"] == 0.0  # one answer "x y"


def test_false_premise_detection_rate() -> None:
    outcomes = [
        (True, "False premise question"),
        (True, "C. Smith"),
        (True, "This has a false premise"),
        (True, "I don't know"),
        (False, "False premise question"),  # ignored: not a false-premise sample
    ]
    assert false_premise_detection_rate(outcomes) == 0.5
    assert false_premise_detection_rate([(False, "x")]) is None
    assert false_premise_detection_rate([]) is None


def test_false_alarm_rate() -> None:
    outcomes = [(False, "False premise question"), (False, "A"), (False, "B"), (True, "False premise")]
    assert false_alarm_rate(outcomes) == pytest.approx(1 / 3)
    assert false_alarm_rate([(True, "x")]) is None


def test_retrieval_scores_by_hand() -> None:
    qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d1": 1}, "q3": {}}
    shown = {"q1": ["d3", "d1"], "q2": [], "q3": ["d1"], "q4": ["d1"]}
    scores = retrieval_scores(qrels, shown, k=2)
    # q1: DCG = 1/log2(3); ideal DCG = 1 + 1/log2(3); one of two relevant documents found
    ideal = 1 + 1 / math.log2(3)
    assert scores["q1"] == pytest.approx({"nDCG@2": (1 / math.log2(3)) / ideal, "R@2": 0.5})
    assert scores["q2"] == {"nDCG@2": 0.0, "R@2": 0.0}  # shown nothing
    assert set(scores) == {"q1", "q2"}  # q3 and q4 have no qrels
    # the order shown is the ranking: d1 first scores 1
    assert retrieval_scores(qrels, {"q2": ["d1", "d9"]}, k=2)["q2"] == {"nDCG@2": 1.0, "R@2": 1.0}
    assert retrieval_scores(qrels, {"q2": ["d9", "d8", "d1"]}, k=2)["q2"] == {"nDCG@2": 0.0, "R@2": 0.0}
    assert retrieval_scores({}, {"q1": ["d1"]}, k=2) == {}

"""Trajectory retrieval of QA runs: what a ReAct agent (or rag's one retrieval) found, against the qrels.

The measures are checked on hand-made cases, then end to end: the loopback server scripts a ReAct
trajectory whose retrieved documents are known, and rag's retrieved list is scored as one step.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from irbgen.benchmark import write_benchmark
from irbgen.eval.qa.run import QAOptions, run_qa
from irbgen.eval.qa.trajectory import (
    hop_summary,
    ranked_union,
    steps_of,
    trajectory_ndcg,
    trajectory_retrieval,
)
from irbgen.eval.report import write_report
from irbgen.llm.settings import LLMSettings
from irbgen.schema import Document, Hop, Manifest, Provenance, Sample
from irbgen.testing.openai_server import OpenAIStubServer

KEY_ENV = "IRBGEN_TEST_TRAJECTORY_KEY"


# ---------------------------------------------------------------------------------------- by hand


def test_steps_and_ranked_union() -> None:
    react = {"trajectory": [{"documents": ["c"]}, {"action": "Finish[x]"}, {"documents": ["a", "c", "b"]}],
             "retrieved": ["c", "a", "b"]}  # fmt: skip
    assert steps_of(react) == [["c"], [], ["a", "c", "b"]]  # a step that showed nothing is still a step
    assert steps_of({"retrieved": ["x", "y"]}) == [["x", "y"]]  # rag: one step
    assert steps_of({"retrieved": []}) == []
    assert ranked_union([["c"], [], ["a", "c", "b"]]) == ["c", "a", "b"]


def test_trajectory_measures_by_hand() -> None:
    steps = [["c"], ["a"], [], ["b", "a"]]
    value = trajectory_retrieval(steps, ["a", "b", "d"], [(0, ["a"]), (1, ["b", "d"]), (2, [])])
    assert value == {
        "evidence_recall": 2 / 3,  # a and b of a, b, d
        "retrieved_precision": 2 / 3,  # a and b of c, a, b
        "steps": 4,
        "hops": {"0": {"recall": 1.0, "first_step": 2}, "1": {"recall": 0.5, "first_step": 4}},
    }
    nothing = trajectory_retrieval([], ["a"], [(0, ["a"])])
    assert nothing["evidence_recall"] == 0.0 and nothing["retrieved_precision"] == 0.0
    assert nothing["hops"] == {"0": {"recall": 0.0, "first_step": None}}


def test_trajectory_ndcg_by_hand() -> None:
    qrels = {"q": {"a": 1, "b": 1}, "r": {"a": 1}, "s": {"a": 1}, "unjudged": {}}
    unions = {"q": ["c", "a", "b"], "r": ["a"], "s": [], "unjudged": ["a"]}
    ideal = 1 + 1 / math.log2(3)
    assert trajectory_ndcg(qrels, unions) == {
        "q": pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal),
        "r": 1.0,
        "s": 0.0,  # nothing retrieved
    }


def test_hop_summary_by_hand() -> None:
    values = [
        {"hops": {"0": {"recall": 1.0, "first_step": 2}, "1": {"recall": 0.5, "first_step": 4}}},
        {"hops": {"0": {"recall": 0.0, "first_step": None}}},
    ]
    assert hop_summary(values) == {
        "0": {"evidence_recall": 0.5, "found": 0.5, "first_step": 2.0, "count": 2},
        "1": {"evidence_recall": 0.5, "found": 1.0, "first_step": 4.0, "count": 1},
    }


# ------------------------------------------------------------------------------------------ end to end

DOCS = [
    Document(_id="da", title="Ada", text="Ada is the mother of Byron."),
    Document(_id="db", title="Byron", text="Byron wrote poems about the sea."),
    Document(_id="dc", title="Curie", text="Curie studied radium."),
    Document(_id="dd", title="Darwin", text="Darwin sailed on the Beagle."),
]
PROVENANCE = Provenance(generator="test")
SAMPLES = [
    Sample(id="two", question="What did the child of Ada write?", answers=["poems"], hops=2, source="phantom",
           evidence=["da", "db"], provenance=PROVENANCE,
           chain=[Hop(index=0, operation="relation", question="Who is the child of Ada?", answers=["Byron"],
                      evidence=["da"]),
                  Hop(index=1, operation="relation", question="What did Byron write?", answers=["poems"],
                      evidence=["db"])]),
    Sample(id="one", question="What did Darwin sail on?", answers=["the Beagle"], hops=1, source="phantom",
           evidence=["dd"], provenance=PROVENANCE,
           chain=[Hop(index=0, operation="relation", question="What did Darwin sail on?",
                      answers=["the Beagle"], evidence=["dd"])]),
]  # fmt: skip

# The agent's script per question: one reply per step. "two" reads Curie (not evidence), then Ada (hop
# 0's evidence) at step 2, then Byron (hop 1's) at step 3, and answers right; "one" reads Ada only and
# answers wrong, having found none of its evidence.
SCRIPT = {
    "What did the child of Ada write?": [
        "Thought: start\nAction: RetrieveArticle[Curie]",
        "Thought: ada\nAction: RetrieveArticle[Ada]",
        "Thought: byron\nAction: RetrieveArticle[Byron]",
        "Thought: done\nAction: Finish[poems]",
    ],
    "What did Darwin sail on?": [
        "Thought: guess\nAction: RetrieveArticle[Ada]",
        "Thought: done\nAction: Finish[a raft]",
    ],
}


def responder(request: dict[str, Any]) -> str:
    messages = request["messages"]
    user = next(m["content"] for m in messages if m["role"] == "user")
    question = re.search(r"^Question: (.*)$", user, re.M).group(1)
    if "RetrieveArticle[" in messages[0]["content"]:
        return SCRIPT[question][sum(m["role"] == "assistant" for m in messages)]
    return "poems"  # rag


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    write_benchmark(out, DOCS, SAMPLES, Manifest(tool_version="0", source="phantom", name="t", command="t"))
    return out


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with OpenAIStubServer(responder) as stub:
        yield stub


def settings(server: OpenAIStubServer) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, model="reader", api_key_env=KEY_ENV, max_retries=1,
                       backoff_base=0.0, timeout=10.0)  # fmt: skip


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_scripted_react_trajectory_is_scored(bench: Path, server, tmp_path: Path) -> None:
    out = tmp_path / "react"
    run_qa(bench, out, QAOptions("react", settings(server), max_steps=5))
    predictions = {row["id"]: row for row in lines(out / "predictions.jsonl")}
    assert predictions["two"]["retrieved"] == ["dc", "da", "db"]
    two = predictions["two"]["trajectory_retrieval"]
    ideal = 1 + 1 / math.log2(3)
    assert two == {
        "evidence_recall": 1.0,
        "retrieved_precision": pytest.approx(2 / 3),
        "steps": 4,
        "hops": {"0": {"recall": 1.0, "first_step": 2}, "1": {"recall": 1.0, "first_step": 3}},
        "trajectory_nDCG": pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal),
    }
    one = predictions["one"]["trajectory_retrieval"]
    assert one["evidence_recall"] == one["retrieved_precision"] == one["trajectory_nDCG"] == 0.0
    assert one["hops"] == {"0": {"recall": 0.0, "first_step": None}}

    metrics = json.loads((out / "metrics.json").read_text())
    overall = metrics["overall"]
    assert overall["evidence_recall"] == 0.5
    assert overall["retrieved_precision"] == pytest.approx(1 / 3)
    assert overall["trajectory_nDCG"] == pytest.approx(two["trajectory_nDCG"] / 2)
    assert metrics["retrieval"]["by_hop"] == {
        "0": {"evidence_recall": 0.5, "found": 0.5, "first_step": 2.0, "count": 2},
        "1": {"evidence_recall": 1.0, "found": 1.0, "first_step": 3.0, "count": 1},
    }
    assert metrics["by"]["hops"]["2"]["evidence_recall"] == 1.0 and metrics["by"]["hops"]["2"]["f1"] == 1.0
    assert metrics["by"]["hops"]["1"]["evidence_recall"] == 0.0 and metrics["by"]["hops"]["1"]["f1"] == 0.0
    per_query = {row["query_id"]: row for row in lines(out / "per_query.jsonl")}
    assert per_query["two"]["retrieval"]["evidence_recall"] == 1.0

    # the report draws evidence recall against F1 per hop count
    report = write_report([out], tmp_path / "report")
    assert (report / "qa-evidence-recall-vs-f1.png").is_file()
    assert "Evidence recall and F1 by hops" in (report / "report.md").read_text()


def test_rag_is_a_trajectory_of_one_step(bench: Path, server, tmp_path: Path) -> None:
    out = tmp_path / "rag"
    run_qa(bench, out, QAOptions("rag", settings(server), k=2))
    for row in lines(out / "predictions.jsonl"):
        retrieved, value = row["retrieved"], row["trajectory_retrieval"]
        relevant = set(SAMPLES[0 if row["id"] == "two" else 1].evidence)
        assert 1 <= len(retrieved) <= 2 and value["steps"] == 1  # BM25 shows only matching documents
        assert value["evidence_recall"] == len(relevant & set(retrieved)) / len(relevant)
        assert value["retrieved_precision"] == len(relevant & set(retrieved)) / len(retrieved)
        for hop in value["hops"].values():
            assert hop["first_step"] == (1 if hop["recall"] else None)


def test_an_old_evaluation_without_trajectory_fields_still_reports(bench: Path, server, tmp_path) -> None:
    out = tmp_path / "old"
    run_qa(bench, out, QAOptions("react", settings(server), max_steps=5))
    measures = ("evidence_recall", "retrieved_precision", "trajectory_nDCG")
    metrics = json.loads((out / "metrics.json").read_text())
    cells_by = [cell for values in metrics["by"].values() for cell in values.values()]
    for cells in [metrics["overall"], *cells_by]:
        for key in [key for key in cells if key.startswith(measures)]:
            del cells[key]
    del metrics["retrieval"]["by_hop"]
    (out / "metrics.json").write_text(json.dumps(metrics))
    rows = lines(out / "predictions.jsonl")
    for row in rows:
        del row["trajectory_retrieval"]
    (out / "predictions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = write_report([out], tmp_path / "report")
    assert (report / "report.md").is_file()
    assert not (report / "qa-evidence-recall-vs-f1.png").exists()

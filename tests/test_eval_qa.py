"""QA evaluation end to end against the real loopback OpenAI-compatible server, plus the parsers it uses.

The responder answers from the request alone, deterministically: closed-book says "I don't know", rag
names the first document it was shown, cot reasons and names the first document, react reads the
article of the person the question names and then finishes, and the judge says "correct" exactly when
the response is the whole gold answer set. Every run is on the same 16-question phantom benchmark.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irbgen.benchmark import read_qrels, read_samples, write_benchmark
from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.eval.corpus_index import SearchIndex
from irbgen.eval.qa.judge import gold_text, judge_score, judged_text, summarize_verdicts
from irbgen.eval.qa.methods import METHODS, corpus_context, get_method, parse_reply
from irbgen.eval.qa.react import FORMAT_HELP, STEP_LIMIT, WikiTools, parse_action
from irbgen.eval.qa.run import QAOptions, run_qa
from irbgen.eval.qa.scoring import normalize_answer
from irbgen.llm.settings import LLMSettings, ModelPrice
from irbgen.llm.types import BudgetExceeded
from irbgen.schema import Document, Manifest, Provenance, Sample
from irbgen.testing.openai_server import OpenAIStubServer

SECRET = "sk-test-irbgen-never-written-0123456789"
KEY_ENV = "IRBGEN_TEST_QA_KEY"
OUT_FILES = {"config.json", "predictions.jsonl", "per_query.jsonl", "metrics.json", "ledger.json"}


# ------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("qa") / "bench"
    args = ["phantom", "--n", "60", "--seed", "1", "--depth", "6", "--questions-per-template", "2"]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def samples(bench: Path) -> list[Any]:
    return list(read_samples(bench))


@pytest.fixture(scope="module")
def titles(bench: Path) -> list[str]:
    docs = [json.loads(line) for line in (bench / "corpus.jsonl").read_text().splitlines()]
    return sorted((doc["title"] for doc in docs), key=len, reverse=True)


class Responder:
    """Deterministic replies computed from the request, by which prompt it carries."""

    def __init__(self, titles: list[str]) -> None:
        self.titles = titles

    def __call__(self, request: dict[str, Any]) -> str:
        messages = request["messages"]
        system = messages[0]["content"]
        user = next(m["content"] for m in messages if m["role"] == "user")
        if request.get("response_format"):
            return self.judge(user)
        if "RetrieveArticle[" in system:
            return self.react(messages, re.search(r"^Question: (.*)$", user, re.M).group(1))
        first = re.search(r"^\[1\] Title: (.+)$", user, re.M)
        if "step by step" in system:
            return f"The first document is about {first.group(1)}.\nSo that is it.\nAnswer: {first.group(1)}"
        if first:
            return first.group(1)
        return "I don't know"

    def judge(self, user: str) -> str:
        gold = re.search(r"^Gold answer\(s\): (.*)$", user, re.M).group(1).split(" | ")
        response = re.search(r"^Response: (.*)$", user, re.M).group(1)
        correct = {normalize_answer(response)} == {normalize_answer(g) for g in gold}
        return json.dumps({"label": "correct" if correct else "incorrect"})

    def react(self, messages: list[dict[str, Any]], question: str) -> str:
        turns = sum(m["role"] == "assistant" for m in messages)
        name = next((t for t in self.titles if t in question), None)
        if question.rstrip().endswith("have?") and "How many friends" not in question:
            return f"Thought: keep looking\nAction: Search[{question.split()[-2]}]"  # never finishes
        if name is None:
            if turns == 0:
                return "I should think about this."  # no action: a format error
            return "Thought: no idea\nAction: Finish[I don't know]"
        if turns == 0:
            return f"Thought: read about {name}\nAction: RetrieveArticle[{name}]\nObservation: invented"
        return f"Thought: done\nAction: Finish[{name}]"


@pytest.fixture()
def server(titles: list[str]):
    with OpenAIStubServer(Responder(titles)) as stub:
        yield stub


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)


def settings(server: OpenAIStubServer, model: str = "reader", **extra: Any) -> LLMSettings:
    options = {"max_retries": 1, "backoff_base": 0.0, "timeout": 10.0, "api_key_env": KEY_ENV, **extra}
    return LLMSettings(base_url=server.base_url, model=model, **options)


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


# ------------------------------------------------------------------------------------------ end to end


def test_closed_book_writes_every_file(bench: Path, samples: list[Any], server, tmp_path: Path) -> None:
    out = tmp_path / "closed"
    summary = run_qa(bench, out, QAOptions("closed-book", settings(server)))

    assert OUT_FILES <= {p.name for p in out.iterdir()}
    assert not [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    config = read(out / "config.json")
    assert config["kind"] == "qa" and config["method"] == "closed-book" and config["model"] == "reader"
    assert config["benchmark_name"] and config["base_url"] == server.base_url
    assert config["prompt"] == {"name": "qa_closed_book", "version": "1"}
    assert config["judges"] == [] and config["irbgen_version"]

    predictions = rows(out / "predictions.jsonl")
    assert sorted(row["id"] for row in predictions) == sorted(s.id for s in samples)
    for row in predictions:
        assert row["prediction"] == "I don't know" and row["predicted_answers"] == []
        assert row["error"] is None and row["retrieved"] == [] and row["method"] == "closed-book"
        assert row["metrics"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "em": 0.0, "contains": 0.0}
        assert row["completion"]["usage"]["prompt_tokens"] > 0

    per_query = rows(out / "per_query.jsonl")
    assert [row["query_id"] for row in per_query] == [s.id for s in samples]  # benchmark order
    assert per_query[0]["attributes"]["hops"] == str(samples[0].hops)

    metrics = read(out / "metrics.json")
    assert metrics["queries"] == 16 and metrics["pending"] == 0
    assert metrics["overall"]["f1"] == 0.0 and metrics["abstentions"] == 16 and metrics["failures"] == 0
    assert metrics["abstention_rate"] == 1.0 and metrics["retrieval"] is None
    assert set(metrics["by"]) >= {"hops", "difficulty", "question_type"}
    assert metrics["false_premise"]["detection_rate"] is None  # phantom has no false premises

    ledger = read(out / "ledger.json")["summary"]
    assert ledger["stages"]["qa.closed-book"]["calls"] == 16
    assert summary["calls"] == 16 == server.requests and summary["queries"] == 16
    assert summary["tokens"] > 0 and summary["cost"] == 0.0
    assert summary["usage"] == {"calls": 16, "tokens": summary["tokens"], "cost": 0.0}


def test_rag_with_two_judges_scores_retrieval(
    bench: Path, samples: list[Any], server, tmp_path: Path
) -> None:
    out = tmp_path / "rag"
    options = QAOptions(
        "rag",
        settings(server),
        k=4,
        judge_settings=settings(server, "judge-a"),
        second_judge=settings(server, "judge-b"),
    )
    summary = run_qa(bench, out, options)
    assert server.requests == 16 * 3
    predictions = {row["id"]: row for row in rows(out / "predictions.jsonl")}
    qrels = read_qrels(bench)
    per_query = {row["query_id"]: row for row in rows(out / "per_query.jsonl")}
    for sample in samples:
        row = predictions[sample.id]
        assert len(row["retrieved"]) == 4 and row["error"] is None
        verdicts = row["judge"]["verdicts"]
        assert [v["model"] for v in verdicts] == ["judge-a", "judge-b"]
        correct = {normalize_answer(row["prediction"])} == {normalize_answer(a) for a in sample.answers}
        assert [v["label"] for v in verdicts] == ["correct" if correct else "incorrect"] * 2
        assert row["metrics"]["judge"] == float(correct) == row["metrics"]["em"]
        # recall at 4 by hand: relevant documents shown / relevant documents
        relevant = set(qrels[sample.id])
        expected = len(relevant & set(row["retrieved"])) / len(relevant)
        assert per_query[sample.id]["retrieval"]["R@4"] == pytest.approx(expected)

    metrics = read(out / "metrics.json")
    overall = metrics["overall"]
    assert {"nDCG@4", "R@4", "judge", "f1", "em", "contains"} <= set(overall)
    assert overall["R@4"] == pytest.approx(sum(r["retrieval"]["R@4"] for r in per_query.values()) / 16)
    assert overall["judge"] == pytest.approx(overall["em"])
    assert metrics["judge"]["judged"] == 16 and metrics["judge"]["failed"] == 0
    assert metrics["counts"] == dict.fromkeys(["precision", "recall", "f1", "em", "contains", "judge"], 16)
    assert "nDCG@4" in metrics["by"]["hops"]["1"]
    config = read(out / "config.json")
    assert [j["model"] for j in config["judges"]] == ["judge-a", "judge-b"]
    assert config["judges"][0]["prompt"] == {"name": "qa_judge", "version": "1"}
    assert config["judges"][0]["temperature"] == 0.0 and config["k"] == 4 and config["retriever"] == "bm25"
    stages = read(out / "ledger.json")["summary"]["stages"]
    assert stages["qa.rag"]["calls"] == 16 and stages["qa.judge"]["calls"] == 32
    assert summary["calls"] == 48


def test_react_logs_trajectory_and_documents(
    bench: Path, samples: list[Any], titles, server, tmp_path
) -> None:
    out = tmp_path / "react"
    run_qa(bench, out, QAOptions("react", settings(server), max_steps=3))
    predictions = {row["id"]: row for row in rows(out / "predictions.jsonl")}
    docs = {json.loads(line)["title"]: json.loads(line)["_id"] for line in (bench / "corpus.jsonl").open()}
    kinds = set()
    for sample in samples:
        row = predictions[sample.id]
        trajectory = row["trajectory"]
        assert row["error"] is None and row["steps"] == len(trajectory)
        assert all({"step", "thought", "action", "observation"} <= set(step) for step in trajectory)
        name = next((t for t in titles if t in sample.question), None)
        if sample.question.endswith("have?") and "How many friends" not in sample.question:
            kinds.add("limit")
            assert row["unanswered"] == STEP_LIMIT and row["prediction"] is None and len(trajectory) == 3
            assert trajectory[0]["action"].startswith("Search[") and row["retrieved"]
        elif name is not None:
            kinds.add("named")
            assert row["prediction"] == name and row["unanswered"] is None
            assert trajectory[0]["action"] == f"RetrieveArticle[{name}]"
            assert trajectory[0]["observation"].startswith(f"# {name}")
            assert row["retrieved"] == [docs[name]]
            assert trajectory[1]["action"] == f"Finish[{name}]" and trajectory[1]["observation"] is None
        else:
            kinds.add("format")
            assert trajectory[0]["action"] is None and trajectory[0]["observation"] == FORMAT_HELP
            assert row["prediction"] == "I don't know" and len(trajectory) == 2
    assert kinds == {"limit", "named", "format"}
    metrics = read(out / "metrics.json")
    assert metrics["unanswered"][STEP_LIMIT] == sum(
        r["unanswered"] == STEP_LIMIT for r in predictions.values()
    )
    assert {"nDCG@4", "R@4"} <= set(metrics["overall"])
    # The invented "Observation:" after the action never goes back to the model.
    assert not any("invented" in str(body["messages"]) for body in server.bodies)


def test_cot_in_context_parses_the_answer_line_and_notes_truncation(bench, samples, server, tmp_path) -> None:
    out = tmp_path / "cot"
    run_qa(bench, out, QAOptions("cot", settings(server), limit=2, max_context_tokens=300))
    predictions = rows(out / "predictions.jsonl")
    first_title = json.loads((bench / "corpus.jsonl").open().readline())["title"]
    assert [row["prediction"] for row in predictions] == [first_title] * 2
    notes = read(out / "config.json")["notes"]
    assert len(notes) == 1 and "300" in notes[0] and read(out / "metrics.json")["notes"] == notes
    assert all(len(body["messages"][1]["content"].split()) < 330 for body in server.bodies)


def test_resume_makes_no_new_calls_and_finishes_a_killed_run(bench, samples, server, tmp_path) -> None:
    out = tmp_path / "resume"
    run_qa(bench, out, QAOptions("rag", settings(server)))
    assert server.requests == 16
    again = run_qa(bench, out, QAOptions("rag", settings(server)))
    assert server.requests == 16 and again["calls"] == 0 and again["resumed"] == 16

    # A kill mid-run: 5 whole lines, then half of the sixth.
    path = out / "predictions.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:5]) + lines[5][: len(lines[5]) // 2])
    third = run_qa(bench, out, QAOptions("rag", settings(server)))
    assert server.requests == 16 + 11 and third["calls"] == 11
    ids = [row["id"] for row in rows(path)]
    assert sorted(ids) == sorted(s.id for s in samples) and len(ids) == 16
    assert read(out / "ledger.json")["summary"]["total"]["calls"] == 27  # every run adds up

    with pytest.raises(BadInputError, match="model"):
        run_qa(bench, out, QAOptions("rag", settings(server, "another-model")))
    fresh = run_qa(bench, out, QAOptions("rag", settings(server, "another-model"), resume=False))
    assert fresh["calls"] == 16 and read(out / "config.json")["model"] == "another-model"


def test_server_faults_end_as_recorded_failures_and_are_retried(bench, samples, server, tmp_path) -> None:
    broken = {samples[0].question, samples[3].question}
    server.add_rule(lambda body: any(q in str(body["messages"]) for q in broken), "500")
    out = tmp_path / "faults"
    summary = run_qa(bench, out, QAOptions("closed-book", settings(server)))
    predictions = {row["id"]: row for row in rows(out / "predictions.jsonl")}
    assert len(predictions) == 16
    failed = {sid for sid, row in predictions.items() if row["error"] is not None}
    assert failed == {samples[0].id, samples[3].id}
    for sid in failed:
        assert predictions[sid]["error"].startswith("http 500") and predictions[sid]["prediction"] is None
        assert predictions[sid]["completion"]["attempts"] == 2
    metrics = read(out / "metrics.json")
    assert metrics["failures"] == 2 and metrics["queries"] == 16 and metrics["abstentions"] == 14
    assert metrics["counts"]["f1"] == 14  # the two failed calls are not scored as wrong answers
    for sid in failed:
        assert all(value is None for value in predictions[sid]["metrics"].values())
    assert summary["failures"] == 2
    assert all(reason.startswith("http 500") for reason in metrics["failure_reasons"])

    server.clear_faults()
    before = server.requests
    run_qa(bench, out, QAOptions("closed-book", settings(server)))
    assert server.requests == before + 2  # only the failed samples are asked again
    assert read(out / "metrics.json")["failures"] == 0 and len(rows(out / "predictions.jsonl")) == 16


def test_failed_judge_is_recorded_and_judged_again(bench, samples, server, tmp_path) -> None:
    server.add_rule(lambda body: bool(body.get("response_format")), "503")
    out = tmp_path / "judge-fails"
    options = QAOptions("closed-book", settings(server), limit=3, judge_settings=settings(server, "judge"))
    run_qa(bench, out, options)
    predictions = rows(out / "predictions.jsonl")
    for row in predictions:
        assert row["error"] is None and row["judge"]["score"] is None and "judge" not in row["metrics"]
        assert row["judge"]["verdicts"][0]["error"].startswith("http 503")
    metrics = read(out / "metrics.json")
    assert metrics["judge"]["failed_calls"] == 3 and metrics["judge"]["failed"] == 3
    assert metrics["judge"]["judged"] == 0 and metrics["judge"]["samples"] == 3
    assert metrics["overall"]["judge"] is None and metrics["counts"]["judge"] == 0
    assert metrics["counts"]["f1"] == 3  # the answers were scored; only the judge failed
    assert judged_text(metrics["judge"]) == "judge: 0 of 3 judged (3 failed)"
    from irbgen.eval.report import write_report

    markdown = (write_report([out], tmp_path / "report") / "report.md").read_text()
    assert "judge: 0 of 3 judged (3 failed)" in markdown
    overall = markdown.split("## Question answering")[1].split("### Overall")[1]
    header, _, row = overall.strip().splitlines()[:3]
    cells = dict(zip(header.split("|"), row.split("|"), strict=True))
    assert cells[" judge "].strip() == "n/a"  # no score from failed calls
    assert all(cell["judge"] is None and cell["judge_count"] == 0 for cell in metrics["by"]["hops"].values())

    server.clear_faults()
    before = server.requests
    run_qa(bench, out, options)
    assert server.requests == before + 3  # the judge only: the predictions are kept
    assert all(row["judge"]["verdicts"][0]["label"] == "incorrect" for row in rows(out / "predictions.jsonl"))


def test_limit_spreads_over_templates_and_never_shrinks_a_fuller_result(
    bench, samples, server, tmp_path
) -> None:
    out = tmp_path / "limit"
    summary = run_qa(bench, out, QAOptions("closed-book", settings(server), limit=8))
    asked = [row["query_id"] for row in rows(out / "per_query.jsonl")]
    by_id = {s.id: s for s in samples}
    assert len({by_id[sid].attributes.template_id for sid in asked}) == 8  # one per template of 8
    assert asked == sorted(asked, key=[s.id for s in samples].index)  # benchmark order
    assert summary["queries"] == 8 and server.requests == 8
    assert read(out / "config.json")["limit"] == 8

    with pytest.raises(BadInputError, match=r"holds an evaluation of 8 samples, and --limit 3 would shrink"):
        run_qa(bench, out, QAOptions("closed-book", settings(server), limit=3))
    assert read(out / "metrics.json")["queries"] == 8

    smaller = tmp_path / "limit-3"
    run_qa(bench, smaller, QAOptions("closed-book", settings(server), limit=3))
    assert {row["query_id"] for row in rows(smaller / "per_query.jsonl")} < set(asked)  # nested choices

    before = server.requests
    summary = run_qa(bench, out, QAOptions("closed-book", settings(server)))  # growing resumes
    assert summary["queries"] == 16 and server.requests == before + 8


def test_limited_is_seeded_and_spreads_hop_counts() -> None:
    from irbgen.eval.qa.subset import limited
    from irbgen.schema import Sample

    def sample(number: int, template: int, hops: int) -> Sample:
        return Sample.model_validate({
            "id": f"s{number:03d}", "question": "q?", "answers": ["a"], "hops": hops, "source": "phantom",
            "attributes": {"template_id": template}, "provenance": {"generator": "test"},
        })

    pool = [sample(n, n % 3, 1 + n % 2) for n in range(60)]  # 6 strata of 10
    chosen = limited(pool, 12)
    assert chosen == limited(pool, 12) and len(chosen) == 12
    strata: dict[tuple[int, int], int] = {}
    for one in chosen:
        key = (one.attributes.template_id, one.hops)
        strata[key] = strata.get(key, 0) + 1
    assert sorted(strata.values()) == [2] * 6
    assert limited(pool, None) == pool and limited(pool, 100) == pool
    assert {s.id for s in limited(pool, 5)} < {s.id for s in chosen}


def test_budget_stops_cleanly_and_keeps_what_was_done(bench, samples, server, tmp_path) -> None:
    out = tmp_path / "budget"
    # Each reply bills every token it may use: $0.10. The second call's worst case no longer fits.
    server.usage = lambda request, text: (0, request["max_tokens"])
    prices = {"reader": ModelPrice(prompt=0, completion=1000)}
    priced = settings(server, concurrency=1, max_cost=0.15, budget_max_tokens=100, prices=prices)
    with pytest.raises(BudgetExceeded, match=r"\$0.1000 spent of the \$0.1500 allowed"):
        run_qa(bench, out, QAOptions("closed-book", priced))
    assert server.requests == 1
    assert len(rows(out / "predictions.jsonl")) == 1
    metrics = read(out / "metrics.json")
    assert metrics["queries"] == 1 and metrics["pending"] == 15 and metrics["usage"]["cost"] == 0.1


def test_api_key_is_never_written(bench, server, tmp_path) -> None:
    out = tmp_path / "secret"
    server.add_rule(lambda body: "whose hobby" in str(body["messages"]), "400", message="bad key {api_key}")
    cached = {"cache_dir": out}  # as the CLI does by default: the response cache lives in OUT
    judge = settings(server, "judge", **cached)
    run_qa(bench, out, QAOptions("rag", settings(server, **cached), judge_settings=judge))
    assert (out / "llm-cache.sqlite").is_file()
    errors = [row["error"] for row in rows(out / "predictions.jsonl") if row["error"]]
    assert errors and all("[redacted]" in error for error in errors)  # the failed-call path ran
    assert any("judge" in row for row in rows(out / "predictions.jsonl"))  # and so did the judge
    assert server.auth_headers[0] == f"Bearer {SECRET}"  # the key was sent ...
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path  # ... and written nowhere


def test_bad_inputs(bench, server, tmp_path) -> None:
    known = "closed-book, cot, cot-rag, hop-ablation, in-context, rag, react"
    with pytest.raises(BadInputError, match=known):
        run_qa(bench, tmp_path / "x", QAOptions("oracle", settings(server)))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "corpus.jsonl").write_text("{}\n")
    with pytest.raises(BadInputError, match="not a valid benchmark"):
        run_qa(broken, tmp_path / "y", QAOptions("closed-book", settings(server)))
    with pytest.raises(BadInputError, match="k must be"):
        run_qa(bench, tmp_path / "z", QAOptions("rag", settings(server), k=0))
    assert server.requests == 0


def test_false_premise_questions_are_scored_by_detection(server, tmp_path) -> None:
    docs = [Document(_id="d1", title="Ada", text="Ada wrote the first program in 1843.")]
    made = Provenance(generator="test")
    samples = [
        Sample(
            id="q1",
            question="When did Ada write the first program?",
            answers=["1843"],
            hops=1,
            source="wikipedia",
            evidence=["d1"],
            provenance=made,
        ),
        Sample(
            id="q2",
            question="When did A. Smith write the first program?",
            answers=[],
            false_premise=True,
            hops=1,
            source="wikipedia",
            evidence=["d1"],
            provenance=made,
        ),
        Sample(
            id="q3",
            question="When did B. Smith write the first program?",
            answers=[],
            false_premise=True,
            hops=1,
            source="wikipedia",
            evidence=["d1"],
            provenance=made,
        ),
    ]
    manifest = Manifest(
        tool_version="0",
        source="wikipedia",
        name="fp",
        command="test",
        config={"reference_date": "2025-09-29"},
    )
    write_benchmark(tmp_path / "fp", docs, samples, manifest)
    # closed-book: "1843" for Ada, a false-premise flag for A. Smith, an answer for B. Smith
    server.responder = lambda body: (
        "1843"
        if "Ada" in str(body["messages"])
        else "False premise question"
        if "A. Smith" in str(body["messages"])
        else "1843"
    )
    out = tmp_path / "out"
    run_qa(tmp_path / "fp", out, QAOptions("closed-book", settings(server)))
    assert all("Today's date is 2025-09-29." in body["messages"][1]["content"] for body in server.bodies)
    metrics = {row["id"]: row["metrics"] for row in rows(out / "predictions.jsonl")}
    assert metrics["q1"]["em"] == 1.0 and "false_premise_detected" not in metrics["q1"]
    assert metrics["q2"]["false_premise_detected"] == 1.0 == metrics["q2"]["f1"]
    assert metrics["q3"]["false_premise_detected"] == 0.0 == metrics["q3"]["f1"]
    summary = read(out / "metrics.json")
    assert summary["overall"]["false_premise_detection_rate"] == 0.5
    assert summary["overall"]["f1"] == pytest.approx(2 / 3)
    assert summary["false_premise"] == {
        "samples": 2,
        "detected": 1,
        "detection_rate": 0.5,
        "false_alarm_rate": 0.0,
    }
    assert summary["by"]["false_premise"]["true"]["f1"] == 0.5
    assert read(out / "config.json")["date"] == "2025-09-29"


# ---------------------------------------------------------------------------------------------- units


def test_method_registry() -> None:
    assert sorted(METHODS) == ["closed-book", "cot", "cot-rag", "hop-ablation", "in-context", "rag", "react"]
    assert get_method("rag").retrieves and get_method("react").needs_index
    assert get_method("cot").whole_corpus and get_method("cot").reasoning


@pytest.mark.parametrize(
    ("method", "reply", "answer", "noted"),
    [
        ("closed-book", "Limor Pohl, Rajiv Albanese", "Limor Pohl, Rajiv Albanese", False),
        ("closed-book", "  Limor Pohl\nbecause ...", "Limor Pohl", True),
        ("closed-book", "Answer: 3", "3", False),
        ("cot", "Step one.\nStep two.\nAnswer: A, B", "A, B", False),
        ("cot", "Step.\n**Final answer:** A", "A", False),
        ("cot", "Answer: draft\nRethink.\nanswer: final", "final", False),
        ("cot", "Step one.\nSo: A", "So: A", True),
        ("rag", "", "", True),
    ],
)
def test_parse_reply(method: str, reply: str, answer: str, noted: bool) -> None:
    parsed = parse_reply(get_method(method), reply)
    assert parsed.answer == answer and (parsed.note is not None) is noted


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Thought: look\nAction: Search[Limor Pohl]", ("look", "Search", "Limor Pohl")),
        (
            "Thought: read\nAction 2: RetrieveArticle[A [b]]\nObservation: x",
            ("read", "RetrieveArticle", "A [b]"),
        ),
        ("Thought: done\n**Action:** finish[A, B]", ("done", "Finish", "A, B")),
        ("Thinking hard\nFinish[I don't know]", ("Thinking hard", "Finish", "I don't know")),
        ("Thought: x\nAction: Retrieve Article[Y]", ("x", "RetrieveArticle", "Y")),
        ('Thought: x\nAction: RetrieveArticle["Ada Lovelace"]', ("x", "RetrieveArticle", "Ada Lovelace")),
        ("Thought: x\nAction: Lookup[Y]", None),
        ("Thought: only thinking", None),
        ("Thought: I will Search[x] later", None),  # a tool name inside a sentence is not an action
    ],
)
def test_parse_action(reply: str, expected: tuple[str, str, str] | None) -> None:
    action = parse_action(reply)
    assert (None if action is None else (action.thought, action.tool, action.argument)) == expected


def test_corpus_context_truncates_deterministically() -> None:
    docs = [Document(_id=f"d{i}", title=f"T{i}", text="w " * 10) for i in range(5)]  # 13 tokens each
    whole = corpus_context(docs, 1000)
    assert not whole.truncated and whole.note is None and whole.documents == 5 and whole.tokens == 65
    cut = corpus_context(docs, 30)
    assert cut.truncated and cut.tokens == 30 and cut.documents == 3
    assert (
        cut.text.startswith("[1] Title: T0\nw w") and "[3] Title: T2\nw" in cut.text and "T3" not in cut.text
    )
    assert len(cut.text.split()) == 30 and "65" in cut.note and cut == corpus_context(docs, 30)


def test_wiki_tools() -> None:
    docs = [
        Document(_id="a", title="Ada Byron", text="# Ada Byron\nAda Byron's daughter is Ada Lovelace."),
        Document(_id="b", title="Ada Lovelace", text="# Ada Lovelace\nAda Lovelace's hobby is poetry."),
        Document(_id="c", title="Charles Babbage", text="# Charles Babbage\n" + "engine " * 50),
    ]
    tools = WikiTools(SearchIndex.from_documents(docs), max_article_tokens=10)
    observation, shown = tools.search("ada lovelace")
    assert shown == ["b", "a"]  # the article with that title first, then corpus order
    assert observation.startswith("Articles containing 'ada lovelace' (2 found, 2 shown):\n1. Ada Lovelace: ")
    observation, shown = tools.search("poetry engine")  # in no article as such: ranked instead
    assert observation.startswith("No article contains 'poetry engine' exactly") and set(shown) == {"b", "c"}
    assert tools.search("  ")[1] == []
    assert tools.retrieve(" ADA BYRON ") == (docs[0].text.strip(), ["a"])
    assert tools.retrieve("Ada") == (
        "No article titled 'Ada'. Use Search[text] to look for similar titles.",
        [],
    )
    text, shown = tools.retrieve("Charles Babbage")
    assert shown == ["c"] and text.endswith("(article cut here)") and len(text.split()) == 10 + 4


def test_judge_helpers() -> None:
    assert gold_text(["Paris, France", "Lyon"], False) == "Paris, France | Lyon"
    assert "false premise" in gold_text([], True)
    ok = {"model": "a", "label": "correct", "error": None}
    wrong = {"model": "b", "label": "not_attempted", "error": None}
    failed = {"model": "b", "label": None, "error": "http 500"}
    assert judge_score([ok, wrong]) == 0.5 and judge_score([ok, failed]) == 1.0
    assert judge_score([failed]) is None and judge_score([]) is None
    judges = [{"model": "a"}, {"model": "b"}]
    summary = summarize_verdicts(judges, [{"verdicts": [ok, wrong]}, None, {"verdicts": [ok, failed]}])
    assert summary["samples"] == 3 and summary["judged"] == 2 and summary["failed_calls"] == 1
    assert judged_text(summary) == "judge: 2 of 3 judged (1 not asked: no prediction)"
    failed_only = summarize_verdicts(judges, [{"verdicts": [failed]}, {"verdicts": [ok]}])
    assert judged_text(failed_only) == "judge: 1 of 2 judged (1 failed)"
    assert summary["labels"] == {"a": {"correct": 2}, "b": {"failed": 1, "not_attempted": 1}}
    assert summarize_verdicts([], [None]) is None


def test_the_judge_mean_is_over_judged_samples_only() -> None:
    from irbgen.eval.breakdown import aggregate

    rows = [
        {"attributes": {"hops": "1"}, "metrics": {"f1": 1.0, "judge": 1.0}},
        {"attributes": {"hops": "1"}, "metrics": {"f1": 0.0}},  # every judge call failed
        {"attributes": {"hops": "2"}, "metrics": {"f1": 0.5}},
    ]
    summary = aggregate(rows, ["f1", "judge"], optional={"judge"})
    assert summary["overall"] == {"f1": 0.5, "judge": 1.0} and summary["counts"] == {"judge": 1}
    assert summary["by"]["hops"]["1"] == {"f1": 0.5, "judge": 1.0, "judge_count": 1, "count": 2}
    assert summary["by"]["hops"]["2"] == {"f1": 0.5, "judge": None, "judge_count": 0, "count": 1}
    assert aggregate(rows, ["f1", "judge"])["overall"]["judge"] == pytest.approx(1 / 3)  # not optional: 0

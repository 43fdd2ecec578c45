"""Hop necessity: `eval qa --method hop-ablation`, its share in metrics.json, the report and the card, and
`irbgen filter --drop-hop-shortcuts`, against the loopback OpenAI-compatible server.

The reader stub answers from the documents it is shown only. It follows the question's chain of
relations through facts written "X's relation is Y."; when a link is missing it guesses the last
relation's value if the documents state exactly one such value (the shortcut a real model takes), and
says "I don't know" otherwise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from irbgen.benchmark import read_manifest, read_samples, write_benchmark
from irbgen.cli import main
from irbgen.errors import BadInputError
from irbgen.eval.filtering import filter_closed_book, filter_hop_shortcuts
from irbgen.eval.qa.ablation import ablations, needs_every_hop
from irbgen.eval.qa.run import QAOptions, run_qa
from irbgen.eval.qa.scoring import normalize_answer
from irbgen.eval.report import write_report
from irbgen.llm.settings import LLMSettings
from irbgen.schema import Document, Hop, Manifest, Provenance, Sample
from irbgen.testing.openai_server import OpenAIStubServer
from irbgen.validation import validate_benchmark

KEY_ENV = "IRBGEN_TEST_HOPS_KEY"
PROVENANCE = Provenance(generator="test")
TEXTS = [
    "Alice's friend is Bob.",
    "Bob's hobby is chess. Cara's hobby is golf.",  # without the bridge, the hobby is ambiguous
    "Erin's friend is Frank.",
    "Frank's hobby is fencing.",  # the only hobby: guessed without the bridge
    "Gina's mother is Hana.",
    "Hana's friend is Ivan.",
    "Ivan's hobby is judo. Kim's hobby is karate.",
]
DOCS = [Document(_id=f"d{n}", title=f"T{n}", text=text) for n, text in enumerate(TEXTS)]


def sample(sid: str, question: str, answer: str, hops: list[list[str]]) -> Sample:
    chain = [Hop(index=i, operation="relation", evidence=docs) for i, docs in enumerate(hops)]
    evidence = [doc for docs in hops for doc in docs if doc]
    return Sample(id=sid, question=question, answers=[answer], hops=len(hops), source="phantom",
                  evidence=list(dict.fromkeys(evidence)), chain=chain, provenance=PROVENANCE)  # fmt: skip


SAMPLES = [
    sample("needs", "What is the hobby of the friend of Alice?", "chess", [["d0"], ["d1"]]),
    sample("shortcut", "What is the hobby of the friend of Erin?", "fencing", [["d2"], ["d3"]]),
    sample("single", "What is the mother of Gina?", "Hana", [["d4"]]),
    sample(
        "three", "What is the hobby of the friend of the mother of Gina?", "judo", [["d4"], ["d5"], ["d6"]]
    ),
]


def reader(request: dict[str, Any]) -> str:
    """Answer from the documents in the prompt alone (see the module docstring)."""
    user = next(m["content"] for m in request["messages"] if m["role"] == "user")
    question = re.search(r"^Question: (.*)$", user, re.M).group(1)
    context = user.split("\nQuestion: ")[0]
    found = re.match(r"What is the (.*) of (\w+)\?$", question)
    relations, entity = found.group(1).split(" of the "), found.group(2)
    for relation in reversed(relations):
        link = re.search(rf"\b{entity}'s {relation} is (\w+)\.", context)
        if link is None:
            values = re.findall(rf"\w+'s {relations[0]} is (\w+)\.", context)
            return values[0] if len(values) == 1 else "I don't know"
        entity = link.group(1)
    return entity


@pytest.fixture()
def bench(tmp_path: Path) -> Path:
    out = tmp_path / "bench"
    manifest = Manifest(tool_version="0", source="phantom", name="hops", command="t", config={"n": 4})
    write_benchmark(out, DOCS, SAMPLES, manifest, licence="CC0-1.0 for the test.")
    return out


@pytest.fixture()
def server(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    with OpenAIStubServer(reader) as stub:
        yield stub


def settings(server: OpenAIStubServer) -> LLMSettings:
    return LLMSettings(base_url=server.base_url, model="reader", api_key_env=KEY_ENV, max_retries=1,
                       backoff_base=0.0, timeout=10.0)  # fmt: skip


def predictions(out: Path) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in map(json.loads, (out / "predictions.jsonl").read_text().splitlines())}


def test_ablations_leave_out_each_hops_documents() -> None:
    assert ablations(SAMPLES[0]) == [(0, ["d0"], ["d1"]), (1, ["d1"], ["d0"])]
    assert ablations(SAMPLES[2]) == []  # single-hop: not ablated
    assert [shown for _, _, shown in ablations(SAMPLES[3])] == [["d5", "d6"], ["d4", "d6"], ["d4", "d5"]]
    rule = {"by": "f1", "threshold": 0.5}
    tried = {"error": None, "ablations": [{"metrics": {"f1": 0.0}}, {"metrics": {"f1": 0.4}}]}
    assert needs_every_hop(tried, rule) is True
    assert needs_every_hop(tried, {"by": "f1", "threshold": 0.4}) is False
    assert needs_every_hop({"error": None, "ablations": [{"metrics": None}]}, rule) is None  # a failed call
    assert needs_every_hop({"error": None, "ablations": []}, rule) is None


def test_hop_ablation_marks_each_sample_and_reports_the_share(bench: Path, server, tmp_path: Path) -> None:
    out = tmp_path / "hops"
    summary = run_qa(bench, out, QAOptions("hop-ablation", settings(server)))
    assert server.requests == 4 + 2 + 2 + 3  # every sample with all its evidence, then one call per hop
    rows = predictions(out)
    assert {sid: row["needs_every_hop"] for sid, row in rows.items()} == {
        "needs": True, "shortcut": False, "single": None, "three": True}  # fmt: skip
    assert [rows[s.id]["prediction"] for s in SAMPLES] == ["chess", "fencing", "Hana", "judo"]
    assert [(a["hop"], a["prediction"]) for a in rows["shortcut"]["ablations"]] == [
        (0, "fencing"), (1, "I don't know")]  # fmt: skip
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["overall"]["f1"] == 1.0  # the answers with every hop's evidence are all right
    hops = metrics["hop_ablation"]
    assert (hops["by"], hops["threshold"]) == ("f1", 0.5)
    assert hops["by_hops"] == {
        "1": {"samples": 1, "ablated": 0, "needs_every_hop": 0, "answered": 0, "answered_need_every_hop": 0,
              "share": None},
        "2": {"samples": 2, "ablated": 2, "needs_every_hop": 1, "answered": 2, "answered_need_every_hop": 1,
              "share": 0.5},
        "3": {"samples": 1, "ablated": 1, "needs_every_hop": 1, "answered": 1, "answered_need_every_hop": 1,
              "share": 1.0},
    }  # fmt: skip
    assert hops["overall"]["share"] == pytest.approx(2 / 3) and summary["hop_ablation"] == hops
    calls = server.requests
    run_qa(bench, out, QAOptions("hop-ablation", settings(server)))  # resumed: nothing asked again
    assert server.requests == calls

    report = tmp_path / "report"
    write_report([out], report)
    text = (report / "report.md").read_text()
    assert "### Hop necessity" in text
    assert "| hop-ablation/reader | f1 \\>= 0.5 | 2 | 2 | 1 | 0.500 | 2 | 1 |" in text
    assert "| hop-ablation/reader | f1 \\>= 0.5 | all | 3 | 2 | 0.667 | 3 | 2 |" in text


def test_a_failed_ablation_leaves_the_sample_unmarked_until_retried(bench: Path, server, tmp_path) -> None:
    # the "needs" sample's call without hop 0's document (Alice's friend) fails
    server.add_rule(lambda body: "Alice?" in str(body) and "Alice's friend" not in str(body), "500")
    out = tmp_path / "hops"
    run_qa(bench, out, QAOptions("hop-ablation", settings(server)))
    row = predictions(out)["needs"]
    assert row["error"].startswith("hop 0 left out: http 500") and row["needs_every_hop"] is None
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["failures"] == 1 and metrics["hop_ablation"]["by_hops"]["2"]["ablated"] == 1
    server.clear_faults()
    before = server.requests
    run_qa(bench, out, QAOptions("hop-ablation", settings(server)))
    assert server.requests == before + 3 and predictions(out)["needs"]["needs_every_hop"] is True


def test_filter_drops_the_samples_that_do_not_need_every_hop(bench: Path, server, tmp_path: Path) -> None:
    evaluation = tmp_path / "hops"
    run_qa(bench, evaluation, QAOptions("hop-ablation", settings(server)))
    out = tmp_path / "filtered"
    args = ["filter", str(bench), "--drop-hop-shortcuts", str(evaluation), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.output == (
        "dropped 1 of 4 evaluated samples that reader still answered with a hop's evidence left out "
        "(f1 >= 0.5); needing every hop: 2-hop 1 of 2 (0.500), 3-hop 1 of 1 (1.000); "
        f"wrote 3 samples to {out}\n"
    )
    assert [s.id for s in read_samples(out)] == ["needs", "single", "three"]  # single-hop: kept
    assert validate_benchmark(out).ok
    manifest = read_manifest(out)
    record = manifest.config["filter"]["drop_hop_shortcuts"]
    assert (record["samples"], record["evaluated"], record["unscored"], record["dropped"]) == (4, 4, 1, 1)
    assert record["needs_every_hop"]["2"] == {"samples": 2, "ablated": 2, "needs_every_hop": 1, "share": 0.5}
    assert manifest.counts["dropped_hop_shortcuts"] == 1 and manifest.name == "hops-every-hop"
    assert manifest.command == "irbgen filter bench --drop-hop-shortcuts hops --out OUT"
    card = (out / "README.md").read_text()
    assert (
        "by hop count: 2-hop 1 of 2 (0.500), 3-hop 1 of 1 (1.000)." in card
        and "CC0-1.0 for the test." in card
    )
    again = tmp_path / "again"
    filter_hop_shortcuts(bench, evaluation, again)
    assert all((again / f).read_bytes() == (out / f).read_bytes() for f in ("manifest.json", "README.md"))


def test_filter_takes_one_evaluation_of_the_right_method(bench: Path, server, tmp_path: Path) -> None:
    evaluation = tmp_path / "hops"
    run_qa(bench, evaluation, QAOptions("hop-ablation", settings(server)))
    with pytest.raises(BadInputError, match="not a closed-book evaluation"):
        filter_closed_book(bench, evaluation, tmp_path / "x")
    closed = tmp_path / "closed"
    run_qa(bench, closed, QAOptions("closed-book", settings(server)))
    with pytest.raises(BadInputError, match=r"not a hop-ablation evaluation \(irbgen eval qa --method hop"):
        filter_hop_shortcuts(bench, closed, tmp_path / "y")
    both = ["filter", str(bench), "--drop-closed-book", str(closed), "--drop-hop-shortcuts", str(evaluation)]
    for args in (both, ["filter", str(bench)]):
        result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "z")])
        assert result.exit_code == 2
        assert result.output == "irbgen: error: give one of --drop-closed-book or --drop-hop-shortcuts\n"
    assert not any((tmp_path / name).exists() for name in ("x", "y", "z"))


def test_hop_ablation_runs_offline_on_the_phantom_sample(tmp_path: Path, monkeypatch) -> None:
    """The CLI end to end on a phantom benchmark, against a stub that answers only with gold answers that
    occur in the documents it is shown: a sample needs every hop when each ablation hides every answer."""
    bench = tmp_path / "bench"
    args = ["phantom", "--n", "60", "--seed", "1", "--depth", "6", "--questions-per-template", "2"]
    assert CliRunner().invoke(main, [*args, "--out", str(bench), "--quiet"]).exit_code == 0
    samples = list(read_samples(bench))
    gold = {s.question: s.answers for s in samples}
    docs = {
        json.loads(line)["_id"]: json.loads(line)
        for line in (bench / "corpus.jsonl").read_text().splitlines()
    }

    def shows(text: str, answer: str) -> bool:
        return f" {normalize_answer(answer)} " in f" {normalize_answer(text)} "

    def contained(request: dict[str, Any]) -> str:
        user = next(m["content"] for m in request["messages"] if m["role"] == "user")
        context, question = user.split("\nQuestion: ")
        context = re.sub(r"^\[\d+\] ", "", context, flags=re.M)  # the documents' numbers are no answers
        found = [a for a in gold[question.strip()] if shows(context, a)]
        return ", ".join(found) or "I don't know"

    monkeypatch.setenv(KEY_ENV, "sk-test")
    out = tmp_path / "hops"
    with OpenAIStubServer(contained) as stub:
        qa = ["eval", "qa", "--benchmark", str(bench), "--method", "hop-ablation", "--model", "reader",
              "--base-url", stub.base_url, "--api-key-env", KEY_ENV, "--out", str(out), "-q"]  # fmt: skip
        result = CliRunner().invoke(main, qa)
        assert result.exit_code == 0, result.output
        # one call per sample and per hop; an ablation showing what another of its sample showed is cached
        asked = {(s.id, tuple(shown)) for s in samples for _, _, shown in ablations(s)}
        assert stub.requests == len(samples) + len(asked) < len(samples) + 20
    expected = {}
    for s in samples:
        tries = ablations(s)
        texts = [" ".join(docs[d]["title"] + " " + docs[d]["text"] for d in shown) for _, _, shown in tries]
        expected[s.id] = None if not tries else not any(any(shows(t, a) for a in s.answers) for t in texts)
    assert {sid: row["needs_every_hop"] for sid, row in predictions(out).items()} == expected
    multi = [mark for mark in expected.values() if mark is not None]
    hops = json.loads((out / "metrics.json").read_text())["hop_ablation"]["by_hops"]["2"]
    assert (hops["ablated"], hops["needs_every_hop"]) == (len(multi), sum(multi)) and 0 < sum(multi) < len(
        multi
    )
    assert f"needs every hop: 2-hop {sum(multi)} of {len(multi)}" in result.output

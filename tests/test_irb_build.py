"""`irbgen build --source wikipedia-dump` end to end: the offline sample, and the real HTTP and LLM paths."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.testing.openai_server import OpenAIStubServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE_DUMP = REPO / "data" / "samples" / "wiki" / "sample-pages-articles.xml.bz2"
SAMPLE_WARC = REPO / "data" / "samples" / "web" / "cited-pages.warc.gz"


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_offline_sample_build_accounts_for_everything(tmp_path):
    out = tmp_path / "run"
    args = ["build", "--source", "wikipedia-dump", "--dump", SAMPLE_DUMP, "--warc", SAMPLE_WARC, "--offline"]
    result = run(*args, "--out", out)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    counts = manifest["counts"]
    facts = _lines(out / "facts.jsonl")
    documents = {doc["id"] for doc in _lines(out / "documents.jsonl")}
    rejects = _lines(out / "rejects.jsonl")
    assert counts["facts"] == len(facts) > 0
    assert counts["rejects"] == len(rejects) == sum(manifest["rejects"].values())
    assert {doc for fact in facts for kp in fact["keypoints"] for doc in kp["documents"]} <= documents
    assert len(documents) == counts["documents_fetched"]  # every fetched page, not only supporting ones
    stages = manifest["stages"]
    for name, stage in stages.items():  # every input ends as output(s), a reject, or both
        assert stage["processed"] + stage["skipped"] == stage["inputs"], name
    assert stages["fetch_cited"]["inputs"] == stages["fetch_cited"]["outputs"] + sum(
        stages["fetch_cited"]["rejects"].values()
    )
    keypoints_seen = {reject["key"] for reject in rejects if reject["stage"] == "facts"}
    assert counts["keypoints"] >= len(keypoints_seen) + len(facts)
    assert {"read:redirect", "read:disambiguation", "fetch_cited:http_404"} <= set(manifest["rejects"])
    assert manifest["llm_usage"] == {"backend": "rules"}

    names = (
        "facts.jsonl",
        "documents.jsonl",
        "rejects.jsonl",
        "benchmark/samples.jsonl",
        "benchmark/manifest.json",
    )
    first = {name: (out / name).read_bytes() for name in names}
    again = run(*args, "--out", out)  # a rerun resumes: every stage is complete, outputs are unchanged
    assert again.exit_code == 0, again.output
    assert first == {name: (out / name).read_bytes() for name in first}


ARTICLE = """Harbour Town is a small port on the north coast.

== History ==
Harbour Town opened its first stone pier in 1871.<ref>{{{{cite web |url={base}/pier \
|title=Pier history |date=3 May 2020}}}}</ref> \
The town council built a lifeboat station in 1902.<ref name="lb">{{{{cite news \
|url={base}/lifeboat |title=Lifeboat |date=1 June 2021}}}}</ref> \
The station rescued 14 sailors in its first winter.<ref name="lb" /> \
A ferry service to the islands started in 1950.<ref>{{{{cite web |url={base}/missing |title=Ferry}}}}</ref>
"""

PAGES = {
    "/pier": "<html><head><title>Pier history</title></head><body><article><h1>Pier history</h1>"
    "<p>Published 3 May 2020.</p><p>Harbour Town opened its first stone pier in 1871, after a storm "
    "wrecked the old wooden jetty. The pier still stands today and is used by fishing boats.</p>"
    "<p>Local historians say the stone came from a quarry three miles inland.</p></article></body></html>",
    "/lifeboat": "<html><head><title>Lifeboat</title></head><body><article><h1>Lifeboat station</h1>"
    "<p>The town council built a lifeboat station in 1902 on the east side of the harbour. "
    "In its first winter the station rescued 14 sailors from three ships.</p>"
    "<p>The station was rebuilt in 1960.</p></article></body></html>",
}


def _dump(path: Path, base: str) -> Path:
    text = ARTICLE.format(base=base).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    path.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">\n'
        "<siteinfo><sitename>Test</sitename><dbname>testwiki</dbname><base>https://test.invalid/</base>"
        "<generator>MediaWiki 1.42</generator><case>first-letter</case><namespaces>"
        '<namespace key="0" case="first-letter" /></namespaces></siteinfo>\n'
        "<page><title>Harbour Town</title><ns>0</ns><id>7</id><revision><id>70</id>"
        "<timestamp>2024-01-01T00:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki</format>"
        f'<text bytes="{len(text)}" xml:space="preserve">{text}</text></revision></page>\n</mediawiki>\n',
        encoding="utf-8",
    )
    return path


class _Pages(BaseHTTPRequestHandler):
    served: list[str] = []

    def do_GET(self):  # noqa: N802 - http.server's name
        self.served.append(self.path)
        body = PAGES.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def web():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Pages.served = []
    yield f"http://127.0.0.1:{server.server_address[1]}", _Pages.served
    server.shutdown()


def _graph_reply(text: str) -> str:
    """Triples that cover each statement: (subject, the words between, the last number or word)."""
    title = text.split("Article title:", 1)[1].split("\n", 1)[0].strip()
    statements = text.split("Statements:", 1)[1].strip().splitlines()
    triples = []
    for line in statements:
        sentence = re.sub(r"^\W*\d*\W*", "", line).strip().rstrip(".")
        head = title if sentence.startswith(title) else sentence.split()[0]
        numbers = re.findall(r"\b\d{4}\b", sentence)
        tail = numbers[-1] if numbers else sentence.split()[-1]
        relation = sentence[len(head) : sentence.rindex(tail)].strip() or "is"
        kind = "Date" if tail.isdigit() else "Other"
        triples.append(
            {"head": head, "head_type": "Location", "relation": relation, "tail": tail, "tail_type": kind}
        )
    return json.dumps({"triples": triples})


_ASKED = {
    "Date": "what year",
    "Location": "which place",
    "Person": "whom",
    "Organization": "which organization",
}
_TYPE = re.compile(r"\s*\[(\w+)\]$")  # "Harbour Town [Location]" -> "Harbour Town", Location


def _step_question(triple: str) -> str:
    """ "(Harbour Town [Location]; opened its first stone pier in; ?x0 [Date])" -> "Harbour Town opened its
    first stone pier in what year?": the question a careful model writes for a triple's masked node."""
    head, relation, tail = (part.strip() for part in triple.strip("()").split(";"))
    if head.startswith("?x"):
        asked = "Who" if head.endswith("[Person]") else "What"
        return f"{asked} {relation} {_TYPE.sub('', tail)}?"
    kind = _TYPE.search(tail)
    return f"{_TYPE.sub('', head)} {relation} {_ASKED.get(kind.group(1) if kind else '', 'what')}?"


def _llm_reply(request: dict) -> str:
    """Answers every prompt of the Wikipedia build the way a careful model would, deterministically."""
    text = request["messages"][-1]["content"]
    if "Piece to rewrite:" in text:
        piece = text.split("Piece to rewrite:", 1)[1].strip()
        return json.dumps({"keypoint": re.sub(r"^The station", "The Harbour Town lifeboat station", piece)})
    if "Statements:" in text:
        return _graph_reply(text)
    if "Next triple:" in text:
        triple = text.split("Next triple:", 1)[1].strip().splitlines()[0]
        so_far = text.split("Question so far:", 1)[1].split("\n", 1)[0].strip()
        if so_far and not so_far.startswith("(none"):
            return json.dumps({"question": so_far})  # the first triple's question already asks it
        return json.dumps({"question": _step_question(triple)})
    if "Question to check:" in text:
        return json.dumps({"unique": True, "reason": "one answer"})
    if "Question to polish:" in text:
        question = text.split("Question to polish:", 1)[1].split("\n", 1)[0].strip()
        return json.dumps({"question": question})
    statement = text.split("Statement:", 1)[1].split("\n", 1)[0].strip()
    page = text.split("Page text:", 1)[1]
    supported = all(word in page for word in re.findall(r"\d+", statement))
    return json.dumps({"label": "supported" if supported else "not_supported", "evidence": ""})


def test_real_http_and_llm_paths(tmp_path, web, monkeypatch):
    base, served = web
    dump = _dump(tmp_path / "mini.xml", base)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-written")
    with OpenAIStubServer(responder=_llm_reply) as llm:
        args = [
            "build",
            "--source",
            "wikipedia-dump",
            "--dump",
            dump,
            "--llm",
            "openai",
            "--base-url",
            llm.base_url,
            "--model",
            "stub",
        ]
        refused = run(*args, "--out", tmp_path / "refused")
        assert refused.exit_code == 1, refused.output  # no page fetched: a failed build, said in one line
        assert "0 of 2 cited pages fetched: 2 ssrf_refused; nothing to evaluate" in refused.output
        assert served == []  # loopback is a private address: refused without --allow-private-hosts
        reasons = {
            r["reason"] for r in _lines(tmp_path / "refused" / "rejects.jsonl") if r["stage"] == "fetch_cited"
        }
        assert reasons == {"ssrf_refused"}

        out = tmp_path / "run"
        result = run(*args, "--allow-private-hosts", "--out", out)
        assert result.exit_code == 0, result.output
        calls = llm.requests
        assert {"/lifeboat", "/pier"} <= set(served) <= {"/lifeboat", "/missing", "/pier"}
        fetched = len(served)

        again = run(*args, "--allow-private-hosts", "--out", out)
        assert again.exit_code == 0
        assert llm.requests == calls and len(served) == fetched  # nothing asked or fetched twice

    facts = _lines(out / "facts.jsonl")
    texts = [kp["text"] for fact in facts for kp in fact["keypoints"]]
    assert "Harbour Town opened its first stone pier in 1871." in texts
    assert any("rescued 14 sailors" in text for text in texts)
    manifest = json.loads((out / "manifest.json").read_text())
    # the keypoint citing /missing may be gated out first; when it is fetched, its 404 is a reject
    assert manifest["rejects"].get("fetch_cited:http_404") == (1 if "/missing" in served else None)
    assert manifest["llm_usage"]["total"]["calls"] >= 3
    assert set(manifest["llm_usage"]["stages"]) >= {"keypoints", "grounding", "knowledge_graph", "questions"}
    samples = _lines(out / "benchmark" / "samples.jsonl")
    assert samples and manifest["counts"]["samples"] == len(samples)
    used = {(p["name"], p["version"]) for sample in samples for p in sample["provenance"]["prompts"]}
    assert {name for name, _ in used} >= {"irb_keypoint", "irb_grounding", "irb_graph", "irb_question_step"}
    assert all(sample["provenance"]["model"] == "stub" for sample in samples)
    assert run("validate", out / "benchmark").exit_code == 0
    assert "sk-never-written" not in "".join(
        p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file()
    )


def test_bad_input_is_one_line(tmp_path):
    missing = run(
        "build", "--source", "wikipedia-dump", "--dump", tmp_path / "nope.xml.bz2", "--out", tmp_path / "o"
    )
    assert missing.exit_code == 2 and "nope.xml.bz2" in missing.output
    broken = tmp_path / "broken.xml.bz2"
    broken.write_bytes(SAMPLE_DUMP.read_bytes()[:300])
    result = run("build", "--source", "wikipedia-dump", "--dump", broken, "--out", tmp_path / "b")
    assert result.exit_code in (1, 2) and "broken.xml.bz2" in result.output
    assert len(result.output.strip().splitlines()) == 1


def _count_lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _kill_when(victim: subprocess.Popen, path: Path, lines: int, *, poll: float) -> None:
    """SIGKILL `victim` once `path` has `lines` lines (or after 120 s), and check that it died of it."""
    deadline = time.monotonic() + 120
    while _count_lines(path) < lines and time.monotonic() < deadline:
        time.sleep(poll)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    assert victim.returncode == -signal.SIGKILL


def test_sigkill_midway_then_rerun_equals_an_uninterrupted_run(tmp_path):
    def build(server, out):
        command = [
            sys.executable,
            "-m",
            "irbgen",
            "build",
            "--source",
            "wikipedia-dump",
            "--dump",
            SAMPLE_DUMP,
            "--warc",
            SAMPLE_WARC,
            "--offline",
            "--llm",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "stub",
            "--llm-concurrency",
            "2",
            "--out",
            out,
        ]
        env = {**os.environ, "OPENAI_API_KEY": "unused"}
        return subprocess.Popen(
            [str(part) for part in command], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    with OpenAIStubServer(responder=_llm_reply, latency=0.05) as server:
        clean = build(server, tmp_path / "clean")
        assert clean.wait(timeout=240) == 0, clean.stderr.read().decode()
        clean_calls = server.requests

        victim = build(server, tmp_path / "killed")
        _kill_when(victim, tmp_path / "killed" / "stages" / "keypoints" / "done.jsonl", 15, poll=0.02)
        before_rerun = server.requests
        assert clean_calls < before_rerun < 2 * clean_calls  # killed midway
        # The ledger journal counted every request the killed run sent (at most 2 never arrived).
        journal = [
            json.loads(line) for line in (tmp_path / "killed" / "ledger.jsonl").read_text().splitlines()
        ]
        assert 0 <= sum(row.get("calls", 0) for row in journal) - (before_rerun - clean_calls) <= 2

        rerun = build(server, tmp_path / "killed")
        assert rerun.wait(timeout=240) == 0, rerun.stderr.read().decode()
        asked_again = server.requests - before_rerun
    # Only the calls in flight when the process died (at most --llm-concurrency) are asked again.
    assert (before_rerun - clean_calls) + asked_again <= clean_calls + 2
    for name in ("facts.jsonl", "documents.jsonl", "rejects.jsonl", "benchmark/samples.jsonl"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "clean" / name).read_bytes(), name


def test_sigkill_of_a_build_whose_workers_write_the_shards_then_rerun_equals_an_uninterrupted_run(tmp_path):
    """--processes 2: the driver is killed once workers have written some shards of the keypoints stage;
    the rerun reuses them and writes what an uninterrupted run writes."""
    command = [sys.executable, "-m", "irbgen", "-v", "build", "--source", "wikipedia-dump"]
    command += ["--dump", SAMPLE_DUMP, "--warc", SAMPLE_WARC, "--offline", "--processes", "2", "--out"]

    def build(out: Path) -> tuple[subprocess.Popen, Path]:
        log = out.with_suffix(".log")
        with open(log, "ab") as stderr:
            return subprocess.Popen([str(part) for part in [*command, out]], stderr=stderr), log

    clean, log = build(tmp_path / "clean")
    assert clean.wait(timeout=240) == 0, log.read_text()
    victim, _ = build(tmp_path / "killed")
    manifest = tmp_path / "killed" / "stages" / "keypoints" / "shards.jsonl"
    _kill_when(victim, manifest, 2, poll=0.005)
    assert not (tmp_path / "killed" / "stages" / "keypoints" / "complete").exists()  # killed midway
    reused = _count_lines(manifest)
    rerun, log = build(tmp_path / "killed")
    assert rerun.wait(timeout=240) == 0, log.read_text()
    assert f"keypoints: resuming; {reused} shards complete in an earlier run" in log.read_text()
    for name in ("facts.jsonl", "documents.jsonl", "rejects.jsonl", "benchmark/samples.jsonl"):
        assert (tmp_path / "killed" / name).read_bytes() == (tmp_path / "clean" / name).read_bytes(), name
    for stage in ("read", "citing_segments", "keypoints", "grounding", "facts"):
        for name in ("outputs.jsonl", "rejects.jsonl", "done.jsonl"):
            killed, clean_file = (tmp_path / run / "stages" / stage / name for run in ("killed", "clean"))
            assert killed.read_bytes() == clean_file.read_bytes(), (stage, name)


def test_cirrus_metadata_reaches_the_facts_and_survives_a_rerun(tmp_path):
    dump = REPO / "data" / "samples" / "wiki" / "sample-cirrus.json.gz"
    args = ["build", "--source", "wikipedia-dump", "--dump", dump, "--warc", SAMPLE_WARC, "--offline"]
    assert run(*args, "--out", tmp_path / "run").exit_code == 0
    first = (tmp_path / "run" / "facts.jsonl").read_bytes()
    facts = _lines(tmp_path / "run" / "facts.jsonl")
    assert facts and all(fact["created"] and fact["popularity"] is not None for fact in facts)
    assert run(*args, "--out", tmp_path / "run").exit_code == 0  # every stage complete: read back only
    assert (tmp_path / "run" / "facts.jsonl").read_bytes() == first

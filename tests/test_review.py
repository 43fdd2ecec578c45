"""`irbgen review`: the offset index, the app's pages and writes, safety, the judgment files and scoring."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from click.testing import CliRunner
from review_helpers import REPO, SCRIPT_TAG, ReviewServer, hostile_benchmark
from sample_builds import wikipedia_sample_benchmark
from starlette.testclient import TestClient

from irbgen.audit.records import Judgment
from irbgen.audit.sheet import make_sheet
from irbgen.benchmark import SAMPLES, read_manifest
from irbgen.cli import main
from irbgen.cli.review import allowed_hosts
from irbgen.errors import BadInputError
from irbgen.review.app import TOKEN_HEADER, Session, create_app
from irbgen.review.draws import Draw, describe
from irbgen.review.index import BenchmarkIndex, ChangedError, sample_digest
from irbgen.review.page import sample_path
from irbgen.review.scoring import agreements, cohen_kappa, combine
from irbgen.review.store import ReviewWriter, read_file
from irbgen.schema import Sample


def run(*args):
    return CliRunner().invoke(main, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def phantom_bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("phantom") / "bench"
    assert run("phantom", "--n", 40, "--quiet", "--out", out).exit_code == 0
    return out


@pytest.fixture(scope="module")
def wiki_bench(tmp_path_factory) -> Path:
    return wikipedia_sample_benchmark(tmp_path_factory.mktemp("irb"))


@pytest.fixture
def wiki_copy(wiki_bench, tmp_path) -> Path:
    return Path(shutil.copytree(wiki_bench, tmp_path / "bench"))


def open_session(
    bench: Path, reviewer: str = "alice", size: int | None = None, seed: int = 0, order: str = "random"
) -> Session:
    return Session.open(BenchmarkIndex.build(bench), read_manifest(bench), reviewer, size, seed, order)


def client(session: Session) -> TestClient:
    return TestClient(create_app(session), base_url="http://127.0.0.1")


def judge(http: TestClient, session: Session, sample: str, *verdict, note: str = "", token=None, host=None):
    body = dict(
        zip(("well_formed", "answer_correct", "supported"), verdict, strict=True), sample=sample, note=note
    )
    headers = {TOKEN_HEADER: session.token if token is None else token}
    if host is not None:
        headers["host"] = host
    return http.post("/judge", json=body, headers=headers)


class Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def test_the_index_reads_every_sample_by_offset_and_notices_a_change(phantom_bench, tmp_path):
    bench = Path(shutil.copytree(phantom_bench, tmp_path / "bench"))
    index = BenchmarkIndex.build(bench)
    lines = (bench / SAMPLES).read_bytes().splitlines()
    assert len(index.samples) == len(lines) == 500
    for raw in lines[::37] + [lines[-1]]:
        sample = Sample.model_validate_json(raw)
        assert index.sample(sample.id) == sample
    assert index.document("no such document") is None
    with (bench / SAMPLES).open("ab") as handle:
        handle.write(lines[0] + b"\n")
    with pytest.raises(ChangedError, match="changed since it was indexed"):
        index.sample(Sample.model_validate_json(lines[0]).id)
    with pytest.raises(BadInputError, match=r"samples.jsonl:501: id '.*' appears twice"):
        BenchmarkIndex.build(bench)


def test_a_sample_page_shows_question_hops_keypoints_evidence_and_attributes(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    first = http.get("/", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == sample_path(session.order[0])
    multi = next(sid for sid in session.order if session.index.sample(sid).hops == 2)
    sample = session.index.sample(multi)
    page = http.get(sample_path(multi))
    assert page.status_code == 200
    assert "script-src 'nonce-" in page.headers["content-security-policy"]
    text = page.text
    assert sample.question.replace("'", "&#x27;") in text
    for hop in sample.chain:
        assert hop.question.replace("'", "&#x27;") in text
    for keypoint in sample.provenance.keypoints:
        assert keypoint.replace("'", "&#x27;") in text
    documents = [session.index.document(doc_id) for doc_id in sample.evidence]
    for doc in documents:
        assert doc.metadata["url"] in text and doc.title.replace("'", "&#x27;") in text
    links = [attrs for tag, attrs in tags_of(text) if tag == "a" and attrs.get("target") == "_blank"]
    assert {link["href"] for link in links} == {doc.metadata["url"] for doc in documents}
    assert all(link["rel"] == "noopener noreferrer" for link in links)
    assert text.count("<mark>") == len(documents)
    for label in ("hops", "false premise", "freshness", "popularity", "newness"):
        assert f"<dt>{label}</dt>" in text
    assert f"sample {session.position[multi] + 1} of {len(session.order)}" in text


def test_every_write_needs_the_session_token(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    sample = session.order[0]
    file = wiki_copy / "reviews" / "alice.jsonl"
    assert judge(http, session, sample, True, True, True, token="").status_code == 403
    assert judge(http, session, sample, True, True, True, token=session.token[:-1] + "x").status_code == 403
    assert file.read_bytes() == b""
    reply = judge(http, session, sample, True, False, True, note="two answers fit")
    assert reply.status_code == 200
    assert reply.json() == {"judged": 1, "total": len(session.order), "status": "saved · not valid"}
    (line,) = file.read_text().splitlines()
    record = json.loads(line)
    assert record.pop("time")
    assert record.pop("sample_sha256") == sample_digest(session.index.samples.raw(sample))
    assert record == {
        "well_formed": True,
        "answer_correct": False,
        "supported": True,
        "note": "two answers fit",
        "sample": sample,
        "reviewer": "alice",
        "draw": {"order": "random", "seed": 0, "size": None, "population": len(session.order)},
    }
    other = open_session(wiki_copy, "bob")
    assert judge(client(other), other, sample, True, True, True, token=session.token).status_code == 403


def test_the_latest_line_wins_and_a_restart_keeps_the_judgments(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    first, second = session.order[:2]
    judge(http, session, first, True, None, None)
    judge(http, session, first, True, True, False, note="not in the page")
    judge(http, session, second, False, True, True)
    assert len((wiki_copy / "reviews" / "alice.jsonl").read_text().splitlines()) == 3
    again = open_session(wiki_copy)
    assert again.complete == {first, second}
    assert again.judgment(first) == Judgment(
        well_formed=True, answer_correct=True, supported=False, note="not in the page"
    )
    page = client(again).get(sample_path(first)).text
    assert "&quot;supported&quot;: false" in page and "not in the page</textarea>" in page
    assert client(again).get("/", follow_redirects=False).headers["location"] == sample_path(again.order[2])


def test_a_half_written_line_is_lost_alone(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    judge(http, session, session.order[0], True, True, True)
    file = wiki_copy / "reviews" / "alice.jsonl"
    with file.open("ab") as handle:
        handle.write(b'{"well_formed": true, "answer_corr')  # killed mid-write
    assert list(read_file(file)) == [session.order[0]]
    again = open_session(wiki_copy)
    assert file.read_bytes().endswith(b"}\n") and len(file.read_bytes().splitlines()) == 1
    judge(client(again), again, again.order[1], True, True, True)
    assert list(read_file(file)) == again.order[:2]


def test_a_path_traversal_in_a_sample_id_reads_and_writes_nothing(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    manifest = (wiki_copy / "manifest.json").read_text()
    for path in (
        "/sample/..%2Fmanifest.json",
        "/sample/../../manifest.json",
        "/sample/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "/sample/..%5C..%5Cmanifest.json",
        "/sample/%2Fetc%2Fpasswd",
    ):
        reply = http.get(path)
        assert reply.status_code == 404, path
        assert "tool_version" not in reply.text and "root:" not in reply.text
        assert manifest[:40] not in reply.text
    for sample in ("../../../manifest.json", "../alice", "/etc/passwd"):
        assert judge(http, session, sample, True, True, True).status_code == 404
    assert sorted(path.name for path in (wiki_copy / "reviews").iterdir()) == ["alice.jsonl"]
    assert (wiki_copy / "reviews" / "alice.jsonl").read_bytes() == b""
    for name in ("../evil", "a/b", ".hidden", ""):
        with pytest.raises(BadInputError, match="--reviewer"):
            open_session(wiki_copy, name)


def test_hostile_text_renders_as_text(tmp_path):
    bench = hostile_benchmark(tmp_path / "hostile")
    session = open_session(bench)
    page = client(session).get(sample_path("evil-1")).text
    tags = tags_of(page)
    assert [tag for tag, _ in tags if tag == "script"] == ["script"]  # the page's own, with its nonce
    assert not [tag for tag, _ in tags if tag == "img"]
    assert not [name for _, attrs in tags for name in attrs if name.startswith("on")]
    hrefs = [attrs["href"] for tag, attrs in tags if tag == "a"]
    assert all(href.startswith(("/", "https://")) for href in hrefs) and "javascript" not in " ".join(hrefs)
    assert SCRIPT_TAG.replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;") in page
    assert "javascript:window.pwned=&#x27;url&#x27;" in page  # shown, not linked
    quoted = [attrs for tag, attrs in tags if tag == "a" and attrs.get("target") == "_blank"]
    assert [attrs["href"] for attrs in quoted] == [
        'https://example.org/a"><script>window.pwned="attr"</script>'
    ]
    assert quoted[0]["rel"] == "noopener noreferrer"


def test_a_file_changed_under_the_app_gives_one_line_not_a_traceback(wiki_copy):
    session = open_session(wiki_copy)
    with (wiki_copy / SAMPLES).open("ab") as handle:
        handle.write(b"\n")
    reply = client(session).get(sample_path(session.order[0]))
    assert reply.status_code == 409
    assert "samples.jsonl: changed since it was indexed; restart irbgen review" in reply.text
    assert "Traceback" not in reply.text


def test_a_benchmark_that_cannot_be_written_is_bad_input(wiki_copy):
    (wiki_copy / "reviews").write_text("not a folder")
    with pytest.raises(BadInputError, match="cannot keep judgments here"):
        open_session(wiki_copy)


def test_requests_for_another_host_name_are_refused(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example", "[::2]:80", ""):
        reply = http.get(sample_path(session.order[0]), headers={"host": host})
        assert reply.status_code == 403 and session.token not in reply.text, host
        assert judge(http, session, session.order[0], True, True, True, host=host).status_code == 403
    assert (wiki_copy / "reviews" / "alice.jsonl").read_bytes() == b""
    for host in ("localhost:8765", "127.0.0.1", "[::1]:8765", "LOCALHOST"):
        assert http.get("/", headers={"host": host}, follow_redirects=False).status_code == 303, host
    allowed = TestClient(create_app(session, ["review.lan"]), base_url="http://review.lan:8765")
    assert session.token in allowed.get(sample_path(session.order[0])).text


def test_a_drawn_review_holds_the_samples_an_audit_sheet_draws(phantom_bench):
    session = open_session(phantom_bench, size=12, seed=3)
    sheet = make_sheet(phantom_bench, 12, 3)
    assert session.order == [item.id for item in sheet.items]


def test_only_unjudged_navigation_skips_judged_samples_and_wraps(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    order = session.order
    for sample in order[1:3] + order[-1:]:
        judge(http, session, sample, True, True, True)
    assert session.neighbour(order[0], 1, unjudged=True) == order[3]
    assert session.neighbour(order[0], 1, unjudged=False) == order[1]
    assert session.neighbour(order[0], -1, unjudged=True) == order[-2]
    assert session.neighbour(order[0], -1, unjudged=False) is None
    page = http.get(sample_path(order[0])).text
    assert f'data-next-unjudged="{sample_path(order[3])}"' in page


@pytest.mark.parametrize(
    ("first", "second", "kappa"),
    [
        ([1, 1, 0, 0], [1, 0, 0, 0], 0.5),  # observed 3/4, chance 1/2
        ([1] * 20 + [1] * 5 + [0] * 10 + [0] * 15, [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15, 0.4),
        ([1, 0, 1, 0], [1, 0, 1, 0], 1.0),
        ([1, 0], [0, 1], -1.0),
        ([1, 1, 1], [1, 1, 1], None),  # chance agreement is 1: kappa is undefined
    ],
)
def test_cohen_kappa_matches_hand_computed_values(first, second, kappa):
    found = cohen_kappa([bool(x) for x in first], [bool(x) for x in second])
    assert (found if found is None else round(found, 6)) == kappa


def test_a_sample_is_valid_only_if_every_reviewer_found_it_valid():
    yes = Judgment(well_formed=True, answer_correct=True, supported=True)
    wrong = Judgment(well_formed=True, answer_correct=False, supported=True, note="two answers")
    judged = {"alice": {"s1": yes, "s2": yes, "s3": yes}, "bob": {"s1": yes, "s2": wrong}}
    combined = combine(judged)
    assert {sid: j.valid for sid, j in combined.items()} == {"s1": True, "s2": False, "s3": True}
    assert combined["s2"].failed() == ["answer_correct"] and combined["s2"].note == "two answers"
    (pair,) = agreements(judged)
    assert (pair.first, pair.second, pair.shared, pair.agreed, pair.kappa) == ("alice", "bob", 2, 1, 0.0)


def write_reviews(bench: Path, reviewer: str, verdicts: dict[str, tuple], draw: Draw | None = None) -> None:
    writer = ReviewWriter(bench, reviewer)
    writer.open()
    for sample, verdict in verdicts.items():
        well_formed, answer_correct, supported = verdict
        judgment = Judgment(well_formed=well_formed, answer_correct=answer_correct, supported=supported)
        writer.append(sample, judgment, None, draw)


def random_order(bench: Path, seed: int = 0) -> tuple[Draw, list[str]]:
    """The draw `irbgen review` makes by default, and the sample ids in the order it shows them."""
    ids = BenchmarkIndex.samples_only(bench).samples.ids
    draw = Draw(order="random", seed=seed, population=len(ids))
    return draw, draw.ids(ids)


def test_scoring_reviews_writes_the_card_and_the_benchmark_stays_valid(wiki_copy):
    draw, ids = random_order(wiki_copy)
    alice = {sid: (True, n % 5 != 0, True) for n, sid in enumerate(ids[:16])}
    bob = {sid: (True, n % 4 != 0, True) for n, sid in enumerate(ids[:10])}
    bob[ids[16]] = (True, True, None)  # not fully judged: left out
    write_reviews(wiki_copy, "alice", alice, draw)
    write_reviews(wiki_copy, "bob", bob, draw)
    result = run("review", wiki_copy, "--score")
    assert result.exit_code == 0, result.output
    # alice fails 0, 5, 10, 15; bob fails 0, 4, 8: together 0, 4, 5, 8, 10, 15 of 16
    lines = result.output.splitlines()
    assert lines[0].startswith(
        f"reviewed 16 of {len(ids)} samples of run (wikipedia) by alice, bob: 10 valid, 62.5% [38.6%, 81.5%]"
    )
    assert "drawn: a random sample of 16 with seed 0\n" in result.output
    # on the 10 shared: alice 8 valid, bob 7, 7 agree; chance .8*.7 + .2*.3 = .62; kappa (.7-.62)/.38 = .21
    assert "agreement alice / bob: 7 of 10 shared samples, Cohen's kappa 0.21" in result.output
    card = (wiki_copy / "README.md").read_text()
    assert "2 reviewers (alice, bob) judged 16 of the" in card and "with `irbgen review`" in card
    assert (
        "How the samples were drawn: a random sample of 16 with seed 0. Intervals are Wilson 95% score "
        "intervals." in card
    )
    assert "| all | 16 | 10 | 62.5% | [38.6%, 81.5%] |" in card
    assert "| alice, bob | 10 | 7 | 0.21 |" in card
    assert run("validate", wiki_copy).exit_code == 0
    again = run("audit", "--score", wiki_copy)
    assert again.exit_code == 0 and again.output == result.output
    assert (wiki_copy / "README.md").read_text() == card


def test_scoring_without_reviews_is_bad_input(wiki_copy):
    result = run("review", wiki_copy, "--score")
    assert result.exit_code == 2
    assert result.output.strip().endswith(
        f"no fully judged sample; judge some with: irbgen review {wiki_copy}"
    )


def test_export_reviewed_only_keeps_the_samples_judged_valid(wiki_copy, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    assert (
        run("export", wiki_copy, "--format", "parquet", "--out", tmp_path / "x", "--reviewed-only").exit_code
        == 2
    )
    ids = BenchmarkIndex.samples_only(wiki_copy).samples.ids
    write_reviews(wiki_copy, "alice", {ids[0]: (True, True, True), ids[1]: (True, False, True)})
    write_reviews(wiki_copy, "bob", {ids[2]: (True, True, True)})
    result = run("export", wiki_copy, "--format", "parquet", "--out", tmp_path / "out", "--reviewed-only")
    assert result.exit_code == 0, result.output
    assert "2 samples judged valid" in result.output
    samples = pq.read_table(tmp_path / "out" / "samples.parquet").column("id").to_pylist()
    queries = pq.read_table(tmp_path / "out" / "queries.parquet").column("_id").to_pylist()
    qrels = set(pq.read_table(tmp_path / "out" / "qrels.parquet").column("query_id").to_pylist())
    assert samples == queries == [ids[0], ids[2]] and qrels == {ids[0], ids[2]}
    corpus = pq.read_table(tmp_path / "out" / "corpus.parquet")
    assert corpus.num_rows == read_manifest(wiki_copy).counts["documents"]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "irbgen", "review", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_bad_input_is_one_line_and_exit_2(wiki_copy, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = str(busy.getsockname()[1])
        bench = str(wiki_copy)
        cases = {
            (str(tmp_path),): "not a benchmark directory (no samples.jsonl)",
            (str(tmp_path / "missing"),): "not a directory",
            (bench, "--port", port): f"--port {port}: 127.0.0.1:{port} is in use",
            (bench, "--reviewer", "../x"): "--reviewer '../x'",
            (bench, "--reviewer", ""): "--reviewer '': empty; give your name",
            (bench, "--reviewer", " \t"): "--reviewer ' \\t': empty; give your name",
            (bench, "--host", "0.0.0.0"): "--host 0.0.0.0: not a loopback address; pass --allow-host",
            (bench, "--host", "0.0.0.0", "--allow-host", "*"): "--allow-host '*': give one host name",
        }
        for args, message in cases.items():
            done = cli(*args)
            assert done.returncode == 2, (args, done.stderr)
            assert len(done.stderr.splitlines()) == 1 and message in done.stderr, done.stderr
            assert "Traceback" not in done.stderr and done.stdout == ""
    nobody = cli(str(wiki_copy), "--port", "0", env={"LOGNAME": " "})  # the login name is blank
    assert nobody.returncode == 2 and nobody.stdout == ""
    assert nobody.stderr == "irbgen: error: cannot tell who you are (no login name); pass --reviewer NAME\n"
    assert not [path for path in (wiki_copy / "reviews").iterdir() if not path.stem.strip()]


def test_the_command_serves_on_loopback_and_stops_on_ctrl_c(wiki_copy):
    server = ReviewServer(wiki_copy, "--reviewer", "carol")
    try:
        assert server.lines[0].startswith("reviewing 18 samples of run as carol (0 judged; judgments go to ")
        page = httpx.get(server.url, follow_redirects=True, timeout=10)
        assert page.status_code == 200 and 'name="review-token"' in page.text
        token = page.text.split('name="review-token" content="')[1].split('"')[0]
        sample = unquote(page.url.raw_path.decode().removeprefix("/sample/"))
        body = {"sample": sample, "well_formed": True}
        assert httpx.post(server.url + "judge", json=body, timeout=10).status_code == 403
        posted = httpx.post(server.url + "judge", json=body, headers={TOKEN_HEADER: token}, timeout=10)
        assert posted.status_code == 200 and posted.json()["status"] == "saved · 1 of 3 judged"
    finally:
        code, out, err = server.stop()
    assert code == 0, err
    assert out.strip() == "stopped; 0 of 18 samples judged by carol" and "Traceback" not in err
    (line,) = (wiki_copy / "reviews" / "carol.jsonl").read_text().splitlines()
    assert json.loads(line)["sample"] == sample


def test_a_judgment_of_a_sample_that_changed_since_is_stale(wiki_copy):
    session = open_session(wiki_copy)
    http = client(session)
    first, second = session.order[:2]
    for sample in (first, second):
        assert judge(http, session, sample, True, True, True).status_code == 200
    assert run("review", wiki_copy, "--score").exit_code == 0

    # the first sample's question is edited after it was judged
    samples = wiki_copy / "samples.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines) if json.loads(line)["id"] == first)
    record = json.loads(lines[number])
    record["question"] = record["question"].rstrip("?") + " today?"
    lines[number] = json.dumps(record, ensure_ascii=False) + "\n"
    samples.write_text("".join(lines), encoding="utf-8")

    result = run("review", wiki_copy, "--score")
    assert result.exit_code == 2 and "changed since they were judged" in result.output
    assert repr(first) in result.output
    reopened = open_session(wiki_copy)  # shown unjudged, to judge again; the other judgment stands
    assert first not in reopened.complete and second in reopened.complete


def test_review_shows_a_random_order_by_default_and_file_order_on_request(wiki_copy):
    ids = BenchmarkIndex.samples_only(wiki_copy).samples.ids
    drawn = open_session(wiki_copy)
    assert drawn.order == random_order(wiki_copy)[1] and sorted(drawn.order) == sorted(ids)
    assert drawn.order != ids  # 17 samples: a random order is not file order
    assert open_session(wiki_copy, "bob", seed=7).order == random_order(wiki_copy, 7)[1] != drawn.order
    in_file_order = open_session(wiki_copy, "carol", size=4, order="file")
    assert in_file_order.order == ids[:4]
    assert in_file_order.draw == Draw(order="file", size=4, population=len(ids))


def score_after(bench: Path, session: Session, samples: list[str]):
    http = client(session)
    for n, sample in enumerate(samples):
        assert judge(http, session, sample, True, n != 1, True).status_code == 200
    return run("review", bench, "--score")


def test_the_card_gives_an_interval_only_for_a_random_draw(wiki_copy):
    session = open_session(wiki_copy, "alice", order="file")
    result = score_after(wiki_copy, session, session.order[:4])  # the issue's case: the first 4 lines
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.endswith(": 3 valid, 75.0% (not a random sample: no interval)") and "[" not in result.output
    assert "drawn: in file order: not a random sample, no interval\n" in result.output
    card = (wiki_copy / "README.md").read_text()
    section = card[card.index("## Audit") : card.index("## How to load it")]
    assert "How the samples were drawn: in file order: not a random sample, no interval.\n" in section
    assert "| kind | judged | valid | rate |\n" in section and "| all | 4 | 3 | 75.0% |\n" in section
    assert "interval" not in section.replace("no interval", "") and "[" not in section

    shutil.rmtree(wiki_copy / "reviews")
    session = open_session(wiki_copy, "alice")  # the default: a random order with seed 0
    result = score_after(wiki_copy, session, session.order[:4])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0].endswith(": 3 valid, 75.0% [30.1%, 95.4%] (Wilson 95%)")
    assert "drawn: a random sample of 4 with seed 0\n" in result.output
    card = (wiki_copy / "README.md").read_text()
    section = card[card.index("## Audit") : card.index("## How to load it")]
    assert "How the samples were drawn: a random sample of 4 with seed 0. Intervals are Wilson 95%" in section
    assert "| all | 4 | 3 | 75.0% | [30.1%, 95.4%] |" in section
    assert run("validate", wiki_copy).exit_code == 0


@pytest.mark.parametrize(
    ("case", "drawn"),
    [
        ("skipped", "at random with seed 0, but the first 4 in that order include 1 not judged"),
        ("two seeds", "in 2 different orders (other --order, --seed or --sample)"),
        ("not recorded", "in an order not recorded (judged with an older irbgen)"),
    ],
)
def test_judgments_that_are_not_a_random_prefix_get_no_interval(wiki_copy, case, drawn):
    draw, ids = random_order(wiki_copy)
    yes = (True, True, True)
    if case == "skipped":
        write_reviews(wiki_copy, "alice", {sid: yes for sid in ids[:2] + ids[3:4]}, draw)
    elif case == "two seeds":
        other, shown = random_order(wiki_copy, 1)
        write_reviews(wiki_copy, "alice", {sid: yes for sid in ids[:2]}, draw)
        write_reviews(wiki_copy, "bob", {sid: yes for sid in shown[:2]}, other)
    else:
        write_reviews(wiki_copy, "alice", {sid: yes for sid in ids[:3]})
    result = run("review", wiki_copy, "--score")
    assert result.exit_code == 0, result.output
    assert f"drawn: {drawn}: not a random sample, no interval\n" in result.output and "[" not in result.output
    assert (
        f"How the samples were drawn: {drawn}: not a random sample, no interval."
        in (wiki_copy / "README.md").read_text()
    )


def test_export_reviewed_only_reads_the_judgments_of_a_scored_audit_sheet(wiki_copy, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    sheet = tmp_path / "sheet"
    assert run("audit", wiki_copy, "--sample", 6, "--seed", 2, "--out", sheet).exit_code == 0
    lines = [json.loads(line) for line in (sheet / "audit.jsonl").read_text().splitlines()]
    for n, item in enumerate(lines):
        item["judgment"].update(well_formed=True, answer_correct=n % 3 != 0, supported=True)
    (sheet / "audit.jsonl").write_text("".join(json.dumps(item) + "\n" for item in lines))
    assert run("audit", "--score", sheet).exit_code == 0
    kept = wiki_copy / "reviews" / "audits" / "audit-seed2-n6.jsonl"
    assert [json.loads(line)["sample"] for line in kept.read_text().splitlines()] == [i["id"] for i in lines]
    valid = [item["id"] for n, item in enumerate(lines) if n % 3 != 0]
    # a review of the same samples: alice finds one more of them not valid, and one other sample valid
    on_sheet = {item["id"] for item in lines}
    other = next(sid for sid in BenchmarkIndex.samples_only(wiki_copy).samples.ids if sid not in on_sheet)
    write_reviews(wiki_copy, "alice", {valid[0]: (False, True, True), other: (True, True, True)})
    result = run("export", wiki_copy, "--format", "parquet", "--out", tmp_path / "out", "--reviewed-only")
    assert result.exit_code == 0, result.output
    exported = pq.read_table(tmp_path / "out" / "samples.parquet").column("id").to_pylist()
    order = BenchmarkIndex.samples_only(wiki_copy).samples.ids
    assert exported == sorted(set(valid[1:]) | {other}, key=order.index)


def test_on_every_address_a_foreign_host_gets_no_page_no_token_and_no_write(wiki_copy):
    # bound to every address, reached only through loopback with the Host header an attacker's page sends
    server = ReviewServer(wiki_copy, "--reviewer", "dave", "--host", "0.0.0.0", "--allow-host", "review.test")
    try:
        assert server.lines[1].startswith(f"open http://review.test:{server.port}/ in a browser")
        with httpx.Client(trust_env=False, timeout=10) as http:
            page = http.get(server.url, headers={"Host": f"review.test:{server.port}"}, follow_redirects=True)
            assert page.status_code == 200
            token = page.text.split('name="review-token" content="')[1].split('"')[0]
            sample = unquote(page.url.raw_path.decode().removeprefix("/sample/"))
            for host in ("attacker.example", f"attacker.example:{server.port}", "0.0.0.0"):
                for path in ("", f"sample/{sample}"):
                    stolen = http.get(server.url + path, headers={"Host": host})
                    assert stolen.status_code == 403 and token not in stolen.text and "<" not in stolen.text
                body = {"sample": sample, "well_formed": True}
                posted = http.post(
                    server.url + "judge", json=body, headers={"Host": host, TOKEN_HEADER: token}
                )
                assert posted.status_code == 403
    finally:
        code, out, err = server.stop()
    assert code == 0, err
    assert err.startswith(
        "listening on 0.0.0.0: anyone who can reach it as review.test can read this benchmark; requests "
        "naming any other host get 403 and no page\n"
    )
    assert (wiki_copy / "reviews" / "dave.jsonl").read_bytes() == b""


def test_one_review_process_per_benchmark_and_reviewer(wiki_copy):
    first = ReviewServer(wiki_copy, "--reviewer", "erin")
    try:
        second = cli(str(wiki_copy), "--reviewer", "erin", "--port", "0")
        assert second.returncode == 2 and second.stdout == ""
        assert second.stderr == (
            f"irbgen: error: {wiki_copy}/reviews/erin.jsonl: in use by another irbgen process (pid "
            f"{first.process.pid}); stop it first, or review as another --reviewer\n"
        )
        other = ReviewServer(wiki_copy, "--reviewer", "frank")  # another reviewer may review alongside
        assert other.stop()[0] == 0
    finally:
        code, _, err = first.stop()
    assert code == 0, err
    again = ReviewServer(wiki_copy, "--reviewer", "erin")  # the lock went with the first process
    assert again.stop()[0] == 0


@pytest.mark.parametrize(
    ("host", "name"),
    [("127.0.0.1",) * 2, ("127.0.0.2",) * 2, ("localhost",) * 2, ("::1", "[::1]"), ("[::1]", "[::1]")],
)
def test_a_loopback_host_needs_no_allow_host(host, name):
    assert allowed_hosts(host, []) == [name]


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.5", "10.0.0.1", "review-box", "127.0.0.1.nip.io"]
)
def test_any_other_host_needs_allow_host(host):
    with pytest.raises(BadInputError, match=f"--host {host}: not a loopback address; pass --allow-host NAME"):
        allowed_hosts(host, [])
    assert allowed_hosts(host, ["review.lan", "[fe80::1]"]) == ["review.lan", "[fe80::1]"]


@pytest.mark.parametrize("name", ["*", "", "a b", "host:8765", "fe80::1", "*.example", "-x", "a/b"])
def test_an_allow_host_that_is_not_one_name_is_refused(name):
    with pytest.raises(BadInputError, match="--allow-host"):
        allowed_hosts("0.0.0.0", [name])


def test_a_draw_of_another_samples_file_or_beyond_the_draw_gets_no_interval():
    ids = [f"s{n}" for n in range(10)]
    whole = Draw(order="random", seed=3, population=10)
    shown = whole.ids(ids)
    assert describe([whole] * 3, set(shown[:3]), ids).text == "a random sample of 3 with seed 3"
    older = Draw(order="random", seed=3, population=12)
    assert describe([older], set(shown[:1]), ids).text == (
        "at random from 12 samples, but there are 10 now: not a random sample, no interval"
    )
    five = Draw(order="random", seed=3, size=5, population=10)
    beyond = set(five.ids(ids)) | (set(ids) - set(five.ids(ids)))
    found = describe([five] * len(beyond), beyond, ids)
    assert not found.random and found.text.endswith(
        "but 5 judged are not in it: not a random sample, no interval"
    )

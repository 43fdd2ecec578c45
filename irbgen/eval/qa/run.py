"""`irbgen eval qa`: ask a model every question of a benchmark with one method, score and judge the replies.

The output directory is resumable rather than atomic. predictions.jsonl grows one flushed line per
sample as answers arrive, so an interrupted run loses nothing it finished; a rerun skips samples that
already have a good prediction and retries failed ones. Every other file (config.json, per_query.jsonl,
metrics.json, ledger.json) is written whole to a temporary file and renamed into place, and the
metrics are always recomputed from predictions.jsonl in benchmark order.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import Counter
from collections.abc import Iterable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from irbgen import __version__
from irbgen.benchmark import consistent_read, read_documents, read_manifest, read_qrels, read_samples
from irbgen.errors import BadInputError
from irbgen.eval.breakdown import aggregate, sample_attributes
from irbgen.eval.qa.ablation import (
    ablations,
    answered_with_all,
    evidence_ids,
    hop_ablation_summary,
    needs_every_hop,
)
from irbgen.eval.qa.judge import Judge, judge_prediction, load_judge_prompt, summarize_verdicts
from irbgen.eval.qa.methods import (
    DEFAULT_K,
    DEFAULT_MAX_CONTEXT_TOKENS,
    CorpusContext,
    Method,
    build_request,
    corpus_context,
    get_method,
    parse_reply,
)
from irbgen.eval.qa.outdir import (
    CONFIG,
    LEDGER,
    METRICS,
    PER_QUERY,
    PREDICTIONS,
    check_out_contents,
    check_resumable,
)
from irbgen.eval.qa.react import DEFAULT_MAX_STEPS, WikiTools, run_react
from irbgen.eval.qa.scoring import (
    false_alarm_rate,
    false_premise_detection_rate,
    is_abstention,
    predicted_answers,
    retrieval_measures,
    retrieval_scores,
    score_prediction,
)
from irbgen.eval.qa.subset import limited
from irbgen.eval.qa.trajectory import FIELD, TRAJECTORY_MEASURES, hop_summary, score_trajectories
from irbgen.eval.retrievers import RETRIEVERS
from irbgen.io import write_atomic
from irbgen.llm.client import LLMClient, check_reachable
from irbgen.llm.ledger import JOURNAL, Ledger
from irbgen.llm.prompts import Prompt, load_prompt
from irbgen.llm.settings import LLMSettings
from irbgen.outputs import check_inputs
from irbgen.pipeline.rundir import locked, make_directory, remove_stale_temps
from irbgen.progress import Progress, silent
from irbgen.schema import Document, Sample
from irbgen.validation import invalid_benchmark, validate_benchmark

if TYPE_CHECKING:
    from irbgen.eval.corpus_index import SearchIndex

log = logging.getLogger(__name__)

ANSWER_MEASURES = ("precision", "recall", "f1", "em", "contains")
CLOSED_BOOK = "closed-book"
CLOSED_BOOK_BY = ("f1", "judge")
DEFAULT_CLOSED_BOOK_THRESHOLD = 0.5


@dataclass(frozen=True)
class QAOptions:
    """What `evaluate_qa` runs, apart from where: the method, the models and the method's settings.

    `settings` is the reader model's endpoint; `judge_settings` and `second_judge` the judges (a second
    judge needs a first). `k` is the documents retrieved for rag and cot-rag (and react's retrieval
    cut-off), `retriever` the index they search, `max_steps` react's step limit, `max_context_tokens`
    in-context's corpus budget, `limit` the first N samples only, and `resume` whether a rerun into the
    same directory picks up where it stopped (False: start over, the cost ledger kept). `today` is the
    date the prompts give as the current one (IRB style); by default the benchmark's `reference_date`
    from its manifest config, if it has one, and no date otherwise.

    For closed-book, each answered sample is marked `closed_book_correct` when its score reaches
    `closed_book_threshold`: the answer-set F1 (`closed_book_by` "f1"), or the judge score, the share
    of judges that said correct ("judge", which needs a judge).

    For hop-ablation, an ablation (one hop's evidence left out) still answers when its answer-set F1
    reaches `hop_ablation_threshold` (see irbgen.eval.qa.ablation).
    """

    method: str
    settings: LLMSettings
    k: int = DEFAULT_K
    limit: int | None = None
    judge_settings: LLMSettings | None = None
    second_judge: LLMSettings | None = None
    retriever: str = "bm25"
    max_steps: int = DEFAULT_MAX_STEPS
    resume: bool = True
    max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS
    today: str | None = None
    closed_book_by: str = "f1"
    closed_book_threshold: float = DEFAULT_CLOSED_BOOK_THRESHOLD
    hop_ablation_threshold: float = DEFAULT_CLOSED_BOOK_THRESHOLD


@dataclass
class _Run:
    """Everything one evaluation needs while it runs."""

    options: QAOptions
    method: Method
    prompt: Prompt
    date_note: str
    judge_settings: list[LLMSettings] = field(default_factory=list)
    judge_prompt: Prompt | None = None
    reader: LLMClient | None = None
    judges: list[Judge] = field(default_factory=list)
    index: SearchIndex | None = None  # for rag, cot-rag and react
    tools: WikiTools | None = None
    corpus: CorpusContext | None = None
    documents: dict[str, Document] = field(default_factory=dict)  # for hop-ablation: the evidence
    progress: Progress = silent
    answered: int = 0
    judged: int = 0
    todo: int = 0


async def evaluate_qa(
    benchmark_dir: Path | str, out_dir: Path | str, options: QAOptions, progress: Progress = silent
) -> dict[str, Any]:
    """Evaluate a method and model (see QAOptions) on a benchmark; write OUT_DIR and return a summary."""
    benchmark_dir, out_dir = Path(benchmark_dir), Path(out_dir)
    check_inputs(out_dir, {"--benchmark": benchmark_dir})
    spec = _check_options(options)
    settings, judge_settings, second_judge = options.settings, options.judge_settings, options.second_judge
    with consistent_read(benchmark_dir):  # a rewrite of the benchmark mid-run: exit 1, not mixed results
        _check_benchmark(benchmark_dir)
        for endpoint in (settings, judge_settings, second_judge):
            if endpoint is not None:
                endpoint.api_key()  # a missing key is bad input: say so before trying the network
                check_reachable(endpoint)
        manifest = read_manifest(benchmark_dir)
        samples = list(read_samples(benchmark_dir))
        benchmark_samples = len(samples)
        samples = limited(samples, options.limit)
        today = options.today
        if today is None and isinstance(manifest.config.get("reference_date"), str):
            today = manifest.config["reference_date"]

        prompt = load_prompt(spec.prompt)
        judge_prompt = load_judge_prompt() if judge_settings is not None else None
        judge_list = [s for s in (judge_settings, second_judge) if s is not None]
        date_note = f"Today's date is {today}.\n" if today else ""
        run = _Run(options, spec, prompt, date_note, judge_list, judge_prompt)
        run.progress = progress
        notes: list[str] = []
        if spec.whole_corpus:
            run.corpus = corpus_context(read_documents(benchmark_dir), options.max_context_tokens)
            if run.corpus.note:
                notes.append(f"in-context: {run.corpus.note}")
                log.warning("%s", run.corpus.note)
        if spec.evidence:
            wanted = {doc for sample in samples for doc in evidence_ids(sample)}
            run.documents = {doc.id: doc for doc in read_documents(benchmark_dir) if doc.id in wanted}

        config = {
            "kind": "qa",
            "benchmark": str(benchmark_dir.resolve()),
            "benchmark_name": manifest.name,
            "samples_sha256": manifest.files.get("samples.jsonl"),
            "method": spec.name,
            "model": settings.model,
            "base_url": _public_url(settings.endpoint),
            "prompt": {"name": prompt.name, "version": prompt.version},
            "temperature": 0.0,
            "k": options.k if spec.needs_index else None,  # react: the cut-off of its retrieval measures
            "retriever": options.retriever if spec.needs_index else None,
            "max_steps": options.max_steps if spec.agent else None,
            "max_context_tokens": options.max_context_tokens if spec.whole_corpus else None,
            "date": today,
            "closed_book": (
                {"by": options.closed_book_by, "threshold": options.closed_book_threshold}
                if spec.name == CLOSED_BOOK
                else None
            ),
            **(
                {"hop_ablation": {"by": "f1", "threshold": options.hop_ablation_threshold}}
                if spec.evidence
                else {}
            ),
            "limit": options.limit,
            "benchmark_samples": benchmark_samples,
            "judges": [
                {
                    "model": s.model,
                    "base_url": _public_url(s.endpoint),
                    "prompt": _ref(judge_prompt),
                    "temperature": 0.0,
                }
                for s in judge_list
            ],
            "irbgen_version": __version__,
            "notes": notes,
        }
        make_directory(out_dir)
        with locked(out_dir):
            return await _evaluate_locked(run, benchmark_dir, out_dir, config, samples, notes)


async def _evaluate_locked(
    run: _Run,
    benchmark_dir: Path,
    out_dir: Path,
    config: dict[str, Any],
    samples: list[Sample],
    notes: list[str],
) -> dict[str, Any]:
    """The evaluation proper, with OUT_DIR locked: resume or start over, evaluate, write the results."""
    spec, settings, judge_list = run.method, run.options.settings, run.judge_settings
    remove_stale_temps(out_dir)
    check_out_contents(out_dir)
    if run.options.resume:
        check_resumable(out_dir / CONFIG, config)
    else:
        for name in (PREDICTIONS, PER_QUERY, METRICS, CONFIG):  # the ledgers stay: money spent is spent
            (out_dir / name).unlink(missing_ok=True)
    previous = _load_predictions(out_dir / PREDICTIONS)
    _write_predictions(out_dir / PREDICTIONS, previous.values())  # drops a line cut by a kill
    _write_json(out_dir / CONFIG, config)

    judge_models = [s.model for s in judge_list]
    todo = [s for s in samples if not _complete(previous.get(s.id), judge_models)]
    log.info("%s: %d samples, %d done, %d to do", out_dir, len(samples), len(samples) - len(todo), len(todo))
    ledger = Ledger.open(out_dir / JOURNAL)  # every earlier run into OUT: --max-cost spans them all
    note = ledger.spent_note(out_dir, settings.max_cost)
    if note:
        log.warning("%s", note)
    before = ledger.total()
    rows = dict(previous)
    stopped: BaseException | None = None
    try:
        if todo:
            if spec.needs_index and any(not _has_prediction(previous.get(s.id)) for s in todo):
                from irbgen.eval.corpus_index import SearchIndex

                retriever = run.options.retriever
                run.index = SearchIndex.build(benchmark_dir, retriever=retriever, progress=run.progress)
                run.tools = WikiTools(run.index)
            run.todo = len(todo)
            stopped = await _evaluate(run, todo, previous, ledger, out_dir / PREDICTIONS, rows)
    finally:
        metrics = _write_results(out_dir, config, samples, rows, ledger, notes)
        ledger.close()
    if stopped is not None:
        raise stopped
    total = ledger.total()  # this run's usage: the ledger less what earlier runs spent
    for name in ("calls", "prompt_tokens", "completion_tokens", "cost"):
        setattr(total, name, getattr(total, name) - getattr(before, name))
    usage = {
        "calls": total.calls,
        "tokens": total.prompt_tokens + total.completion_tokens,
        "cost": round(total.cost, 6),
    }
    return {
        "out_dir": str(out_dir),
        "method": spec.name,
        "model": settings.model,
        "samples": len(samples),
        "queries": metrics["queries"],
        "evaluated": len(todo),
        "resumed": len(samples) - len(todo),
        "failures": metrics["failures"],
        "abstentions": metrics["abstentions"],
        "overall": metrics["overall"],
        "judge": metrics["judge"],
        "closed_book": metrics["closed_book"],
        "hop_ablation": metrics.get("hop_ablation"),
        "usage": usage,
        **usage,
    }


def run_qa(
    benchmark_dir: Path | str, out_dir: Path | str, options: QAOptions, progress: Progress = silent
) -> dict[str, Any]:
    """Synchronous wrapper of evaluate_qa (same arguments)."""
    return asyncio.run(evaluate_qa(benchmark_dir, out_dir, options, progress))


# ------------------------------------------------------------------------------------------ checking


def _check_options(options: QAOptions) -> Method:
    """The method's spec, once every option is known good; BadInputError names the first that is not."""
    spec = get_method(options.method)
    if options.k < 1:
        raise BadInputError(f"--k must be at least 1, got {options.k}")
    if options.limit is not None and options.limit < 0:
        raise BadInputError(f"--limit must be 0 or more, got {options.limit}")
    if options.max_steps < 1:
        raise BadInputError(f"--max-steps must be at least 1, got {options.max_steps}")
    if options.max_context_tokens < 1:
        raise BadInputError(f"max_context_tokens must be at least 1, got {options.max_context_tokens}")
    if options.second_judge is not None and options.judge_settings is None:
        raise BadInputError("--second-judge-model needs --judge-model")
    if options.closed_book_by not in CLOSED_BOOK_BY:
        raise BadInputError(
            f"--closed-book-by must be one of {', '.join(CLOSED_BOOK_BY)}, got {options.closed_book_by!r}"
        )
    if not 0.0 <= options.closed_book_threshold <= 1.0:
        raise BadInputError(
            f"--closed-book-threshold must be between 0 and 1, got {options.closed_book_threshold}"
        )
    if not 0.0 <= options.hop_ablation_threshold <= 1.0:
        raise BadInputError(
            f"hop_ablation_threshold must be between 0 and 1, got {options.hop_ablation_threshold}"
        )
    if spec.name == CLOSED_BOOK and options.closed_book_by == "judge" and options.judge_settings is None:
        raise BadInputError("--closed-book-by judge needs --judge-model")
    if spec.needs_index and options.retriever not in RETRIEVERS:
        raise BadInputError(
            f"unknown retriever {options.retriever!r}; choose one of: {', '.join(sorted(RETRIEVERS))}"
        )
    return spec


def _check_benchmark(path: Path) -> None:
    report = validate_benchmark(path)
    if not report.ok:
        raise invalid_benchmark(path, report)


def _public_url(url: str) -> str:
    """The endpoint without user info, query or fragment, which could carry a credential."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _ref(prompt: Prompt | None) -> dict[str, str] | None:
    return None if prompt is None else {"name": prompt.name, "version": prompt.version}


# -------------------------------------------------------------------------------------- evaluating


def _has_prediction(row: dict[str, Any] | None) -> bool:
    return row is not None and row.get("error") is None


def _complete(row: dict[str, Any] | None, judge_models: list[str]) -> bool:
    """A row is done when its prediction succeeded and every current judge gave a verdict."""
    if not _has_prediction(row) or not judge_models:
        return _has_prediction(row)
    verdicts = (row.get("judge") or {}).get("verdicts") or []
    judged = [v.get("model") for v in verdicts if v.get("error") is None]
    return judged == judge_models


async def _evaluate(
    run: _Run,
    todo: list[Sample],
    previous: dict[str, dict[str, Any]],
    ledger: Ledger,
    predictions: Path,
    rows: dict[str, dict[str, Any]],
) -> BaseException | None:
    """Evaluate samples concurrently, appending each row as it completes; return a stopping error."""
    stop = asyncio.Event()
    stopped: list[BaseException] = []
    limit = asyncio.Semaphore(run.options.settings.concurrency)
    async with AsyncExitStack() as stack:
        run.reader = await stack.enter_async_context(LLMClient(run.options.settings, ledger=ledger))
        for judge_settings in run.judge_settings:
            assert run.judge_prompt is not None
            client = await stack.enter_async_context(LLMClient(judge_settings, ledger=ledger))
            run.judges.append(Judge(client, judge_settings.model, run.judge_prompt))
        sink = stack.enter_context(predictions.open("a", encoding="utf-8"))

        async def one(sample: Sample) -> None:
            async with limit:
                if stop.is_set():
                    return
                try:
                    row = await _evaluate_sample(run, sample, previous.get(sample.id))
                except Exception as error:  # the budget, or a bug: stop taking samples, re-raise at the end
                    stopped.append(error)
                    stop.set()
                    return
                _append(sink, row)
                rows[sample.id] = row
                run.answered += 1
                run.progress("questions", run.answered, run.todo)

        await asyncio.gather(*(one(sample) for sample in todo))
    return stopped[0] if stopped else None


async def _evaluate_sample(run: _Run, sample: Sample, previous: dict[str, Any] | None) -> dict[str, Any]:
    """One sample's prediction row: reuse a good earlier prediction (only judging it again) or ask anew."""
    if _has_prediction(previous):
        assert previous is not None
        row = dict(previous)
    else:
        row = await _predict(run, sample)
    prediction = row.get("prediction")
    if row["error"] is None:
        metrics = score_prediction(prediction or "", sample.answers, sample.false_premise)
    else:  # a failed call is no answer to score: missing, not 0 (the failure is counted beside)
        metrics = dict.fromkeys(ANSWER_MEASURES, None)
        if sample.false_premise:
            metrics["false_premise_detected"] = None
    row.pop("judge", None)
    if run.judges and row["error"] is None:
        verdict = await judge_prediction(
            run.judges, sample.question, sample.answers, sample.false_premise, prediction or ""
        )
        row["judge"] = verdict
        run.judged += 1
        run.progress("judged", run.judged, run.todo)
        if verdict["score"] is not None:
            metrics["judge"] = verdict["score"]
    row["metrics"] = metrics
    return row


async def _predict(run: _Run, sample: Sample) -> dict[str, Any]:
    """Ask the reader (or run the agent) once for a sample."""
    assert run.reader is not None
    row: dict[str, Any] = {
        "id": sample.id,
        "question": sample.question,
        "method": run.method.name,
        "prediction": None,
        "predicted_answers": [],
        "gold": list(sample.answers),
        "false_premise": sample.false_premise,
        "metrics": {},
        "retrieved": [],
    }
    note = None
    if run.method.agent:
        assert run.tools is not None
        result = await run_react(
            run.reader,
            run.prompt,
            run.tools,
            sample.question,
            max_steps=run.options.max_steps,
            stage=f"qa.{run.method.name}",
            date_note=run.date_note,
        )
        prediction, error = result.answer, result.error
        row["retrieved"] = result.retrieved
        row["trajectory"] = result.trajectory
        row["steps"] = result.calls
        row["unanswered"] = result.unanswered
        completion = result.completion.to_record() if result.completion is not None else None
    else:
        shown = evidence_ids(sample) if run.method.evidence else None
        asked = await _ask(run, sample, shown)
        row["retrieved"] = asked["retrieved"]
        prediction, error, note, completion = (
            asked[key] for key in ("prediction", "error", "note", "completion")
        )
        if run.method.evidence and error is None:
            row["ablations"] = await _ablate(run, sample)
            error = next(
                (f"hop {a['hop']} left out: {a['error']}" for a in row["ablations"] if a["error"]), None
            )
    row["prediction"] = prediction if error is None else None
    row["predicted_answers"] = predicted_answers(prediction) if prediction and error is None else []
    row["completion"] = completion
    row["error"] = error
    row["note"] = note
    return row


async def _ask(run: _Run, sample: Sample, shown: list[str] | None = None) -> dict[str, Any]:
    """One call of a one-call method (evidence methods: showing the documents `shown`), its answer parsed."""
    assert run.reader is not None
    documents = [run.documents[doc] for doc in shown if doc in run.documents] if shown is not None else None
    request = build_request(
        run.method,
        run.prompt,
        sample,
        index=run.index,
        corpus=run.corpus,
        k=run.options.k,
        date_note=run.date_note,
        documents=documents,
    )
    reply = await run.reader.complete(request.messages, stage=f"qa.{run.method.name}", temperature=0.0)
    asked: dict[str, Any] = {"retrieved": request.retrieved, "prediction": None, "note": None}
    asked |= {"error": reply.error, "completion": reply.to_record()}
    if reply.error is None:
        parsed = parse_reply(run.method, reply.text or "")
        asked["prediction"], asked["note"] = parsed.answer, parsed.note
    return asked


async def _ablate(run: _Run, sample: Sample) -> list[dict[str, Any]]:
    """Ask once per hop with that hop's evidence left out; each answer scored like the sample's own."""
    tries = []
    for hop, left_out, shown in ablations(sample):
        asked = await _ask(run, sample, shown)
        prediction = asked["prediction"] if asked["error"] is None else None
        metrics = (
            None if prediction is None else score_prediction(prediction, sample.answers, sample.false_premise)
        )
        tries.append(
            {"hop": hop, "left_out": left_out, "shown": asked["retrieved"], "prediction": prediction,
             "metrics": metrics, "error": asked["error"], "completion": asked["completion"]}
        )  # fmt: skip
    return tries


# ------------------------------------------------------------------------------------------ results


def _write_results(
    out_dir: Path,
    config: dict[str, Any],
    samples: list[Sample],
    rows: dict[str, dict[str, Any]],
    ledger: Ledger,
    notes: list[str],
) -> dict[str, Any]:
    """Tidy predictions.jsonl (adding each row's trajectory retrieval) and write per_query.jsonl,
    metrics.json and ledger.json."""
    done = [(sample, rows[sample.id]) for sample in samples if sample.id in rows]
    retrieval, retrieval_rows, trajectories = _retrieval(config, done)
    predictions = _load_predictions(out_dir / PREDICTIONS)
    for sample_id, value in trajectories.items():
        if sample_id in predictions:
            predictions[sample_id][FIELD] = value
    marking = [("closed_book_correct", closed_book_correct, config.get("closed_book"))]
    marking.append(("needs_every_hop", needs_every_hop, config.get("hop_ablation")))
    for key, mark_of, rule in marking:
        if rule:
            for _, row in done:
                mark = mark_of(row, rule)
                row[key] = mark
                if row["id"] in predictions:
                    predictions[row["id"]][key] = mark
    _write_predictions(out_dir / PREDICTIONS, predictions.values())
    per_query = []
    for sample, row in done:
        entry = {"query_id": sample.id, "attributes": sample_attributes(sample), "metrics": row["metrics"]}
        if sample.id in retrieval_rows:
            entry["retrieval"] = retrieval_rows[sample.id]
        if row.get("error") is not None:
            entry["error"] = row["error"]
        per_query.append(entry)
    write_atomic(out_dir / PER_QUERY, "".join(_line(entry) for entry in per_query))

    metrics = _metrics(config, samples, done, per_query, retrieval, notes)
    if config.get("hop_ablation"):
        rule = config["hop_ablation"]
        marks = [(s.hops, row.get("needs_every_hop"), answered_with_all(row, rule)) for s, row in done]
        metrics["hop_ablation"] = hop_ablation_summary(marks, rule)
    metrics["usage"] = ledger.total().to_dict()  # every run into this directory, as ledger.json
    _write_json(out_dir / METRICS, metrics)
    ledger.save(out_dir / LEDGER)
    return metrics


def _metrics(
    config: dict[str, Any],
    samples: list[Sample],
    done: list[tuple[Sample, dict[str, Any]]],
    per_query: list[dict[str, Any]],
    retrieval: dict[str, Any] | None,
    notes: list[str],
) -> dict[str, Any]:
    measures = list(ANSWER_MEASURES)
    if config["judges"]:
        measures.append("judge")
    summary = aggregate(per_query, measures, optional=set(measures))
    answered = [(sample, row) for sample, row in done if row.get("error") is None]
    outcomes = [(sample.false_premise, row.get("prediction") or "") for sample, row in answered]
    detection = false_premise_detection_rate(outcomes)
    alarms = false_alarm_rate(outcomes)
    if detection is not None:
        summary["overall"]["false_premise_detection_rate"] = detection
    if retrieval is not None:
        summary["overall"].update(retrieval["overall"])
        for name, values in retrieval["by"].items():
            for value, cell in values.items():
                target = summary["by"].setdefault(name, {}).setdefault(value, {})
                target.update({m: v for m, v in cell.items() if m != "count"})
    ok = [(sample, row) for sample, row in done if row.get("error") is None]
    failures = [row for _, row in done if row.get("error") is not None]
    abstentions = sum(is_abstention(row.get("prediction") or "") for _, row in ok)
    fp_samples = sum(sample.false_premise for sample, _ in done)
    return {
        "kind": "qa",
        "method": config["method"],
        "model": config["model"],
        "benchmark_name": config["benchmark_name"],
        "samples": len(samples),
        "pending": len(samples) - len(done),
        **summary,
        "failures": len(failures),
        "failure_reasons": dict(Counter(_reason(row["error"]) for row in failures).most_common()),
        "abstentions": abstentions,
        "abstention_rate": abstentions / len(done) if done else 0.0,
        "unanswered": dict(Counter(row["unanswered"] for _, row in ok if row.get("unanswered"))),
        "false_premise": {
            "samples": fp_samples,
            "detected": sum(bool(row["metrics"].get("false_premise_detected")) for _, row in done),
            "detection_rate": detection,
            "false_alarm_rate": alarms,
        },
        "judge": summarize_verdicts(config["judges"], [row.get("judge") for _, row in done]),
        "closed_book": _closed_book_summary(config, done),
        "retrieval": retrieval,
        "notes": notes,
    }


def closed_book_correct(row: dict[str, Any], rule: dict[str, Any]) -> bool | None:
    """Whether a closed-book prediction counts as answered from memory under RULE ({"by", "threshold"}):
    its F1, or its judge score, at least the threshold. None for a failed call or a missing judge score."""
    if row.get("error") is not None:
        return None
    score = (row.get("metrics") or {}).get(rule["by"])
    if score is None:
        return None
    return bool(score >= rule["threshold"])


def _closed_book_summary(
    config: dict[str, Any], done: list[tuple[Sample, dict[str, Any]]]
) -> dict[str, Any] | None:
    """How many samples the closed-book model answered from memory, of those it was scored on."""
    rule = config.get("closed_book")
    if not rule:
        return None
    marks = [row.get("closed_book_correct") for _, row in done]
    scored = [mark for mark in marks if mark is not None]
    correct = sum(scored)
    return {
        **rule,
        "correct": correct,
        "scored": len(scored),
        "share": correct / len(scored) if scored else None,
    }


def _reason(error: str) -> str:
    return error if len(error) <= 120 else error[:117] + "..."


def _retrieval(
    config: dict[str, Any], done: list[tuple[Sample, dict[str, Any]]]
) -> tuple[dict[str, Any] | None, dict[str, dict[str, float]], dict[str, dict[str, Any]]]:
    """nDCG@k and R@k of the documents each prediction was shown, and the trajectory measures
    (irbgen.eval.qa.trajectory), over the queries that have qrels; also each query's trajectory values."""
    if config["retriever"] is None:
        return None, {}, {}
    k = config["k"] or DEFAULT_K
    qrels = read_qrels(Path(config["benchmark"]))
    answered = [(sample, row) for sample, row in done if row.get("error") is None]
    by_query = retrieval_scores(qrels, {sample.id: row.get("retrieved") or [] for sample, row in done}, k)
    trajectories = score_trajectories(qrels, answered)
    for qid, value in trajectories.items():
        if qid in by_query:
            by_query[qid].update({measure: value.get(measure, 0.0) for measure in TRAJECTORY_MEASURES})
    measures = [*retrieval_measures(k), *TRAJECTORY_MEASURES]
    rows = [
        {"query_id": sample.id, "attributes": sample_attributes(sample), "metrics": by_query[sample.id]}
        for sample, _ in done
        if sample.id in by_query
    ]
    summary = aggregate(rows, measures, optional=set(TRAJECTORY_MEASURES))
    summary["measures"] = measures
    summary["by_hop"] = hop_summary(trajectories.values())
    summary["note"] = (
        "documents each prediction was shown, in the order first shown; queries without qrels left out, "
        "queries with no documents count 0; trajectory measures over the answered queries only "
        "(a failed call has no trajectory to score)"
    )
    return summary, by_query, trajectories


# ------------------------------------------------------------------------------------------------ files


def _load_predictions(path: Path) -> dict[str, dict[str, Any]]:
    """The last row per id of predictions.jsonl, ordered by that row's position; bad lines are skipped.

    A bad line can only be the tail of a run killed mid-write, since lines are written whole.
    """
    rows: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return rows
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                row = json.loads(raw)
            except ValueError:
                log.warning("%s:%d: not a JSON line (cut by an interrupted run?); skipped", path, lineno)
                continue
            if not isinstance(row, dict) or not isinstance(row.get("id"), str) or "error" not in row:
                log.warning("%s:%d: not a prediction row; skipped", path, lineno)
                continue
            rows.pop(row["id"], None)
            rows[row["id"]] = row
    return rows


def _write_predictions(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    write_atomic(path, "".join(_line(row) for row in rows))


def _append(sink: IO[str], row: dict[str, Any]) -> None:
    sink.write(_line(row))
    sink.flush()


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def _write_json(path: Path, value: Any) -> None:
    write_atomic(path, json.dumps(value, ensure_ascii=False, indent=2) + "\n")

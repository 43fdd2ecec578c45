"""Retrieval measures by their ir_measures names, computed by trec_eval where it has them.

Names are parsed by ir_measures: `nDCG@10`, `R@100`, `RR@10`, `AP`, `P@5`, `Judged@10`, and trec_eval's
own names (`ndcg_cut.10`, `recall_100`, `recip_rank`, `map`). A measure trec_eval computes (pytrec_eval via
ir_measures) follows trec_eval exactly:

- nDCG uses the relevance grade as a linear gain and the ideal DCG of every judged-relevant document;
- a judged query missing from the run scores 0 (`per_query` fills it in, in `_fill_missing` only);
- queries without judgements are not evaluated.

trec_eval has no cutoff for recip_rank, so `RR@k` is recip_rank over each query's first k documents.
Any other measure (`Judged@k`, `ERR@k`, ...) is computed by the ir_measures backend that has it.

Run files are TREC's six columns, `qid Q0 docid rank score tag`, scores with six decimals. trec_eval orders
a run by score descending and breaks a tie by document id DESCENDING; other tools (ir_measures' RR@k and
Judged@k backends among them) break it by id ascending. So `trec_order` puts every ranking in trec_eval's
order and makes tied scores distinct (each later one 0.000001 lower), and the run that is evaluated is the
run as written: every tool reads the same order from the file and recomputes every value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.extras import missing_extra

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]
Rankings = Mapping[str, list[tuple[str, float]]]

DEFAULT_MEASURES = ("nDCG@{k}", "R@{k}", "RR@{k}", "AP")
SCORE_FORMAT = "{:.6f}"
# Measures trec_eval computes only over the whole run; with a cutoff we evaluate them on a cut run.
_CUT_BY_TRUNCATION = ("RR",)
_WHITESPACE = re.compile(r"\s")


def default_measures(k: int) -> list[str]:
    """The measures an evaluation reports unless told otherwise: nDCG@k, R@k, RR@k and AP."""
    return [name.format(k=k) for name in DEFAULT_MEASURES]


def run_depth(k: int, measures: Iterable[Any]) -> int:
    """Documents to rank per query: k, or the deepest cutoff among the (parsed) measures if deeper."""
    cutoffs = [m.params.get("cutoff") for m in measures]
    return max([k, *(cutoff for cutoff in cutoffs if isinstance(cutoff, int))])


def _ir_measures() -> Any:
    try:
        import ir_measures
    except ImportError:
        raise missing_extra("ir_measures", "retrieval measures") from None
    if not ir_measures.pytrec_eval.is_available():
        raise missing_extra("pytrec_eval", "retrieval measures")
    return ir_measures


def parse_measures(names: Iterable[Any]) -> list[Any]:
    """Parse measure names (or ir_measures Measure objects) into Measures, in order, without repeats.

    Every name is checked before any error is raised, and the error lists all the bad ones.
    """
    if isinstance(names, str):
        names = [names]
    ir_measures = _ir_measures()
    parsed: list[Any] = []
    bad: list[str] = []
    for name in names:
        found = _parse_one(ir_measures, name)
        if not found:
            bad.append(repr(name))
        for measure in found:
            if not _supported(ir_measures, measure):
                bad.append(f"{name!r} (no installed ir_measures backend computes {measure})")
            elif measure not in parsed:
                parsed.append(measure)
    if bad:
        raise BadInputError(
            f"unknown measure(s) {', '.join(bad)}; use ir_measures names like nDCG@10, R@100, RR@10, AP, "
            "P@5, Judged@10 or trec_eval names like ndcg_cut.10, recall.100, recip_rank, map"
        )
    if not parsed:
        raise BadInputError("no measures given")
    return parsed


def _parse_one(ir_measures: Any, name: Any) -> list[Any]:
    if isinstance(name, ir_measures.Measure):
        return [name]
    if not isinstance(name, str) or not name.strip():
        return []
    text = name.strip()
    try:
        return [ir_measures.parse_measure(text)]
    except (ValueError, NameError, SyntaxError, TypeError, AssertionError):
        pass
    try:
        return list(ir_measures.parse_trec_measure(text))
    except (ValueError, NameError, KeyError, IndexError, TypeError, AssertionError):
        return []


def _supported(ir_measures: Any, measure: Any) -> bool:
    try:
        return bool(_by_trec_eval(ir_measures, measure) or ir_measures.DefaultPipeline.supports(measure))
    except AssertionError:  # ir_measures validates parameters with assert
        return False


def _by_trec_eval(ir_measures: Any, measure: Any) -> bool:
    """Whether trec_eval computes the measure, on the whole run or on a run cut at its cutoff."""
    return bool(ir_measures.pytrec_eval.supports(measure) or _by_truncation(measure) is not None)


def _by_truncation(measure: Any) -> tuple[Any, int] | None:
    """(measure without cutoff, cutoff) when the measure is evaluated on a run cut at its cutoff."""
    cutoff = measure.params.get("cutoff")
    if measure.NAME not in _CUT_BY_TRUNCATION or cutoff is None or measure["judged_only"]:
        return None
    if not isinstance(cutoff, int) or cutoff < 1:
        return None
    whole = type(measure)(**{key: value for key, value in measure.params.items() if key != "cutoff"})
    return whole, cutoff


# ---------------------------------------------------------------------------------------------- values


def per_query(qrels: Qrels, run: Run, measures: Iterable[Any]) -> dict[str, dict[str, float]]:
    """{query id: {measure: value}} for every judged query, in qrels order; measures keyed by name."""
    ir_measures = _ir_measures()
    parsed = parse_measures(measures)
    qrels_dict = (
        qrels
        if _plain(qrels)
        else {qid: {doc: int(rel) for doc, rel in docs.items()} for qid, docs in qrels.items()}
    )
    run_dict = {qid: {doc: float(score) for doc, score in docs.items()} for qid, docs in run.items()}
    deepest = max((len(docs) for docs in run_dict.values()), default=0)
    # Group the measures by the depth their run is cut to; None is the whole run.
    groups: dict[int | None, dict[Any, list[str]]] = {}
    for measure in parsed:
        if not _by_trec_eval(ir_measures, measure):
            continue
        cut = _by_truncation(measure)
        depth = None if cut is None or cut[1] >= deepest else cut[1]  # a cut below the run changes nothing
        computed = measure if cut is None else cut[0]
        groups.setdefault(depth, {}).setdefault(computed, []).append(str(measure))
    values: dict[str, dict[str, float]] = {qid: {} for qid in qrels_dict}
    # Queries in the run but not in the qrels would be ignored by trec_eval; leave them out early.
    run_dict = {qid: docs for qid, docs in run_dict.items() if qid in qrels_dict}
    for depth, names in groups.items():
        group_run = run_dict if depth is None else _cut(run_dict, depth)
        _collect(values, ir_measures.pytrec_eval.iter_calc(list(names), qrels_dict, group_run), names)
    others = [measure for measure in parsed if not _by_trec_eval(ir_measures, measure)]
    if others:
        names = {measure: [str(measure)] for measure in others}
        _collect(values, _other_backends(ir_measures, others, qrels_dict, run_dict), names)
    return _fill_missing(values, parsed)


def _plain(qrels: Qrels) -> bool:
    """Whether qrels are already dicts of int grades (as read_qrels makes them), so need no copy."""
    return type(qrels) is dict and all(
        type(docs) is dict and all(type(rel) is int for rel in docs.values()) for docs in qrels.values()
    )


def _other_backends(ir_measures: Any, measures: list[Any], qrels: Qrels, run: Run) -> list[Any]:
    """The values of measures trec_eval lacks, from the ir_measures backend that has each."""
    try:
        return list(ir_measures.iter_calc(measures, qrels, run))
    except Exception as error:  # a backend's own failure (e.g. gdeval's perl script refusing the ids)
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BadInputError(
            f"measure(s) {', '.join(map(str, measures))}: ir_measures could not compute them on this run "
            f"({detail})"
        ) from None


def _collect(
    values: dict[str, dict[str, float]], metrics: Iterable[Any], names: Mapping[Any, list[str]]
) -> None:
    """Store each computed value of a judged query under the names of the measures it answers."""
    for metric in metrics:
        if metric.query_id in values:
            for name in names[metric.measure]:
                values[metric.query_id][name] = float(metric.value)


def _fill_missing(values: dict[str, dict[str, float]], measures: list[Any]) -> dict[str, dict[str, float]]:
    """The one place where a judged query the backend did not score gets each measure's default (0)."""
    for qid, row in values.items():
        values[qid] = {str(m): row.get(str(m), float(m.DEFAULT)) for m in measures}
    return values


def _cut(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    """Each query's first `depth` documents in trec_eval's order: score descending, then id descending."""
    cut = {}
    for qid, docs in run.items():
        if len(docs) <= depth:
            cut[qid] = docs
        else:
            cut[qid] = dict(sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)[:depth])
    return cut


def mean(qrels: Qrels, run: Run, measures: Iterable[Any]) -> dict[str, float]:
    """The mean of each measure over every judged query (a judged query missing from the run counts 0)."""
    parsed = parse_measures(measures)
    rows = per_query(qrels, run, parsed)
    names = [str(m) for m in parsed]
    if not rows:
        return dict.fromkeys(names, 0.0)
    return {name: math.fsum(row[name] for row in rows.values()) / len(rows) for name in names}


# -------------------------------------------------------------------------------------------- run files


def format_score(score: float) -> str:
    """A score as a run file writes it."""
    if not math.isfinite(score):
        raise BadInputError(f"score {score!r} is not a finite number")
    text = SCORE_FORMAT.format(score)
    return "0.000000" if text == "-0.000000" else text


def trec_order(rankings: Rankings) -> dict[str, list[tuple[str, float]]]:
    """Rankings as a run file holds them: scores rounded to six decimals, in trec_eval's order (score
    descending, then document id descending), each score that would tie the one before lowered to
    0.000001 below it, so that no tool can order the file another way."""
    ordered: dict[str, list[tuple[str, float]]] = {}
    for qid, ranking in rankings.items():
        rows: list[tuple[str, float]] = []
        last: int | None = None
        for units, doc_id in sorted(((_units(score), doc_id) for doc_id, score in ranking), reverse=True):
            if last is not None and units >= last:
                units = last - 1
            rows.append((doc_id, _from_units(units)))
            last = units
        ordered[qid] = rows
    return ordered


def _units(score: float) -> int:
    """A score as a whole number of millionths, rounded as the run file writes it."""
    return int(format_score(score).replace(".", ""))


def _from_units(units: int) -> float:
    sign = "-" if units < 0 else ""
    whole, part = divmod(abs(units), 1_000_000)
    return float(f"{sign}{whole}.{part:06d}")


def run_from_rankings(rankings: Rankings) -> dict[str, dict[str, float]]:
    """The run trec_eval reads from the run file of these rankings (in trec_order, scores as written)."""
    return {qid: dict(ranking) for qid, ranking in trec_order(rankings).items()}


def format_run(rankings: Rankings, tag: str = "irbgen") -> str:
    """TREC run text, `qid Q0 docid rank score tag` per line, queries in the given order, each ranking in
    trec_order."""
    _check_field(tag, "run tag")
    lines = []
    for qid, ranking in trec_order(rankings).items():
        _check_field(qid, "query id")
        for rank, (doc_id, score) in enumerate(ranking, 1):
            _check_field(doc_id, "document id")
            lines.append(f"{qid} Q0 {doc_id} {rank} {format_score(score)} {tag}\n")
    return "".join(lines)


def write_run(path: Path, rankings: Rankings, tag: str = "irbgen") -> None:
    """Write rankings as a TREC run file."""
    Path(path).write_text(format_run(rankings, tag), encoding="utf-8")


def read_run(path: Path) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run file as {query id: [(document id, score), ...]} in file order."""
    rankings: dict[str, list[tuple[str, float]]] = {}
    with Path(path).open(encoding="utf-8") as file:
        for lineno, line in enumerate(file, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 6:
                raise BadInputError(f"{path}:{lineno}: expected 6 fields (qid Q0 docid rank score tag)")
            qid, _, doc_id, _, score, _ = fields
            try:
                value = float(score)
            except ValueError:
                raise BadInputError(f"{path}:{lineno}: score {score!r} is not a number") from None
            rankings.setdefault(qid, []).append((doc_id, value))
    return rankings


def _check_field(value: str, what: str) -> None:
    if not value or _WHITESPACE.search(value):
        raise BadInputError(f"{what} {value!r} cannot be written to a run file (empty or has whitespace)")

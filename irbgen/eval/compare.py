"""Benchmarks side by side: sizes, hop and difficulty mix, answers, question length, overlap, BM25, and,
given closed-book evaluations, the share of samples a model answered from memory.

Each benchmark is read in three streams (samples, qrels, corpus), each once. Memory holds one entry per
sample and, per evidence document, only the words that occur in some question: a corpus of a million
documents is never loaded.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from irbgen.benchmark import (
    consistent_read,
    iter_qrels,
    read_documents,
    read_manifest,
    read_samples,
    staged_directory,
)
from irbgen.card import Spread
from irbgen.errors import BadInputError
from irbgen.eval.breakdown import attribute_text, ordered, value_order
from irbgen.eval.filtering import closed_book_marks
from irbgen.eval.plots import Panel, Series, colour_map, line_chart
from irbgen.eval.report.document import Bullets, Heading, Image, Table
from irbgen.eval.report.render import render_markdown
from irbgen.spread import OTHER, PropertySpread, share, top_rows

# Function words left out of the lexical overlap: they say nothing about whether evidence was found.
STOPWORDS = frozenset(
    """a an the of in on at to for from by with about into as and or but not no nor
    is are was were be been being am do does did has have had having will would can could should may might
    who whom whose what which when where why how many much that this these those there here
    it its he him his she her hers they them their theirs we us our you your i me my mine
    s than then so if any all some each every other such same own also very just only more most""".split()
)
ANSWER_TYPES = ("numeric", "date", "name_or_text")
BM25_MEASURE = "nDCG@10"
TOP_SPREAD = 10  # rows of each benchmark's property and subject-kind spread in compare.md
NONE = "(none)"  # the value of a sample without one (a Wikidata sample has no difficulty)
_TOKEN = re.compile(r"[^\W_]+")  # runs of letters and digits, any script
_NUMERIC = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_DATE = re.compile(r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])")
# Spellings of one date that generators write side by side ("15 July 1968", "July 15, 1968", "1968-07-15").
_DATE_FORMATS = ("%Y-%m-%d", "%d %B %Y", "%B %d, %Y", "%d %b %Y", "%b %d, %Y", "%B %Y")
_LEADING_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?=\s|$)")
_PUNCTUATION = re.compile(r"[^\w\s]")


def content_tokens(text: str) -> set[str]:
    """Distinct lowercase alphanumeric tokens of a text, stopwords left out."""
    return {token for token in _TOKEN.findall(text.lower()) if token not in STOPWORDS}


def answer_key(answer: str) -> tuple[str, str]:
    """(type, canonical value) of an answer, so that spellings of one value count once.

    Dates in the usual spellings become YYYY-MM-DD; a number (with or without thousands separators, or
    followed by a unit: "92 minute") becomes its value; other text is lowercased without punctuation.
    """
    text = " ".join(answer.split())
    for layout in _DATE_FORMATS:
        try:
            return "date", datetime.strptime(text, layout).date().isoformat()
        except ValueError:
            continue
    number = _LEADING_NUMBER.match(text)
    if number:
        return "numeric", repr(float(number.group().replace(",", "")))
    return "name_or_text", " ".join(_PUNCTUATION.sub(" ", text.lower()).split())


def answer_type(answer: str) -> str:
    """'numeric' (e.g. 3, -1.5, 1,024), 'date' (YYYY-MM-DD) or 'name_or_text'."""
    answer = answer.strip()
    if _DATE.fullmatch(answer):
        return "date"
    if _NUMERIC.fullmatch(answer):
        return "numeric"
    return "name_or_text"


def compare_benchmarks(
    bench_dirs: list[Path],
    out: Path | None,
    force: bool = False,
    bm25: bool = True,
    closed_book: Sequence[Path] = (),
) -> dict[str, Any]:
    """Profile each benchmark; with `out`, write compare.md, compare.json and distributions.png there.

    `closed_book`: closed-book evaluation directories (`eval qa --method closed-book`); each is matched
    to the benchmark it evaluated (by the sha256 of samples.jsonl), whose closed-book share it gives.
    """
    if not bench_dirs:
        raise BadInputError("no benchmark directories given")
    if out is not None:
        inputs = {"BENCH_DIRS": bench_dirs, "--closed-book": closed_book}
        with staged_directory(Path(out), force, "comparison", inputs) as tmp:  # fails early if OUT exists
            result = _compare(bench_dirs, bm25, list(closed_book))
            _write(result, tmp)
    else:
        result = _compare(bench_dirs, bm25, list(closed_book))
    return result


def closed_book_share(eval_dir: Path, sample_ids: set[str]) -> dict[str, Any]:
    """The share of a benchmark's scored samples that a closed-book evaluation marks correct."""
    config, marks = closed_book_marks(eval_dir)
    scored = [mark for sample_id, mark in marks.items() if sample_id in sample_ids and mark is not None]
    correct = sum(scored)
    return {
        "evaluation": str(eval_dir),
        "model": config.get("model"),
        "by": config["closed_book"].get("by"),
        "threshold": config["closed_book"].get("threshold"),
        "correct": correct,
        "scored": len(scored),
        "share": correct / len(scored) if scored else None,
    }


def _compare(bench_dirs: list[Path], bm25: bool, closed_book: list[Path] | None = None) -> dict[str, Any]:
    profiles = []
    for path in bench_dirs:
        with consistent_read(Path(path)):
            profiles.append(profile_benchmark(Path(path), bm25=bm25))
    if closed_book:
        _add_closed_book(profiles, bench_dirs, closed_book)
    names = Counter(profile["name"] for profile in profiles)
    for profile in profiles:
        if names[profile["name"]] > 1:
            profile["name"] = f"{profile['name']} ({profile['path']})"
    notes = [
        "Answers per question count every sample, false-premise ones (no answers) included, and count "
        "distinct answers: spellings of one date (15 July 1968, 1968-07-15) or one number (1,024, 1024, "
        "1024 metres) count once; other names and aliases count apart.",
        "Answer types count each distinct answer once: numeric, date (in any of the usual spellings), "
        "else name or text.",
        "Lexical overlap: the share of a question's distinct content words (lowercase, alphanumeric, "
        "stopwords left out) found in the text of its evidence documents, averaged over the samples that "
        "have evidence and content words.",
    ]
    if closed_book:
        notes.append(
            "Closed-book share: the share of the samples a closed-book evaluation scored that it marks "
            "closed_book_correct (answered without retrieval: F1 or judge score at the threshold or above), "
            "per model."
        )
    if bm25:
        notes.append(f"BM25 {BM25_MEASURE}: irbgen.eval.retrieval with retriever bm25 and k 10.")
    else:
        notes.append("BM25 was not run (--no-bm25).")
    return {"benchmarks": profiles, "notes": notes}


def _add_closed_book(profiles: list[dict[str, Any]], bench_dirs: list[Path], eval_dirs: list[Path]) -> None:
    """Give each profile the closed-book shares of the evaluations of its benchmark."""
    by_sha: dict[str, int] = {}
    for n, path in enumerate(bench_dirs):
        by_sha.setdefault(str(read_manifest(Path(path)).files.get("samples.jsonl")), n)
        profiles[n]["closed_book"] = []
    for eval_dir in eval_dirs:
        config, _ = closed_book_marks(Path(eval_dir))
        n = by_sha.get(str(config.get("samples_sha256")))
        if n is None:
            raise BadInputError(
                f"{eval_dir}: evaluated {config.get('benchmark_name')!r}, "
                "which is none of the benchmarks given"
            )
        ids = {sample.id for sample in read_samples(Path(bench_dirs[n]))}
        profiles[n]["closed_book"].append(closed_book_share(Path(eval_dir), ids))


def profile_benchmark(path: Path, bm25: bool = True) -> dict[str, Any]:
    """The statistics compare_benchmarks shows for one benchmark directory."""
    path = Path(path)
    manifest = read_manifest(path)
    hops: Counter[str] = Counter()
    difficulty: Counter[str] = Counter()
    question_types: Counter[str] = Counter()
    answers: Counter[int] = Counter()
    types = dict.fromkeys(ANSWER_TYPES, 0)
    lengths: list[int] = []
    false_premise = 0
    wanted: list[tuple[set[str], list[str]]] = []  # (content words, evidence ids) per sample with both
    spread = PropertySpread()
    for sample in read_samples(path):
        spread.add(sample)
        hops[str(sample.hops)] += 1
        difficulty[_key(sample.difficulty)] += 1
        question_types[_key(sample.attributes.question_type)] += 1
        distinct = {answer_key(answer) for answer in sample.answers}
        answers[len(distinct)] += 1
        for kind, _ in distinct:
            types[kind] += 1
        lengths.append(len(sample.question.split()))
        false_premise += sample.false_premise
        words = content_tokens(sample.question)
        if words and sample.evidence:
            wanted.append((words, sample.evidence))
    samples = len(lengths)
    qrels = sum(1 for _ in iter_qrels(path))
    documents, evidence_words = _scan_corpus(path, wanted)
    overlaps = [
        len(words & set().union(*(evidence_words.get(doc_id, ()) for doc_id in evidence))) / len(words)
        for words, evidence in wanted
    ]
    answer_spread = Spread.of(answers)
    return {
        "name": manifest.name or path.name,
        "path": str(path),
        "source": manifest.source,
        "documents": documents,
        "samples": samples,
        "qrels": qrels,
        "hops": _distribution(hops),
        "difficulty": _distribution(difficulty),
        "question_types": _distribution(question_types),
        "answers_per_question": {
            "mean": answer_spread.mean,
            "median": answer_spread.median,
            "max": answer_spread.max,
        },
        "answer_types": types,
        "false_premise": false_premise,
        "false_premise_share": false_premise / samples if samples else 0.0,
        "question_tokens": {
            "mean": statistics.fmean(lengths) if lengths else 0.0,
            "median": float(statistics.median(lengths)) if lengths else 0.0,
        },
        "lexical_overlap": {
            "mean": statistics.fmean(overlaps) if overlaps else None,
            "samples": len(overlaps),
        },
        "bm25_ndcg@10": _bm25(path) if bm25 else None,
        "spread": _spread_profile(spread),
    }


SPREADS = (
    ("final hop", "Final-hop properties"),
    ("bridges", "Bridge properties"),
    ("subject kind", "Subject kinds"),
)


def _spread_profile(spread: PropertySpread) -> dict[str, Any]:
    """Counts (largest first, ties by name) of final-hop and bridge properties and subject kinds, with the
    totals their shares are of: Wikidata samples, bridge hops, Wikidata samples."""
    return {
        name: {"total": total, "counts": dict(top_rows(counts, top=len(counts)))}
        for name, (counts, total) in spread.parts().items()
    }


def _top_spread(profile: dict[str, Any], name: str) -> str:
    """The most common value of one spread and its share ("country 24.0%"), n/a without Wikidata samples."""
    part = profile["spread"][name]
    if not part["counts"]:
        return "n/a"
    value, count = next(iter(part["counts"].items()))
    return f"{value} {100 * count / part['total']:.1f}% ({len(part['counts'])} distinct)"


def _spread_rows(
    profiles: list[dict[str, Any]], name: str, top: int = TOP_SPREAD
) -> tuple[tuple[str, ...], ...]:
    """Side by side: the values in any benchmark's top `top`, then "other" (each benchmark's rest)."""
    parts = [profile["spread"][name] for profile in profiles]
    shown: dict[str, int] = {}
    for part in parts:
        for value, count in list(part["counts"].items())[:top]:
            shown[value] = shown.get(value, 0) + count
    values = [value for value, _ in top_rows(Counter(shown), top=len(shown))]
    rows = [
        (value, *(share(part["counts"].get(value, 0), part["total"]) for part in parts)) for value in values
    ]
    rest = [sum(n for value, n in part["counts"].items() if value not in shown) for part in parts]
    if any(rest):
        rows.append((OTHER, *(share(n, part["total"]) for n, part in zip(rest, parts, strict=True))))
    return tuple(rows)


def _scan_corpus(path: Path, wanted: list[tuple[set[str], list[str]]]) -> tuple[int, dict[str, set[str]]]:
    """Count the documents and keep, per evidence document, the question words its text contains."""
    needed = {doc_id for _, evidence in wanted for doc_id in evidence}
    vocabulary = set().union(*(words for words, _ in wanted))
    found: dict[str, set[str]] = {}
    documents = 0
    for document in read_documents(path):
        documents += 1
        if document.id in needed:
            found[document.id] = content_tokens(document.text) & vocabulary
    return documents, found


def _bm25(path: Path) -> float:
    # Imported here: the retrieval evaluation pulls in its own optional dependencies.
    from irbgen.eval.retrieval import evaluate_retrieval

    with tempfile.TemporaryDirectory(prefix="irbgen-compare-") as tmp:
        metrics = evaluate_retrieval(path, Path(tmp) / "bm25", retriever="bm25", k=10)
    return float(metrics["overall"][BM25_MEASURE])


def _key(value: Any) -> str:
    return NONE if value is None else attribute_text(value)


def _distribution(counts: Counter[str]) -> dict[str, int]:
    return {value: counts[value] for value in ordered(counts)}


# ------------------------------------------------------------------------------------------- output


def _rows(result: dict[str, Any]) -> list[tuple[str, ...]]:
    """The side-by-side table: one row per measure, one column per benchmark."""

    def row(label: str, get: Any) -> tuple[str, ...]:
        return (label, *(get(profile) for profile in result["benchmarks"]))

    def mean_median(key: str) -> Any:
        return lambda p: f"{_fmt(p[key]['mean'], 2)} / {_fmt(p[key]['median'], 0, 'g')}"

    return [
        row("source", lambda p: p["source"]),
        row("documents", lambda p: str(p["documents"])),
        row("samples", lambda p: str(p["samples"])),
        row("qrels", lambda p: str(p["qrels"])),
        row("hops (mean)", lambda p: _fmt(_mean(p["hops"]), 2)),
        row("difficulty (mean)", lambda p: _fmt(_mean(p["difficulty"]), 2)),
        row("question types", lambda p: str(len(p["question_types"]))),
        row(
            "answers per question (mean / median / max)",
            lambda p: f"{mean_median('answers_per_question')(p)} / {p['answers_per_question']['max']}",
        ),
        *(
            row(f"answers: {kind.replace('_', ' ')}", lambda p, kind=kind: str(p["answer_types"][kind]))
            for kind in ANSWER_TYPES
        ),
        row("false-premise share", lambda p: _fmt(p["false_premise_share"], 3)),
        row("question tokens (mean / median)", mean_median("question_tokens")),
        row("lexical overlap with evidence (mean)", lambda p: _fmt(p["lexical_overlap"]["mean"], 3)),
        row(f"BM25 {BM25_MEASURE}", lambda p: _fmt(p["bm25_ndcg@10"], 4)),
        *(
            row(f"top {name} (share, distinct)", lambda p, name=name: _top_spread(p, name))
            for name, _ in SPREADS
            if any(profile["spread"][name]["counts"] for profile in result["benchmarks"])
        ),
        *(
            [row("closed-book share", _closed_book_text)]
            if any("closed_book" in profile for profile in result["benchmarks"])
            else []
        ),
    ]


def _closed_book_text(profile: dict[str, Any]) -> str:
    """Each closed-book evaluation's share of the benchmark, with its model; n/a without one."""
    shares = profile.get("closed_book") or []
    return " / ".join(f"{_fmt(share['share'], 3)} ({share['model']})" for share in shares) or "n/a"


def render_table(result: dict[str, Any]) -> str:
    """The side-by-side table as aligned plain text, for a terminal."""
    rows = [("", *(profile["name"] for profile in result["benchmarks"])), *_rows(result)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in rows]
    return "\n".join(line.rstrip() for line in lines)


def _write(result: dict[str, Any], tmp: Path) -> None:
    profiles = result["benchmarks"]
    names = tuple(profile["name"] for profile in profiles)
    colours = colour_map(names)  # a benchmark keeps its colour in both panels
    panels = [
        Panel(
            f"{title} distribution",
            title,
            "share of samples",
            tuple(
                Series(profile["name"], _shares(profile[key]), colour=colours[profile["name"]])
                for profile in profiles
                if _shares(profile[key])
            ),
        )
        for key, title in (("hops", "hops"), ("difficulty", "difficulty"))
    ]
    panels = [panel for panel in panels if panel.series]
    top = max((y for panel in panels for series in panel.series for _, y in series.points), default=1.0)
    line_chart(tmp / "distributions.png", panels, ylim=(0.0, top * 1.1))
    blocks = [
        Heading(1, "irbgen benchmark comparison"),
        Table(("measure", *names), tuple(_rows(result))),
        Image("distributions.png", "hops and difficulty distributions"),
    ]
    for key, title in (("hops", "Hops"), ("difficulty", "Difficulty"), ("question_types", "Question types")):
        values = ordered(value for profile in profiles for value in profile[key])
        rows = tuple(
            (value, *(_count_share(profile, key, value) for profile in profiles)) for value in values
        )
        blocks += [Heading(2, title), Table((title.lower(), *names), rows)]
    for name, title in SPREADS:
        if any(profile["spread"][name]["counts"] for profile in profiles):
            blocks += [Heading(2, title), Table((name, *names), _spread_rows(profiles, name))]
    blocks += [Heading(2, "Notes"), Bullets(tuple(result["notes"]))]
    (tmp / "compare.md").write_bytes(render_markdown(blocks).encode())
    text = json.dumps(result, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    (tmp / "compare.json").write_bytes(text.encode())


def _shares(counts: dict[str, int]) -> tuple[tuple[str, float], ...]:
    """Each value's share of the samples; samples without a value ("(none)") are not a point to plot."""
    total = sum(counts.values())
    return tuple((value, n / total) for value, n in counts.items() if value != NONE) if total else ()


def _count_share(profile: dict[str, Any], key: str, value: str) -> str:
    count = profile[key].get(value, 0)
    samples = profile["samples"]
    return f"{count} ({100 * count / samples:.1f}%)" if samples else str(count)


def _mean(counts: dict[str, int]) -> float | None:
    """Mean of the numeric values of a distribution; None when it has none."""
    pairs = [(float(value), count) for value, count in counts.items() if value_order(value)[0] == 0]
    total = sum(count for _, count in pairs)
    return sum(value * count for value, count in pairs) / total if total else None


def _fmt(value: float | None, digits: int, kind: str = "f") -> str:
    """A number with DIGITS digits ("g": as short as it goes), or n/a for none (an empty benchmark)."""
    if value is None:
        return "n/a"
    return f"{value:g}" if kind == "g" else f"{value:.{digits}f}"

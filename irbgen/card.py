"""The dataset card (README.md) of a benchmark directory, and the statistics it shows."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from irbgen.schema import Document, Manifest, Sample
from irbgen.spread import PropertySpread, share, top_rows

MAX_TABLE_ROWS = 50  # a breakdown with more distinct values (e.g. real-valued difficulty) is cut here

_SOURCE_TEXT = {
    "phantom": "a synthetic world (PhantomWiki-style): generated articles, with answers computed exactly "
    "over the generated facts",
    "wikipedia": "Wikipedia citing sentences (IRB-style): questions grounded in the web pages "
    "a sentence cites",
    "wikidata": "Wikidata triple chains (MINTQA-style): questions over chains of connected triples",
}

# The licence of a benchmark whose builder gave none, by source.
_SOURCE_LICENCE = {
    "phantom": "The documents and questions are synthetic; they describe no real people.",
    "wikipedia": "Text from Wikipedia is available under CC BY-SA 4.0 and needs attribution. Cited web pages "
    "keep their own licences and copyright; check them before redistributing the corpus.",
    "wikidata": "Wikidata content is available under CC0 1.0. Any Wikipedia text included is CC BY-SA 4.0.",
}

_FILES = (
    ("corpus.jsonl", "one document per line: `_id`, `title`, `text`, `metadata` (BEIR)"),
    ("queries.jsonl", "one question per sample: `_id`, `text`, `metadata` (BEIR)"),
    (
        "qrels/test.tsv",
        "`query-id`, `corpus-id`, `score` with a header; score 1 per evidence document (BEIR)",
    ),
    (
        "queries_hops.jsonl",
        "one query per hop of each sample's chain: `_id` `QID#h0`, `QID#h1`, ..., the hop's "
        "sub-question as `text`, `metadata` (sample id, hop index, hop count, answers)",
    ),
    ("qrels/hops.tsv", "as qrels/test.tsv, for the hop queries: score 1 per document of the hop's evidence"),
    ("samples.jsonl", "full samples: answers, hops, reasoning chain, attributes, provenance"),
    ("manifest.json", "tool version, command, configuration, seed, counts and the sha256 of every file"),
    ("README.md", "this card"),
)


@dataclass(frozen=True)
class Spread:
    """Mean, median and maximum of a per-sample count."""

    mean: float
    median: float
    max: int

    @classmethod
    def of(cls, histogram: Mapping[int, int]) -> Spread:
        """Summarise a histogram (value -> how many samples have it)."""
        n = sum(histogram.values())
        if n == 0:
            return cls(0.0, 0.0, 0)
        values = sorted(histogram)
        mean = sum(v * c for v, c in histogram.items()) / n
        median = (_nth(histogram, values, (n - 1) // 2) + _nth(histogram, values, n // 2)) / 2
        return cls(mean, median, values[-1])


def _nth(histogram: Mapping[int, int], values: list[int], k: int) -> int:
    """The k-th smallest value (0-based) of the multiset a histogram describes."""
    for value in values:
        k -= histogram[value]
        if k < 0:
            return value
    raise IndexError(k)


@dataclass
class BenchmarkStats:
    """Statistics of a benchmark, gathered in the single writing pass; the dataset card shows them."""

    documents: int = 0
    document_tokens: int = 0  # whitespace tokens over all document texts
    samples: int = 0
    qrels: int = 0
    false_premise: int = 0
    aggregation: int = 0
    by_hops: Counter[int] = field(default_factory=Counter)
    by_difficulty: Counter[float | None] = field(default_factory=Counter)
    by_question_type: Counter[str | None] = field(default_factory=Counter)
    by_template_id: Counter[int | None] = field(default_factory=Counter)
    templates: dict[int, str] = field(default_factory=dict)  # template id -> first template string seen
    by_source: Counter[str] = field(default_factory=Counter)
    answers_histogram: Counter[int] = field(default_factory=Counter)  # number of answers -> samples
    evidence_histogram: Counter[int] = field(default_factory=Counter)  # number of evidence docs -> samples
    spread: PropertySpread = field(default_factory=PropertySpread)  # Wikidata samples only

    @property
    def mean_document_tokens(self) -> float:
        """Mean whitespace tokens per document."""
        return self.document_tokens / self.documents if self.documents else 0.0

    @property
    def answers_per_sample(self) -> Spread:
        """Mean, median and maximum number of answers per sample."""
        return Spread.of(self.answers_histogram)

    @property
    def evidence_per_sample(self) -> Spread:
        """Mean, median and maximum number of evidence documents per sample."""
        return Spread.of(self.evidence_histogram)

    def add_document(self, document: Document) -> None:
        """Count one document."""
        self.documents += 1
        self.document_tokens += len(document.text.split())

    def add_sample(self, sample: Sample) -> None:
        """Count one sample and its qrels pairs."""
        attributes = sample.attributes
        self.samples += 1
        self.qrels += len(sample.evidence)
        self.false_premise += sample.false_premise
        self.aggregation += attributes.aggregation
        self.by_hops[sample.hops] += 1
        self.by_difficulty[sample.difficulty] += 1
        self.by_question_type[attributes.question_type] += 1
        self.by_template_id[attributes.template_id] += 1
        if attributes.template_id is not None and attributes.template is not None:
            self.templates.setdefault(attributes.template_id, attributes.template)
        self.by_source[sample.source] += 1
        self.answers_histogram[len(sample.answers)] += 1
        self.evidence_histogram[len(sample.evidence)] += 1
        self.spread.add(sample)


def render_card(manifest: Manifest, stats: BenchmarkStats, description: str, licence: str) -> str:
    """The README.md dataset card of a benchmark, in Markdown; the same inputs give the same text."""
    parts = [
        f"# {manifest.name}\n",
        (
            description.strip()
            or f"A question-answering and retrieval benchmark generated by irbgen from "
            f"{_SOURCE_TEXT.get(manifest.source, manifest.source)}."
        )
        + "\n",
        _how_made(manifest),
        _layout(),
        _statistics(stats),
        _how_to_load(),
        _licence(manifest, licence),
    ]
    return "\n".join(parts)


def _how_made(manifest: Manifest) -> str:
    seed = "none" if manifest.seed is None else str(manifest.seed)
    lines = [
        "## How it was made\n",
        f"Generated by {manifest.tool} {manifest.tool_version} (format {manifest.format_version}) from the "
        f"`{manifest.source}` source with seed {seed}:\n",
        _code_block(manifest.command, ""),
    ]
    if manifest.command.endswith(" --out OUT"):
        lines.append(
            "This command rebuilds it byte for byte, with the last word, OUT, replaced by the directory to "
            "write.\n"
        )
    elif manifest.command.endswith(" --out RUN"):
        lines.append(
            "This command rebuilds it byte for byte when run in the folder the first build ran in: input "
            "files appear as their paths were given there (a path given in full appears as its file name "
            "alone: put that file in the folder). Replace the last word, RUN, by the run directory to write, "
            f"named `{manifest.name}` for the same bytes; its benchmark is then `RUN/benchmark`.\n"
        )
    if manifest.config:
        rows = [(f"`{key}`", _value(manifest.config[key])) for key in sorted(manifest.config)]
        lines.append(_table(("setting", "value"), rows))
    if manifest.rejects:
        rows = [(key, str(manifest.rejects[key])) for key in sorted(manifest.rejects)]
        lines.append("Records rejected while building, by stage and reason:\n")
        lines.append(_table(("reject", "count"), rows))
    return "\n".join(lines)


def _layout() -> str:
    return "## Files\n\n" + _table(("file", "contents"), [(f"`{name}`", text) for name, text in _FILES])


def _statistics(stats: BenchmarkStats) -> str:
    answers, evidence = stats.answers_per_sample, stats.evidence_per_sample
    overall = [
        ("documents", str(stats.documents)),
        ("mean whitespace tokens per document", f"{stats.mean_document_tokens:.1f}"),
        ("samples", str(stats.samples)),
        ("qrels pairs", str(stats.qrels)),
        ("false-premise samples", str(stats.false_premise)),
        ("aggregation samples", str(stats.aggregation)),
        (
            "answers per sample (mean / median / max)",
            f"{answers.mean:.2f} / {answers.median:g} / {answers.max}",
        ),
        (
            "evidence documents per sample (mean / median / max)",
            f"{evidence.mean:.2f} / {evidence.median:g} / {evidence.max}",
        ),
    ]
    templates = [
        (_key(key), _code(stats.templates.get(key, "")) if key is not None else "", str(count))
        for key, count in _sorted(stats.by_template_id)
    ]
    sections = [
        "## Statistics\n",
        _table(("measure", "value"), overall),
        "### By source\n",
        _breakdown("source", stats.by_source),
        "### By hops\n",
        _breakdown("hops", stats.by_hops),
        "### By difficulty\n",
        _breakdown("difficulty", stats.by_difficulty),
        "### By question type\n",
        _breakdown("question type", stats.by_question_type),
        "### By template\n",
        _table(("template id", "template", "samples"), _cap(templates, 3)),
    ]
    if stats.spread.samples:
        sections.append(_spread(stats.spread))
    return "\n".join(sections)


def _spread(spread: PropertySpread) -> str:
    """Properties asked (final hop; bridges) and the kinds of entity questions start from."""
    heads = {"final hop": "property", "bridges": "property", "subject kind": "instance of"}
    lines = [
        "### Properties and entity kinds\n",
        "The property each question finally asks for (its share of the samples), the properties of the "
        "hops before it (their share of the bridge hops), and the class (instance of) of the entity each "
        "question starts from (its share of the samples).\n",
    ]
    for name, (counts, total) in spread.parts().items():
        if counts:
            cells = [(_cell(value), share(count, total)) for value, count in top_rows(counts)]
            lines += [f"#### {name.capitalize()}\n", _table((heads[name], "count (share)"), cells)]
    return "\n".join(lines)


def _how_to_load() -> str:
    snippet = """import json
from pathlib import Path

root = Path(".")  # this directory: the one that holds this card
corpus = {}
with open(root / "corpus.jsonl", encoding="utf-8") as f:
    for line in f:
        doc = json.loads(line)
        corpus[doc["_id"]] = {"title": doc["title"], "text": doc["text"]}
with open(root / "queries.jsonl", encoding="utf-8") as f:
    queries = {q["_id"]: q["text"] for q in map(json.loads, f)}
qrels = {}
with open(root / "qrels" / "test.tsv", encoding="utf-8") as f:
    next(f)  # header
    for line in f:
        query_id, corpus_id, score = line.rstrip("\\n").split("\\t")
        qrels.setdefault(query_id, {})[corpus_id] = int(score)
"""
    return "\n".join(
        [
            "## How to load it\n",
            "The corpus, queries and qrels follow the BEIR layout, so BEIR's `GenericDataLoader` reads them "
            '(`split="test"`). With the standard library alone, run in this directory (the one that holds '
            "this card):\n",
            _code_block(snippet.rstrip("\n"), "python"),
            "`samples.jsonl` holds the full records (all answers, reasoning chain, attributes, provenance). "
            "Check the directory against its manifest, from the same place, with:\n",
            _code_block("irbgen validate .", "sh"),
        ]
    )


def _licence(manifest: Manifest, licence: str) -> str:
    """One statement: the licence the builder gave, else its source's usual terms, else that there is none."""
    text = licence.strip() or _SOURCE_LICENCE.get(manifest.source, "No licence was given for this benchmark.")
    return f"## Licence\n\n{text}\n"


def _breakdown(name: str, counts: Mapping[Any, int]) -> str:
    rows = [(_key(key), str(count)) for key, count in _sorted(counts)]
    return _table((name, "samples"), _cap(rows, 2))


def _sorted(counts: Mapping[Any, int]) -> list[tuple[Any, int]]:
    """Items by key, None last, so the tables do not depend on the order samples came in."""
    return sorted(counts.items(), key=lambda item: (item[0] is None, item[0] if item[0] is not None else 0))


def _cap(rows: list[tuple[str, ...]], width: int) -> list[tuple[str, ...]]:
    if len(rows) <= MAX_TABLE_ROWS:
        return rows
    rest = len(rows) - MAX_TABLE_ROWS
    return rows[:MAX_TABLE_ROWS] + [(f"… {rest} more values",) + ("",) * (width - 1)]


def _key(key: Any) -> str:
    return "(none)" if key is None else _cell(str(key))


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _cell(text)


def _code(text: str) -> str:
    """A table cell showing text literally (templates hold <placeholders> a Markdown viewer would eat)."""
    if not text:
        return ""
    if "`" in text:
        return _cell(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
    return f"`{_cell(text)}`"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _code_block(code: str, language: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}{language}\n{code}\n{fence}\n"

"""audit.md: the audit sheet as Markdown a reviewer reads beside audit.jsonl."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from irbgen.audit.records import KINDS, AuditHeader, AuditItem, Fact

CRITERIA_HELP = (
    ("well_formed", "the question is clear, grammatical and answerable as asked"),
    (
        "answer_correct",
        "the gold answers are right; for a false premise, the premise really is false (so no answer is "
        "right)",
    ),
    ("supported", "the evidence passages support the facts the answer rests on"),
)
FACT_HEADINGS = {"keypoint": "Keypoints", "triple": "Triples", "chain": "Chain facts"}
_SPECIAL = re.compile(r"([\\`*\[\]<>#|]|(?<!\w)_|_(?!\w))")


def render_markdown(header: AuditHeader, items: Sequence[AuditItem]) -> str:
    """The whole sheet: instructions, then one numbered section per item."""
    parts = [_preamble(header, items)]
    parts += [render_item(number, item) for number, item in enumerate(items, start=1)]
    return "\n".join(parts)


def _preamble(header: AuditHeader, items: Sequence[AuditItem]) -> str:
    if header.size < header.requested:
        drawn = f"All {header.size} samples (asked for {header.requested})"
    else:
        drawn = f"{header.size} of {header.population} samples, drawn at random with seed {header.seed},"
    kinds = Counter(item.kind for item in items)
    lines = [
        f"# Audit sheet: {escape(header.name)}\n",
        f"{drawn} of {code(header.benchmark)} (source `{header.source}`, samples.jsonl sha256 "
        f"`{header.samples_sha256[:12]}`).\n",
        "Kinds on this sheet: " + ", ".join(f"{kinds[kind]} {kind}" for kind in KINDS if kinds[kind]) + ".\n",
        "Judge item *n* on line *n* of `audit.jsonl`: set each field of its `judgment` to `true` or "
        "`false`, add a `note` where useful, then run `irbgen audit --score` on this folder. "
        "A sample is valid when all three criteria hold:\n",
    ]
    lines += [f"- `{name}`: {text}" for name, text in CRITERIA_HELP]
    return "\n".join(lines) + "\n"


def render_item(number: int, item: AuditItem) -> str:
    """One item: question in bold, answers, hops, facts with their passages, where to judge it."""
    lines = [f"## {number}. {item.kind} · {code(item.id)}\n", f"**{escape(item.question)}**\n"]
    lines += _answers(item)
    if item.hops:
        lines.append("Hops:\n")
        lines += [
            f"{hop.index + 1}. {escape(hop.question)} → {_list(hop.answers)} (evidence: {_ids(hop.evidence)})"
            for hop in item.hops
        ]
        lines.append("")
    if item.facts:
        lines.append(f"{FACT_HEADINGS[item.facts[0].origin]}:\n")
        lines += [_fact(n, fact) for n, fact in enumerate(item.facts, start=1)]
    lines.append(
        f"Judge on `audit.jsonl` line {number}: `well_formed`, `answer_correct`, `supported` "
        "(true/false), `note`.\n"
    )
    return "\n".join(lines)


def _answers(item: AuditItem) -> list[str]:
    if item.false_premise:
        answer = "none: the question has a false premise"
        if item.premise_answer:
            answer += f" (with the true premise: {escape(item.premise_answer)})"
    else:
        answer = _list(item.answers)
    lines = [f"- Answers: {answer}"]
    lines += [f"- Change: {escape(change)}" for change in item.changes]
    return lines + [""]


def _fact(number: int, fact: Fact) -> str:
    hop = f" (hop {fact.hop + 1})" if fact.hop is not None else ""
    lines = [f"{number}. {escape(fact.text)}{hop}\n"]
    passage = fact.passage
    if passage is None:
        lines.append(f"   > no evidence text found in {_ids(fact.evidence)}\n")
    else:
        title = f" {escape(passage.title)}" if passage.title else ""
        lines.append(f"   > {escape(passage.text)}\n   >")
        lines.append(f"   > — {code(passage.doc_id)}{title}, overlap {passage.overlap:.0%}\n")
    return "\n".join(lines)


def _list(values: Sequence[str]) -> str:
    return "; ".join(escape(value) for value in values) if values else "(none)"


def _ids(ids: Sequence[str]) -> str:
    return ", ".join(code(doc_id) for doc_id in ids) if ids else "none"


def escape(text: str) -> str:
    """TEXT on one line with Markdown's special characters escaped."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def code(text: str) -> str:
    """TEXT as an inline code span, fenced with more backticks than it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}" if text else "(empty)"

"""The review page as server-rendered HTML: every piece of text escaped, links made safe, no markup kept.

Evidence comes from arbitrary web pages and questions from generators, so nothing here is trusted: all
text goes through `esc`, the only links are http(s) addresses opened with rel="noopener noreferrer",
and the page's one script and one style carry a per-response nonce that the Content-Security-Policy
header requires.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import escape
from urllib.parse import quote

from irbgen.audit.publish import KIND_LABELS
from irbgen.audit.records import CRITERIA, Judgment
from irbgen.review.assets import SCRIPT, STYLE
from irbgen.review.view import Evidence, SampleView

CRITERION_TEXT = {
    "well_formed": ("Well formed", "clear, self-contained, answerable as asked", ("q", "a")),
    "answer_correct": ("Answer correct", "right and the only one (false premise: really false)", ("w", "s")),
    "supported": ("Supported", "the evidence backs the facts the answer rests on", ("e", "d")),
}
KEYS = [
    ("q / a", "well formed: yes / no"),
    ("w / s", "answer correct: yes / no"),
    ("e / d", "supported: yes / no"),
    ("y", "all three yes"),
    ("n", "write a note (Esc to leave it)"),
    ("j / →", "next"),
    ("k / ←", "previous"),
    ("Enter / u", "next unjudged"),
    ("o", "only unjudged on / off"),
]


def esc(text: object) -> str:
    """TEXT as HTML text or attribute value: &, <, >, " and ' escaped."""
    return escape(str(text), quote=True)


def sample_path(sample_id: str) -> str:
    """The page address of a sample: its id percent-encoded as one path segment."""
    return "/sample/" + quote(sample_id, safe="")


@dataclass(frozen=True)
class Screen:
    """One page: the sample, where it sits in the review, and the reviewer's judgment so far."""

    view: SampleView
    benchmark: str
    reviewer: str
    position: int
    total: int
    judged: int
    judgment: Judgment
    prev: str | None
    next: str | None
    prev_unjudged: str | None
    next_unjudged: str | None
    token: str
    nonce: str


def render(screen: Screen) -> str:
    """The whole review page for one sample."""
    view = screen.view
    judgment = screen.judgment.model_dump(mode="json")
    nav = {
        "prev": screen.prev,
        "next": screen.next,
        "prev-unjudged": screen.prev_unjudged,
        "next-unjudged": screen.next_unjudged,
    }
    data = " ".join(
        f'data-{name}="{esc(sample_path(value) if value else "")}"' for name, value in nav.items()
    )
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<meta name="referrer" content="no-referrer">',
            f'<meta name="review-token" content="{esc(screen.token)}">',
            f"<title>{esc(view.sample.id)} · irbgen review</title>",
            f'<style nonce="{esc(screen.nonce)}">{STYLE}</style>',
            "</head>",
            f'<body data-sample="{esc(view.sample.id)}" data-judgment="{esc(json.dumps(judgment))}" {data}>',
            _top_bar(screen),
            '<main class="grid">',
            '<div class="column">',
            _question(view),
            _hops(view),
            _facts(view),
            _attributes(view),
            "</div>",
            '<div class="column">',
            _evidence(view),
            "</div>",
            "</main>",
            _judge_bar(screen),
            f'<script nonce="{esc(screen.nonce)}">{SCRIPT}</script>',
            "</body></html>",
        ]
    )


def render_message(title: str, message: str, nonce: str) -> str:
    """A short page for an unknown sample or an empty review."""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>'
        f'<style nonce="{esc(nonce)}">{STYLE}</style></head><body><main class="message"><h1>{esc(title)}</h1>'
        f'<p>{esc(message)}</p><p><a href="/">Back to the review</a></p></main></body></html>'
    )


def _top_bar(screen: Screen) -> str:
    def link(target: str | None, label: str, rel: str) -> str:
        if not target:
            return f'<span class="nav disabled">{label}</span>'
        return f'<a class="nav" id="{rel}" href="{esc(sample_path(target))}">{label}</a>'

    return (
        '<header class="bar">'
        f'<div class="brand">irbgen review <span class="muted">· {esc(screen.benchmark)} · '
        f"reviewer <b>{esc(screen.reviewer)}</b></span></div>"
        '<div class="progress">'
        f'<span id="judged">{screen.judged}</span> of {screen.total} judged'
        f'<progress id="meter" max="{screen.total}" value="{screen.judged}"></progress></div>'
        '<nav class="navigation">'
        f"{link(screen.prev, '← prev', 'prev-link')}"
        f'<span class="position">sample {screen.position + 1} of {screen.total}</span>'
        f"{link(screen.next, 'next →', 'next-link')}"
        '<label class="only"><input type="checkbox" id="only"> only unjudged <kbd>o</kbd></label>'
        "</nav></header>"
    )


def _question(view: SampleView) -> str:
    sample = view.sample
    if sample.false_premise:
        premise = (
            f" With a true premise the answer would be <b>{esc(view.premise_answer)}</b>."
            if (view.premise_answer)
            else ""
        )
        answers = f'<p class="premise">False premise: there is no answer.{premise}</p>'
    else:
        answers = "".join(f'<li class="answer">{esc(answer)}</li>' for answer in sample.answers)
        answers = f'<ul class="answers" aria-label="answers">{answers}</ul>'
    changes = ""
    if view.changes:
        items = "".join(f"<li>{esc(change)}</li>" for change in view.changes)
        changes = (
            f'<details class="changes"><summary>edits to the question</summary><ul>{items}</ul></details>'
        )
    return (
        '<section class="card question-card">'
        f'<div class="meta"><span class="kind kind-{esc(view.kind)}">{esc(KIND_LABELS[view.kind])}</span>'
        f'<code class="sample-id">{esc(sample.id)}</code></div>'
        f'<h1 id="question">{esc(sample.question)}</h1>{answers}{changes}</section>'
    )


def _hops(view: SampleView) -> str:
    if len(view.hops) < 2 and not any(
        hop.question and hop.question != view.sample.question for hop in view.hops
    ):
        return ""
    rows = "".join(
        f"<tr><td class='num'>{hop.index + 1}</td><td>{esc(hop.question) or '–'}</td>"
        f"<td>{esc(', '.join(hop.answers)) or '–'}</td></tr>"
        for hop in view.hops
    )
    return (
        '<section class="card"><h2>Hops</h2><table class="hops"><thead><tr><th>#</th><th>sub-question</th>'
        f"<th>answer</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _facts(view: SampleView) -> str:
    if not view.facts:
        return ""
    label = {"keypoint": "Keypoints", "triple": "Triples", "chain": "Chain"}[view.facts[0].origin]
    items = []
    for fact in view.facts:
        hop = f'<span class="muted">hop {fact.hop + 1}</span> ' if fact.hop is not None else ""
        where = ""
        if fact.passage is not None:
            where = (
                f'<span class="muted"> — in “{esc(fact.passage.title or fact.passage.doc_id)}”, '
                f"{fact.passage.overlap:.0%} of its words</span>"
            )
        items.append(f"<li>{hop}{esc(fact.text)}{where}</li>")
    heading = f"<h2>{label} it came from</h2>"
    return f'<section class="card">{heading}<ul class="facts">{"".join(items)}</ul></section>'


def _attributes(view: SampleView) -> str:
    rows = "".join(f"<div><dt>{esc(name)}</dt><dd>{esc(value)}</dd></div>" for name, value in view.attributes)
    return f'<section class="card"><h2>Attributes</h2><dl class="attributes">{rows}</dl></section>'


def _evidence(view: SampleView) -> str:
    if not view.evidence:
        return (
            '<section class="card"><h2>Evidence</h2>'
            '<p class="muted">This sample cites no document.</p></section>'
        )
    answers = _answers_to_find(view)
    cards = "".join(_document(number, doc, answers) for number, doc in enumerate(view.evidence, 1))
    heading = f'<h2 class="section-title">Evidence ({len(view.evidence)})</h2>'
    return f'<section class="evidence">{heading}{cards}</section>'


def emphasise(text: str, words: list[str]) -> str:
    """TEXT escaped, with every whole-word occurrence of WORDS (case-insensitive) in <strong>."""
    wanted = sorted({word for word in words if word.strip()}, key=len, reverse=True)
    if not wanted:
        return esc(text)
    alternatives = "|".join(re.escape(word) for word in wanted)
    pattern = re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)
    parts, at = [], 0
    for match in pattern.finditer(text):
        parts.append(esc(text[at : match.start()]) + f"<strong>{esc(match.group())}</strong>")
        at = match.end()
    return "".join(parts) + esc(text[at:])


def _document(number: int, doc: Evidence, answers: list[str]) -> str:
    if doc.missing:
        return (
            f'<article class="card doc"><h3>{number}. <code>{esc(doc.doc_id)}</code></h3>'
            '<p class="warn">Not in corpus.jsonl.</p></article>'
        )
    if doc.url:
        source = (
            f'<a class="url" href="{esc(doc.url)}" target="_blank" rel="noopener noreferrer">'
            f"{esc(doc.shown_url)}</a>"
        )
    elif doc.shown_url:
        source = f'<span class="url plain">{esc(doc.shown_url)}</span>'
    else:
        source = ""
    overlap = f'<span class="muted">match {doc.overlap:.0%}</span>' if doc.overlap is not None else ""
    passage = f"<mark>{emphasise(doc.passage, answers)}</mark>" if doc.passage else ""
    return (
        f'<article class="card doc"><h3>{number}. {esc(doc.title or doc.doc_id)}</h3>'
        f'<div class="doc-meta">{source}<code>{esc(doc.doc_id)}</code>{overlap}</div>'
        f'<p class="passage">{esc(doc.before)}{passage}{esc(doc.after)}</p></article>'
    )


def _answers_to_find(view: SampleView) -> list[str]:
    """The answers (and for a false premise the true-premise answer) to pick out in the evidence."""
    found = list(view.sample.answers)
    for hop in view.hops:
        found += hop.answers
    if view.premise_answer:
        found.append(view.premise_answer)
    return found


def _judge_bar(screen: Screen) -> str:
    rows = []
    for name in CRITERIA:
        label, hint, (yes, no) = CRITERION_TEXT[name]
        rows.append(
            f'<div class="criterion" title="{esc(hint)}"><span class="label">{label}</span>'
            f'<button type="button" data-criterion="{name}" data-value="yes" aria-pressed="false">'
            f"yes <kbd>{yes}</kbd></button>"
            f'<button type="button" data-criterion="{name}" data-value="no" aria-pressed="false">'
            f"no <kbd>{no}</kbd></button></div>"
        )
    keys = "".join(f"<li><kbd>{esc(key)}</kbd> {esc(text)}</li>" for key, text in KEYS)
    return (
        '<footer class="judge">'
        f'<div class="criteria">{"".join(rows)}</div>'
        '<label class="note-label"><span>note <kbd>n</kbd></span>'
        '<textarea id="note" rows="2" placeholder="why, if anything is off">'
        f"{esc(screen.judgment.note)}</textarea>"
        "</label>"
        '<div class="status-box"><span id="status" role="status">'
        f"{esc(judgment_status(screen.judgment))}</span>"
        f'<details class="keys"><summary>keys</summary><ul>{keys}</ul></details></div>'
        "</footer>"
    )


def judgment_status(judgment: Judgment) -> str:
    """How far a judgment got: "not judged yet", "2 of 3 judged", "valid" or "not valid"."""
    missing = judgment.missing()
    if len(missing) == len(CRITERIA):
        return "not judged yet"
    if missing:
        return f"{len(CRITERIA) - len(missing)} of {len(CRITERIA)} judged"
    return "valid" if judgment.valid else "not valid"

"""QA reader methods: how each one turns a sample into messages and a reply into a final answer.

A method names its prompt file and says what context it needs: nothing (closed-book, cot), the whole
corpus (in-context), the top-k documents retrieved by the question (rag, cot-rag), the sample's own
evidence documents (hop-ablation, which also asks once per hop with that hop's documents left out: see
irbgen.eval.qa.ablation), or tools it calls itself (react, run by irbgen.eval.qa.react). Every reply ends
up as one answer string: answers joined by ", ", or "I don't know", or "False premise question".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irbgen.errors import BadInputError
from irbgen.schema import Document, Sample

if TYPE_CHECKING:
    from irbgen.eval.corpus_index import SearchIndex
    from irbgen.llm.prompts import Prompt

DEFAULT_K = 4
DEFAULT_MAX_CONTEXT_TOKENS = 100_000

# A line "Answer: ...", also written "**Final answer:** ...", "- answer: ..." and the like.
_ANSWER_LINE = re.compile(r"^[\s*_#>-]*(?:final\s+)?answer[\s*_]*:[\s*_]*(.*?)[\s*_]*$", re.I | re.M)
_TOKEN = re.compile(r"\S+")


@dataclass(frozen=True)
class Method:
    """A reader method: its name, its prompt file and the context it needs."""

    name: str
    prompt: str
    description: str
    retrieves: bool = False  # the top-k documents retrieved by the question go into the prompt
    whole_corpus: bool = False  # the whole corpus (up to a token bound) goes into the prompt
    reasoning: bool = False  # the reply reasons first and ends with a line "Answer: ..."
    agent: bool = False  # a tool-using loop (irbgen.eval.qa.react) instead of one call
    evidence: bool = False  # the sample's evidence documents go into the prompt (given by the caller)

    @property
    def needs_index(self) -> bool:
        """Whether the method searches the corpus (and so needs a SearchIndex)."""
        return self.retrieves or self.agent


METHODS: dict[str, Method] = {
    method.name: method
    for method in (
        Method("closed-book", "qa_closed_book", "the question alone"),
        Method("in-context", "qa_in_context", "the whole corpus in the prompt", whole_corpus=True),
        Method("rag", "qa_rag", "the top-k documents retrieved by the question", retrieves=True),
        Method(
            "cot", "qa_cot", "the whole corpus, reasoning step by step", whole_corpus=True, reasoning=True
        ),
        Method(
            "cot-rag", "qa_cot_rag", "top-k documents, reasoning step by step", retrieves=True, reasoning=True
        ),
        Method("react", "qa_react", "an agent that searches and reads articles", agent=True),
        Method(
            "hop-ablation",
            "qa_hop_ablation",
            "the evidence documents, then each hop's left out in turn",
            evidence=True,
        ),
    )
}


def get_method(name: str) -> Method:
    """The method called `name`; BadInputError listing the known names otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        known = ", ".join(sorted(METHODS))
        raise BadInputError(f"unknown QA method {name!r}; choose one of: {known}") from None


@dataclass(frozen=True)
class CorpusContext:
    """The corpus as prompt text, cut to a token bound; `note` says what was left out, if anything."""

    text: str
    documents: int  # documents included, the last one possibly cut
    tokens: int  # whitespace tokens included
    truncated: bool = False
    note: str | None = None


@dataclass
class Request:
    """What one call of a method sends, and the documents it put in the prompt, in prompt order."""

    messages: list[dict[str, Any]]
    retrieved: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ParsedReply:
    """A reply's final answer, and a note when the reply did not follow the requested format."""

    answer: str
    note: str | None = None


def format_document(document: Document) -> str:
    """One document as prompt text: its title on a line, then its text."""
    title = document.title.strip() or document.id
    return f"Title: {title}\n{document.text.strip()}"


def format_documents(documents: Iterable[Document]) -> str:
    """Documents as prompt text, numbered in the given order and separated by blank lines."""
    return "\n\n".join(f"[{n}] {format_document(doc)}" for n, doc in enumerate(documents, 1))


def corpus_context(
    documents: Iterable[Document], max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS
) -> CorpusContext:
    """The corpus in file order as prompt text, cut at `max_context_tokens` whitespace tokens.

    Deterministic: documents are kept whole in corpus order while they fit; the first one that does not
    fit is cut at the bound, and the rest are left out.
    """
    if max_context_tokens < 1:
        raise BadInputError(f"max_context_tokens must be at least 1, got {max_context_tokens}")
    blocks: list[str] = []
    used = 0
    total_docs = 0
    total_tokens = 0
    kept = 0
    for n, doc in enumerate(documents, 1):
        block = f"[{n}] {format_document(doc)}"
        size = len(_TOKEN.findall(block))
        total_docs += 1
        total_tokens += size
        if used >= max_context_tokens:
            continue
        if used + size > max_context_tokens:
            block = _first_tokens(block, max_context_tokens - used)
            size = max_context_tokens - used
        blocks.append(block)
        used += size
        kept += 1
    truncated = total_tokens > used
    note = None
    if truncated:
        note = (
            f"corpus has {total_tokens:,} whitespace tokens in {total_docs:,} documents; the prompt holds "
            f"the first {used:,} (max_context_tokens), cutting document {kept:,} and leaving out "
            f"{total_docs - kept:,} after it"
        )
    return CorpusContext("\n\n".join(blocks), kept, used, truncated, note)


def _first_tokens(text: str, n: int) -> str:
    """The prefix of `text` holding its first n whitespace tokens, layout kept."""
    end = 0
    for count, match in enumerate(_TOKEN.finditer(text), 1):
        end = match.end()
        if count >= n:
            break
    return text[:end]


def build_request(
    method: Method,
    prompt: Prompt,
    sample: Sample,
    *,
    index: SearchIndex | None = None,
    corpus: CorpusContext | None = None,
    k: int = DEFAULT_K,
    date_note: str = "",
    documents: list[Document] | None = None,
) -> Request:
    """The messages a one-call method sends for a sample, with the ids of the documents it shows.

    An evidence method shows `documents`, in the order given.
    """
    if method.agent:
        raise ValueError(f"{method.name} is an agent; run it with irbgen.eval.qa.react")
    values = {"question": sample.question, "date_note": date_note}
    retrieved: list[str] = []
    if method.retrieves:
        if index is None:
            raise ValueError(f"{method.name} needs a SearchIndex")
        retrieved = [doc_id for doc_id, _ in index.search(sample.question, k)]
        values["context"] = format_documents(index.document(doc_id) for doc_id in retrieved)
    elif method.evidence:
        if documents is None:
            raise ValueError(f"{method.name} needs the documents to show")
        retrieved = [doc.id for doc in documents]
        values["context"] = format_documents(documents)
    elif method.whole_corpus:
        if corpus is None:
            raise ValueError(f"{method.name} needs the corpus context")
        values["context"] = corpus.text
    return Request(prompt.render(**values), retrieved)


def parse_reply(method: Method, text: str) -> ParsedReply:
    """The final answer in a reply: the last "Answer:" line, else the first (direct) or last (CoT) line."""
    found = _ANSWER_LINE.findall(text)
    if found:
        return ParsedReply(found[-1].strip())
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ParsedReply("", "empty reply")
    if method.reasoning:
        note = None if len(lines) == 1 else "no 'Answer:' line; used the last line"
        return ParsedReply(lines[-1], note)
    note = None if len(lines) == 1 else f"reply has {len(lines)} lines; used the first"
    return ParsedReply(lines[0], note)

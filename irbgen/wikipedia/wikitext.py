"""Wikitext -> plain-text sentences with their citation groups, and the segments they split into.

The article is cut at its headings; each piece is screened, parsed with mwparserfromhell and rendered to
plain text (see irbgen.wikipedia.render). Every `<ref>` becomes a marker that carries its citations:
citation templates (`{{cite ...}}`, `{{citation}}`) and external links (bracketed or bare) with a URL.
Reuses of named refs are resolved once the whole page is read, so a reuse before its definition works.
Markers with only punctuation or whitespace between them form one citation group; each sentence is cut
into segments at its groups.

A page over the size limit is refused; a section that fails screening is reported, not parsed.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from irbgen.wikipedia.records import Citation
from irbgen.wikipedia.render import (
    Renderer,
    load_mwp,
    ref_tag_name,
    screen,
    strip_tables,
    template_name,
    tidy,
)

MAX_WIKITEXT_CHARS = 2_000_000  # larger pages are refused (the largest articles are ~1.5M chars)
MAX_URL_CHARS = 2048

# Sections that list sources rather than make claims.
SKIP_SECTIONS = frozenset(
    "references|notes|footnotes|citations|sources|bibliography|works cited|external links|see also|"
    "further reading|notes and references|references and notes".split("|")
)
# The completeness rule (IRB: keep syntactically complete segments). A segment is complete when the
# dependency parse has a ROOT that is a verb (Penn tag VB*/MD, copulas included) and, inside that ROOT's
# subtree, a subject and an object, complement or attribute.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
OBJECT_DEPS = frozenset({"dobj", "attr", "pobj", "acomp", "ccomp", "xcomp", "oprd", "dative", "agent"})

_MARKER = re.compile(r"\ue000(\d+)\ue001")  # the ref markers render.Renderer writes
_PRIVATE = re.compile(r"[\ue000\ue001]")
_HEADING = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*(={1,6})[ \t]*$", re.M)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_REF_TAG = re.compile(r"<ref", re.I)
_RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|</?[a-zA-Z][a-zA-Z0-9]*\b[^<>]*>|^\s*\{\||^\s*\|\}", re.M)
_STYLE = re.compile(r"'{2,}")
_WS = re.compile(r"\s+")
_PARAGRAPHS = re.compile(r"\n\s*\n")
_URL = re.compile(r"^(?:https?:)?//[^\s<>\"{}|\\^`\[\]]+$", re.I)

_ARCHIVE_TEMPLATES = frozenset({"webarchive", "web archive"})
_URL_PARAMS = ("url", "URL", "chapter-url", "chapterurl", "contribution-url", "section-url")
_ARCHIVE_PARAMS = ("archive-url", "archiveurl", "archive_url")
_DATE_PARAMS = ("date", "publication-date", "access-date", "accessdate")
_TITLE_PARAMS = ("title", "script-title", "trans-title", "chapter", "work")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st mt ft jr sr gen col lt sgt capt cmdr gov sen rep rev hon no nos vol vols pp p "
    "fig figs ch sec art approx est ltd co corp bros dept univ assn ave blvd rd jan feb mar apr jun jul "
    "aug sep sept oct nov dec vs cf al ca c op ed eds trans".split()
)
_CLOSERS = set("'\"’”)]")
_SENT_END = re.compile(r"[.!?]+['\"’”)\]]*\s+(?=['\"‘“(\[]?[A-Z0-9])")


class UnparsableWikitext(ValueError):
    """A page the bounded parser refuses to handle; `reason` is "too_large" or "unparsable"."""

    def __init__(self, message: str, reason: str = "unparsable") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class CitationGroup:
    """Refs standing together in the text: one claim's evidence."""

    offset: int  # character offset in the sentence where the group sits
    citations: tuple[Citation, ...]  # deduplicated by URL; empty when no ref has a URL
    refs: int  # how many <ref>s were merged


@dataclass(frozen=True)
class Sentence:
    """One sentence of plain text, where it is, and the citation groups it carries."""

    index: int  # position in the article, counting every kept sentence
    text: str
    section: tuple[str, ...]  # heading path; () for the lead section
    block: int  # which section block (same section path, same run of text) it belongs to
    groups: tuple[CitationGroup, ...] = ()


@dataclass(frozen=True)
class CandidateSegment:
    """The text of a sentence up to one citation group."""

    sentence: int
    index: int
    text: str
    citations: tuple[Citation, ...]
    mid_clause: bool = False  # the sentence goes on with a word right after the citation


@dataclass
class Article:
    """A parsed article: its lead, its sentences, and what was dropped on the way."""

    lead: str
    sentences: list[Sentence]
    problems: list[tuple[str, str]] = field(default_factory=list)  # (reason, detail)
    links: dict[str, str] = field(default_factory=dict)  # wikilink text as rendered -> linked page title

    def context(self, sentence: Sentence, n: int = 2) -> tuple[list[str], list[str]]:
        """Up to `n` sentences before and after `sentence`, within its section block."""
        i = sentence.index
        before = [s.text for s in self.sentences[max(0, i - n) : i] if s.block == sentence.block]
        after = [s.text for s in self.sentences[i + 1 : i + 1 + n] if s.block == sentence.block]
        return before, after


def parse_article(wikitext: str, *, max_chars: int = MAX_WIKITEXT_CHARS) -> Article:
    """Parse a page's wikitext into lead, sentences and citation groups; raise UnparsableWikitext."""
    mwp = load_mwp()
    if len(wikitext) > max_chars:
        raise UnparsableWikitext(f"wikitext too large ({len(wikitext):,} chars > {max_chars:,})", "too_large")
    text = strip_tables(_COMMENT.sub("", _PRIVATE.sub("", wikitext)))
    problems: list[tuple[str, str]] = []
    refs = RefTable()
    renderer = Renderer(refs, extract_citations)
    pieces: list[tuple[tuple[str, ...], str]] = []
    try:
        for path, raw, rendered in _sections(text, mwp.parse):
            if not rendered and not _REF_TAG.search(raw):
                continue
            trouble = screen(raw)
            if trouble:
                problems.append(("unparsable", f"section {' > '.join(path) or '(lead)'}: {trouble}"))
                continue
            code = mwp.parse(raw, skip_style_tags=True)
            if rendered:
                pieces.append((path, renderer.render(code)))
            else:  # a source-list section: only its list-defined refs matter
                refs.collect(code)
    except RecursionError as exc:
        raise UnparsableWikitext("wikitext nests too deeply") from exc
    markers = renderer.resolved()
    sentences: list[Sentence] = []
    lead = ""
    for block, (path, rendered_text) in enumerate(pieces):
        for paragraph in _PARAGRAPHS.split(rendered_text):
            residue = _RESIDUE.search(paragraph)
            if residue:
                snippet = _MARKER.sub("", paragraph[max(0, residue.start() - 30) : residue.end() + 30])
                where = " > ".join(path) or "(lead)"
                problems.append(("markup_residue", f"paragraph dropped in {where}: ...{snippet}..."))
                continue
            clean, groups = _extract_groups(tidy(paragraph), markers)
            if not any(ch.isalpha() for ch in clean):
                continue
            if not path and not lead:
                lead = clean
            sentences.extend(_sentences(clean, groups, path, block, len(sentences)))
    return Article(lead=lead, sentences=sentences, problems=problems, links=renderer.links)


def split_segments(sentence: Sentence) -> list[CandidateSegment]:
    """Cut a sentence at its citation groups: the text since the previous group is one segment."""
    out: list[CandidateSegment] = []
    start = 0
    for k, group in enumerate(sentence.groups):
        raw = sentence.text[start : group.offset]
        text = raw.strip(" ,;:")
        start = group.offset
        goes_on = re.match(r"\s*[^\W_]", sentence.text[group.offset :]) is not None
        mid_clause = goes_on and not raw.rstrip().endswith((",", ";", ":", ")", "—", "–"))
        out.append(CandidateSegment(sentence.index, k, text, group.citations, mid_clause))
    return out


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Rule-based sentence spans (start, end) of a paragraph: split after .!? before a capital or digit."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENT_END.finditer(text):
        end = m.start() + len(m.group().rstrip())
        if set(m.group().split()[0]) <= {"."} | _CLOSERS and _is_abbreviation(text, m.start()):
            continue
        spans.append((start, end))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text.rstrip())))
    return [(s, e) for s, e in spans if e > s]


def missing_roles(doc: Any) -> list[str]:
    """The parts a spaCy Doc lacks to be complete ([] if complete): 'subject', 'verb', 'object'."""
    roots = [t for t in doc if t.dep_ == "ROOT"]
    verbal = [t for t in roots if t.tag_.startswith(("VB", "MD"))]
    if not verbal:
        deps = {t.dep_ for t in doc}
        return (
            (["subject"] if not deps & SUBJECT_DEPS else [])
            + ["verb"]
            + (["object"] if not deps & OBJECT_DEPS else [])
        )
    best: list[str] = ["subject", "object"]
    for root in verbal:
        deps = {t.dep_ for t in root.subtree}
        missing = (["subject"] if not deps & SUBJECT_DEPS else []) + (
            ["object"] if not deps & OBJECT_DEPS else []
        )
        if len(missing) < len(best):
            best = missing
    return best


def is_complete(doc: Any) -> bool:
    """True if the parse has a subject, a verbal predicate and an object/complement (see OBJECT_DEPS)."""
    return not missing_roles(doc)


# --- sections ---------------------------------------------------------------------------------------


def _sections(text: str, parse: Callable[..., Any]) -> Iterable[tuple[tuple[str, ...], str, bool]]:
    """Split at heading lines: (heading path, raw wikitext, False for source-list sections)."""
    stack: list[tuple[int, str]] = []
    pos = 0
    path: tuple[str, ...] = ()
    for m in _HEADING.finditer(text):
        yield path, text[pos : m.start()], not _skipped(path)
        level = min(len(m.group(1)), len(m.group(3)))
        title = _WS.sub(" ", _STYLE.sub("", parse(m.group(2)).strip_code())).strip()
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        path = tuple(t for _, t in stack)
        pos = m.end()
    yield path, text[pos:], not _skipped(path)


def _skipped(path: tuple[str, ...]) -> bool:
    return any(p.lower() in SKIP_SECTIONS for p in path)


# --- refs and citations ------------------------------------------------------------------------------


def _params(node: Any) -> dict[str, Any]:
    """A template's named parameters by name (of duplicates the last wins, as in MediaWiki)."""
    return {str(p.name).strip(): p.value for p in node.params if p.showkey}


def _param(params: dict[str, Any], names: Iterable[str]) -> str:
    for name in names:
        value = params.get(name)
        if value is None:
            continue
        text = _WS.sub(" ", _STYLE.sub("", value.strip_code())).strip()
        if text:
            return text
        raw = re.sub(r"<!--.*?-->", "", str(value), flags=re.S).strip()
        if raw:
            return raw
    return ""


def _clean_url(raw: str) -> str | None:
    url = re.sub(r"<!--.*?-->", "", raw, flags=re.S).strip()
    if not url or len(url) > MAX_URL_CHARS:
        return None
    url = url.split()[0]
    if url.startswith("//"):
        url = "https:" + url
    return url if _URL.match(url) else None


def _is_cite(name: str) -> bool:
    return name.startswith(("cite", "citation"))


def _citation(node: Any, ref_name: str | None) -> Citation | None:
    params = _params(node)
    url = _clean_url(_param(params, _URL_PARAMS))
    if url is None:
        return None
    return Citation(
        url=url,
        archive_url=_clean_url(_param(params, _ARCHIVE_PARAMS)),
        date=_param(params, _DATE_PARAMS) or None,
        title=_param(params, _TITLE_PARAMS) or None,
        ref_name=ref_name,
    )


def extract_citations(code: Any, ref_name: str | None = None) -> tuple[Citation, ...]:
    """Citations with a URL inside a ref's content: cite templates, external links, {{webarchive}}."""
    nodes = load_mwp().nodes
    out: list[Citation] = []

    def add(citation: Citation | None) -> None:
        if citation is not None and all(c.url != citation.url for c in out):
            out.append(citation)

    def visit(wikicode: Any) -> None:
        for node in wikicode.nodes:
            if isinstance(node, nodes.Template):
                name = template_name(node)
                if _is_cite(name):
                    add(_citation(node, ref_name))
                elif name in _ARCHIVE_TEMPLATES and out and out[-1].archive_url is None:
                    archive = _clean_url(_param(_params(node), ("url",)))
                    out[-1] = out[-1].model_copy(update={"archive_url": archive})
                else:
                    for param in node.params:
                        visit(param.value)
            elif isinstance(node, nodes.ExternalLink):
                url = _clean_url(str(node.url))
                if url:
                    title = _WS.sub(" ", node.title.strip_code()).strip() if node.title else ""
                    add(Citation(url=url, title=title or None, ref_name=ref_name))
            elif isinstance(node, nodes.Tag) and node.contents is not None:
                visit(node.contents)

    visit(code)
    return tuple(out)


class RefTable:
    """Named ref definitions of a whole page, so reuses resolve wherever they stand."""

    def __init__(self) -> None:
        self.named: dict[str, tuple[Citation, ...]] = {}

    def define(self, name: str, citations: tuple[Citation, ...]) -> None:
        self.named.setdefault(name, citations)  # the first definition counts

    def collect(self, code: Any) -> None:
        """Definitions anywhere inside `code` (used for text that is not rendered)."""
        for tag in code.ifilter_tags(recursive=True):
            if str(tag.tag).strip().lower() != "ref" or tag.self_closing or tag.contents is None:
                continue
            name = ref_tag_name(tag)
            if name and name not in self.named and str(tag.contents).strip():
                self.define(name, extract_citations(tag.contents, name))

    def get(self, name: str) -> tuple[Citation, ...]:
        return self.named.get(name, ())


# --- paragraphs, groups and sentences ---------------------------------------------------------------


def _extract_groups(
    paragraph: str, markers: list[tuple[Citation, ...]]
) -> tuple[str, list[tuple[int, list[tuple[Citation, ...]]]]]:
    """Remove markers; return clean text and groups (offset, [citations per ref]).

    Markers with no letter or digit between them join one group; a group sits right after the text it
    follows (trailing whitespace removed), so "opened. <ref/>" puts it at the end of "opened.".
    """
    clean = ""
    groups: list[tuple[int, list[tuple[Citation, ...]]]] = []
    after_marker = False
    gap = ""  # text since the last marker while it holds no letter or digit
    for i, piece in enumerate(_MARKER.split(paragraph)):
        if i % 2 == 0:
            if not piece:
                continue
            if after_marker and not any(ch.isalnum() for ch in piece):
                gap += piece
                continue
            if after_marker:
                piece, gap = gap + piece, ""
                if clean.endswith((".", "!", "?")) and piece[:1].isalnum():
                    piece = " " + piece
            clean += piece
            after_marker = False
            continue
        citations = markers[int(piece)]
        if after_marker:
            clean += gap.strip()
            gap = ""
            groups[-1][1].append(citations)
        else:
            clean = clean.rstrip()
            groups.append((len(clean), [citations]))
        after_marker = True
    return clean + gap.rstrip(), groups


def _sentences(
    clean: str,
    groups: list[tuple[int, list[tuple[Citation, ...]]]],
    path: tuple[str, ...],
    block: int,
    first_index: int,
) -> list[Sentence]:
    spans = split_sentences(clean)
    starts = [s for s, _ in spans]
    per_sentence: dict[int, list[CitationGroup]] = {}
    for offset, refs in groups:
        k = bisect_left(starts, offset) - 1
        if k < 0:
            continue  # a ref before any text
        start, end = spans[k]
        citations: list[Citation] = []
        for found in refs:
            for c in found:
                if all(c.url != seen.url for seen in citations):
                    citations.append(c)
        per_sentence.setdefault(k, []).append(
            CitationGroup(min(offset, end) - start, tuple(citations), len(refs))
        )
    return [
        Sentence(first_index + k, clean[s:e], path, block, tuple(per_sentence.get(k, ())))
        for k, (s, e) in enumerate(spans)
    ]


def _is_abbreviation(text: str, dot: int) -> bool:
    m = re.search(r"([\w.]+)$", text[max(0, dot - 20) : dot])
    if not m:
        return False
    word = m.group(1)
    if re.search(r"[°′″]\s*[NSEW]$", text[max(0, dot - 4) : dot]):
        return False  # "longitudes 9° W to 2° E. Northern Ireland ...": a compass point ends the sentence
    if word.lower() in _ABBREVIATIONS or re.fullmatch(r"[A-Z]", word):
        return True
    return bool(re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word))

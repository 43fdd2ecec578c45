"""Wikitext -> plain-text sentences with their citation groups, and the segments they split into.

The article is cut at its headings, each piece is parsed with mwparserfromhell and rendered to plain text
(templates, files, tables and comments dropped; link text kept; a few inline templates such as
{{convert}} rendered). Every `<ref>` becomes a marker that carries its citations: citation templates
(`{{cite ...}}`, `{{citation}}`) and external links (bracketed or bare) with a URL. Reuses of named
refs are resolved once the whole page is read, so a reuse before its definition works. Markers with only
punctuation or whitespace between them form one citation group; each sentence is cut into segments at
its groups.

Untrusted input is screened before parsing (size, template nesting, unbalanced brackets and tags),
because mwparserfromhell is quadratic on unclosed constructs; a piece that fails is reported, not parsed.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from irbgen.errors import MissingExtraError
from irbgen.irb.records import Citation

MAX_WIKITEXT_CHARS = 2_000_000  # larger pages are refused (the largest articles are ~1.5M chars)
MAX_TEMPLATE_DEPTH = 40  # real articles nest templates a few levels deep
MAX_UNBALANCED = 50  # unclosed {{, [[, [http or <tag> per section (the parser is quadratic on them)
MAX_PIPES = 100_000  # template parameters and table cells cost ~5 us each to parse
MAX_URL_CHARS = 2048


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split("|"))


# Sections that list sources rather than make claims.
SKIP_SECTIONS = _names(
    "references|notes|footnotes|citations|sources|bibliography|works cited|external links|see also|"
    "further reading|notes and references|references and notes"
)
# The completeness rule (IRB: keep syntactically complete segments). A segment is complete when the
# dependency parse has a ROOT that is a verb (Penn tag VB*/MD, copulas included) and, inside that ROOT's
# subtree, a subject and an object, complement or attribute.
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
OBJECT_DEPS = frozenset({"dobj", "attr", "pobj", "acomp", "ccomp", "xcomp", "oprd", "dative", "agent"})

_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"
_MARKER = re.compile(r"\ue000(\d+)\ue001")
_PRIVATE = re.compile(r"[\ue000\ue001]")
_HEADING = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*(={1,6})[ \t]*$", re.M)
_BRACES = re.compile(r"\{\{|\}\}")
_TAG_OPEN = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*?(/?)>")
_TAG_CLOSE = re.compile(r"</([a-zA-Z][a-zA-Z0-9]*)\s*>")
_VOID_TAGS = frozenset({"br", "hr", "img", "wbr", "meta", "link", "source", "track", "col", "area", "input"})
_EXT_OPEN = re.compile(r"\[(?:https?:)?//", re.I)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_NAMED_REF = re.compile(r"<ref\s[^<>]*?name\s*=[^<>]*?[^/<>]>.*?</ref\s*>", re.S | re.I)
_REF_NAME = re.compile(r"name\s*=\s*[\"']?([^\"'>/]+?)[\"']?\s*/?>", re.I)
_REF_TAG = re.compile(r"<ref", re.I)
_RESIDUE = re.compile(r"\{\{|\}\}|\[\[|\]\]|</?[a-zA-Z][a-zA-Z0-9]*\b[^<>]*>|^\s*\{\||^\s*\|\}", re.M)
_STYLE = re.compile(r"'{2,}")
_MAGIC = re.compile(r"__[A-Z]+__")
_WS = re.compile(r"\s+")
_PARAGRAPHS = re.compile(r"\n\s*\n")
_URL = re.compile(r"^(?:https?:)?//[^\s<>\"{}|\\^`\[\]]+$", re.I)

_DROP_TAGS = _names(
    "math|chem|ce|gallery|imagemap|timeline|graph|mapframe|maplink|score|syntaxhighlight|source|pre|"
    "table|templatestyles|hiero|inputbox|categorytree|charinsert|indicator|poem|references|style|script"
)
_BLOCK_TAGS = frozenset({"p", "div", "li", "ul", "ol", "dl", "dd", "dt", "blockquote", "center", "hr"})
_LIST_MARKUP = frozenset({"*", "#", ":", ";"})
_LINK_DROP = frozenset({"file", "image", "category", "media"})
_FIRST_ARG_TEMPLATES = _names(
    "nowrap|nobr|small|smaller|nobold|noitalic|smallcaps|em|strong|abbr|ill|"
    "interlanguage link|not a typo|vanchor|keypress"
)
_INLINE_TEMPLATES = _FIRST_ARG_TEMPLATES | _names(
    "convert|cvt|lang|transl|transliteration|as of|circa|c.|us$|usd|frac"
)
_FIXED_TEMPLATES = {"nbsp": " ", "snd": " – ", "spnd": " – ", "ndash": "–", "–": "–", "mdash": "—", "—": "—"}
_ARCHIVE_TEMPLATES = frozenset({"webarchive", "web archive"})
_NOTE_TEMPLATES = frozenset({"efn", "refn", "notetag", "efn-ua", "efn-la", "efn-lr", "efn-ur"})
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


@lru_cache(maxsize=1)
def _mwp() -> Any:
    """The mwparserfromhell module (with its node classes), imported on first use."""
    try:
        import mwparserfromhell
        import mwparserfromhell.nodes  # noqa: F401 - the node classes are read as mwp.nodes.X
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise MissingExtraError(
            "wikitext parsing needs mwparserfromhell: pip install mwparserfromhell"
        ) from exc
    return mwparserfromhell


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


@dataclass
class Article:
    """A parsed article: its lead, its sentences, and what was dropped on the way."""

    lead: str
    sentences: list[Sentence]
    problems: list[tuple[str, str]] = field(default_factory=list)  # (reason, detail)

    def context(self, sentence: Sentence, n: int = 2) -> tuple[list[str], list[str]]:
        """Up to `n` sentences before and after `sentence`, within its section block."""
        i = sentence.index
        before = [s.text for s in self.sentences[max(0, i - n) : i] if s.block == sentence.block]
        after = [s.text for s in self.sentences[i + 1 : i + 1 + n] if s.block == sentence.block]
        return before, after


def parse_article(wikitext: str, *, max_chars: int = MAX_WIKITEXT_CHARS) -> Article:
    """Parse a page's wikitext into lead, sentences and citation groups; raise UnparsableWikitext."""
    mwp = _mwp()
    if len(wikitext) > max_chars:
        raise UnparsableWikitext(f"wikitext too large ({len(wikitext):,} chars > {max_chars:,})", "too_large")
    text = _strip_tables(_COMMENT.sub("", _PRIVATE.sub("", wikitext)))
    problems: list[tuple[str, str]] = []
    refs = _RefTable()
    renderer = _Renderer(refs)
    pieces: list[tuple[tuple[str, ...], str]] = []
    try:
        for path, raw, rendered in _sections(text, mwp.parse):
            if not rendered and not _REF_TAG.search(raw):
                continue
            trouble = _screen(raw)
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
            clean, groups = _extract_groups(_tidy(paragraph), markers)
            if not any(ch.isalpha() for ch in clean):
                continue
            if not path and not lead:
                lead = clean
            sentences.extend(_sentences(clean, groups, path, block, len(sentences)))
    return Article(lead=lead, sentences=sentences, problems=problems)


def split_segments(sentence: Sentence) -> list[CandidateSegment]:
    """Cut a sentence at its citation groups: the text since the previous group is one segment."""
    out: list[CandidateSegment] = []
    start = 0
    for k, group in enumerate(sentence.groups):
        text = sentence.text[start : group.offset].strip(" ,;:")
        start = group.offset
        out.append(CandidateSegment(sentence.index, k, text, group.citations))
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


# --- sections and screening -------------------------------------------------------------------------


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


def _screen(raw: str) -> str:
    """Why `raw` is not safe to parse ("" if it is)."""
    depth = worst = 0
    for m in _BRACES.finditer(raw):
        if m.group() == "{{":
            depth += 1
            worst = max(worst, depth)
        elif depth:
            depth -= 1
    if worst > MAX_TEMPLATE_DEPTH:
        return f"templates nested {worst} deep (limit {MAX_TEMPLATE_DEPTH})"
    if depth > MAX_UNBALANCED:
        return f"{depth} unclosed templates"
    links = raw.count("[[") - raw.count("]]")
    if links > MAX_UNBALANCED:
        return f"{links} unclosed links"
    # a bracketed external link closes on its own line
    external = sum(len(_EXT_OPEN.findall(line, line.rfind("]") + 1)) for line in raw.split("\n"))
    if external > MAX_UNBALANCED:
        return f"{external} unclosed external links"
    opened = Counter(m.group(1).lower() for m in _TAG_OPEN.finditer(raw) if not m.group(2))
    closed = Counter(m.group(1).lower() for m in _TAG_CLOSE.finditer(raw))
    tags = sum(n - closed[name] for name, n in opened.items() if name not in _VOID_TAGS and n > closed[name])
    if tags > MAX_UNBALANCED:
        return f"{tags} unclosed tags"
    tables = sum(1 for line in raw.split("\n") if line.lstrip().startswith("{|"))  # closed ones are gone
    if tables > MAX_UNBALANCED:
        return f"{tables} unclosed tables"
    if raw.count("|") > MAX_PIPES:
        return f"{raw.count('|')} template parameters or table cells (limit {MAX_PIPES})"
    return ""


def _strip_tables(text: str) -> str:
    """Drop {| ... |} tables before parsing (they are dropped anyway and slow to parse).

    Named ref definitions inside a table are kept, hidden in a <references> tag, so reuses resolve.
    """
    if "{|" not in text:
        return text
    out: list[str] = []
    table: list[str] = []
    kept: dict[str, str] = {}  # first definition of each ref name found in a table
    depth = 0
    for line in text.split("\n"):
        head = line.lstrip()
        if head.startswith("{|"):
            depth += 1
        if depth:
            table.append(line)
            if head.startswith("|}"):
                depth -= 1
                if not depth:
                    for ref in _NAMED_REF.findall("\n".join(table)):
                        name = _REF_NAME.search(ref)
                        if name and name.group(1) not in kept:
                            kept[name.group(1)] = ref
                    out.append("")
                    table = []
            continue
        out.append(line)
    out.extend(table)  # an unclosed table stays, to be reported as markup residue
    if kept:  # at the top, in the lead section, which is never skipped
        out.insert(0, f"<references>{''.join(kept.values())}</references>")
    return "\n".join(out)


# --- rendering ---------------------------------------------------------------------------------------


def _name(node: Any) -> str:
    """A template's normalised name: lower case, spaces for underscores, no comments or namespace."""
    name = re.sub(r"<!--.*?-->", "", str(node.name), flags=re.S)
    name = _WS.sub(" ", name.replace("_", " ")).strip().lower()
    return name[9:].strip() if name.startswith("template:") else name


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


def _positional(node: Any) -> list[Any]:
    return [p.value for p in node.params if not p.showkey]


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
    nodes = _mwp().nodes
    out: list[Citation] = []

    def add(citation: Citation | None) -> None:
        if citation is not None and all(c.url != citation.url for c in out):
            out.append(citation)

    def visit(wikicode: Any) -> None:
        for node in wikicode.nodes:
            if isinstance(node, nodes.Template):
                name = _name(node)
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


def _ref_name(tag: Any) -> str | None:
    if not tag.has("name"):
        return None
    name = str(tag.get("name").value).strip().strip("\"'").strip()
    return name or None


class _RefTable:
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
            name = _ref_name(tag)
            if name and name not in self.named and str(tag.contents).strip():
                self.define(name, extract_citations(tag.contents, name))

    def get(self, name: str) -> tuple[Citation, ...]:
        return self.named.get(name, ())


class _Renderer:
    """Walks parsed wikitext, emitting plain text with ref markers; named reuses resolve at the end."""

    def __init__(self, refs: _RefTable) -> None:
        self.refs = refs
        self.nodes = _mwp().nodes
        self.parts: list[str] = []
        self.markers: list[tuple[Citation, ...] | str] = []  # a str is a ref name to resolve
        self.in_list = False

    def render(self, code: Any) -> str:
        """Plain text of one section, with markers."""
        self.parts, self.in_list = [], False
        self.walk(code)
        return "".join(self.parts)

    def resolved(self) -> list[tuple[Citation, ...]]:
        """Every marker's citations, with reuses of named refs looked up."""
        return [m if isinstance(m, tuple) else self.refs.get(m) for m in self.markers]

    def mark(self, citations: tuple[Citation, ...] | str) -> None:
        self.parts.append(f"{_MARK_OPEN}{len(self.markers)}{_MARK_CLOSE}")
        self.markers.append(citations)

    def hidden(self, code: Any) -> None:
        """Text that is not rendered may still define named refs."""
        if code is not None and _REF_TAG.search(str(code)):
            self.refs.collect(code)

    def walk(self, code: Any) -> None:
        nodes = self.nodes
        for node in code.nodes:
            if isinstance(node, nodes.Text):
                self.text_node(node.value)
            elif isinstance(node, nodes.Wikilink):
                self.link(node)
            elif isinstance(node, nodes.Template):
                self.template(node)
            elif isinstance(node, nodes.Tag):
                self.tag(node)
            elif isinstance(node, nodes.ExternalLink):
                if node.brackets and node.title:
                    self.walk(node.title)
            elif isinstance(node, nodes.HTMLEntity):
                self.parts.append(node.normalize())
            elif isinstance(node, nodes.Heading):
                self.parts.append("\n\n")
            # comments, {{{arguments}}} and anything else render to nothing

    def text_node(self, value: str) -> None:
        if self.in_list and "\n" in value:
            i = value.index("\n")
            value = value[:i] + "\n\n" + value[i + 1 :]
            self.in_list = False
        self.parts.append(value)

    def link(self, node: Any) -> None:
        title = str(node.title).strip()
        if title.startswith(":"):
            title = title[1:]
        elif ":" in title:
            prefix = title.split(":", 1)[0].strip().lower()
            if prefix in _LINK_DROP or (node.text is None and re.fullmatch(r"[a-z]{2,3}(-[a-z]+)?", prefix)):
                self.hidden(node.text)  # a file caption may define refs
                return
        if node.text is not None:
            if str(node.text).strip():
                self.walk(node.text)
            else:  # pipe trick: [[Foo (bar)|]] renders "Foo"
                self.parts.append(re.sub(r"\s*\(.*\)\s*$", "", title))
        else:
            self.parts.append(title)

    def tag(self, node: Any) -> None:
        markup = node.wiki_markup
        if markup in _LIST_MARKUP:
            self.parts.append("\n\n")
            self.in_list = True
            return
        name = str(node.tag).strip().lower()
        if markup == "{|" or name in _DROP_TAGS:
            self.hidden(node.contents)
            return
        if name == "ref":
            ref_name = _ref_name(node)
            if not node.self_closing and node.contents is not None and str(node.contents).strip():
                citations = extract_citations(node.contents, ref_name)
                if ref_name:
                    self.refs.define(ref_name, citations)
                self.mark(citations)
            else:
                self.mark(ref_name or ())
        elif name == "br":
            self.parts.append(" ")
        elif name in _BLOCK_TAGS:
            self.parts.append("\n\n")
            if node.contents is not None:
                self.walk(node.contents)
            self.parts.append("\n\n")
        elif node.contents is not None:
            self.walk(node.contents)

    def template(self, node: Any) -> None:
        name = _name(node)
        if name.startswith("sfn"):  # short footnotes: a ref without a URL
            self.mark(())
        elif name in _NOTE_TEMPLATES:
            args = _positional(node)
            self.mark(extract_citations(args[0]) if args else ())
        elif name == "r":  # {{r|name}}: reuse of named refs
            for value in _positional(node):
                self.mark(str(value).strip() or ())
        else:
            rendered = _render_inline(name, node)
            if rendered:
                self.parts.append(rendered)
            else:
                for param in node.params:
                    self.hidden(param.value)


def _plain(value: Any) -> str:
    return _WS.sub(" ", _STYLE.sub("", value.strip_code())).strip()


def _render_inline(name: str, node: Any) -> str:
    """Text for the few inline templates whose words belong to the sentence; "" for all others."""
    if name in _FIXED_TEMPLATES:
        return _FIXED_TEMPLATES[name]
    if name.startswith("formatnum:"):
        return name.split(":", 1)[1]
    if name not in _INLINE_TEMPLATES and not name.startswith("lang-"):
        return ""
    args = [_plain(v) for v in _positional(node)]
    if not args:
        return ""
    if name in ("convert", "cvt"):
        if len(args) >= 4 and args[1] in ("-", "–", "to", "and", "or"):
            return f"{args[0]} {args[1]} {args[2]} {args[3]}".replace(" - ", "–")
        return " ".join(args[:2])
    if name in ("lang", "transl", "transliteration"):
        return args[-1]
    if name == "as of":
        return "As of " + " ".join(args[:3])
    if name in ("circa", "c."):
        return "c. " + args[0]
    if name in ("us$", "usd"):
        return "US$" + args[0]
    if name == "frac":
        return "/".join(args)
    return args[0]  # _FIRST_ARG_TEMPLATES and {{lang-xx|...}}


# --- paragraphs, groups and sentences ---------------------------------------------------------------


def _tidy(paragraph: str) -> str:
    return _WS.sub(" ", _MAGIC.sub("", _STYLE.sub("", paragraph))).strip()


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
    if word.lower() in _ABBREVIATIONS or re.fullmatch(r"[A-Z]", word):
        return True
    return bool(re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word))

"""Wikitext -> plain text with ref markers, and the screening of untrusted markup before it is parsed.

The renderer drops templates, files, tables and comments, keeps link text and renders a few inline
templates such as {{convert}}; each `<ref>` becomes a private-use marker standing for its citations.
Screening (template nesting, unbalanced brackets and tags, table cells) runs before parsing because
mwparserfromhell is quadratic on unclosed constructs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from irbgen.extras import missing_extra
from irbgen.wikipedia.records import Citation


class RefTable(Protocol):
    """The named ref definitions of a page (wikitext.RefTable): what a named reuse cites."""

    def get(self, name: str) -> tuple[Citation, ...]: ...


MAX_TEMPLATE_DEPTH = 40  # real articles nest templates a few levels deep
MAX_UNBALANCED = 50  # unclosed {{, [[, [http or <tag> per section (the parser is quadratic on them)
MAX_PIPES = 100_000  # template parameters and table cells cost ~5 us each to parse


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split("|"))


_MARK_OPEN, _MARK_CLOSE = "\ue000", "\ue001"  # wikitext._MARKER reads them back
_BRACES = re.compile(r"\{\{|\}\}")
_TAG_OPEN = re.compile(r"<([a-zA-Z][a-zA-Z0-9]*)\b[^<>]*?(/?)>")
_TAG_CLOSE = re.compile(r"</([a-zA-Z][a-zA-Z0-9]*)\s*>")
_VOID_TAGS = frozenset({"br", "hr", "img", "wbr", "meta", "link", "source", "track", "col", "area", "input"})
_EXT_OPEN = re.compile(r"\[(?:https?:)?//", re.I)
_NAMED_REF = re.compile(r"<ref\s[^<>]*?name\s*=[^<>]*?[^/<>]>.*?</ref\s*>", re.S | re.I)
_REF_NAME = re.compile(r"name\s*=\s*[\"']?([^\"'>/]+?)[\"']?\s*/?>", re.I)
_REF_TAG = re.compile(r"<ref", re.I)
_STYLE = re.compile(r"'{2,}")
_MAGIC = re.compile(r"__[A-Z]+__")
_WS = re.compile(r"\s+")

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
_NOTE_TEMPLATES = frozenset({"efn", "refn", "notetag", "efn-ua", "efn-la", "efn-lr", "efn-ur"})


@lru_cache(maxsize=1)
def load_mwp() -> Any:
    """The mwparserfromhell module (with its node classes), imported on first use."""
    try:
        import mwparserfromhell
        import mwparserfromhell.nodes  # noqa: F401 - the node classes are read as mwp.nodes.X
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise missing_extra(exc.name or "mwparserfromhell", "wikitext parsing") from None
    return mwparserfromhell


def template_name(node: Any) -> str:
    """A template's normalised name: lower case, spaces for underscores, no comments or namespace."""
    name = re.sub(r"<!--.*?-->", "", str(node.name), flags=re.S)
    name = _WS.sub(" ", name.replace("_", " ")).strip().lower()
    return name[9:].strip() if name.startswith("template:") else name


def ref_tag_name(tag: Any) -> str | None:
    """The name of a <ref> tag, without quotes; None for an unnamed ref."""
    if not tag.has("name"):
        return None
    name = str(tag.get("name").value).strip().strip("\"'").strip()
    return name or None


def _positional(node: Any) -> list[Any]:
    return [p.value for p in node.params if not p.showkey]


def screen(raw: str) -> str:
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


def strip_tables(text: str) -> str:
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


_MARKS = re.compile(r"\ue000\d*\ue001?|\ue001")


def link_target(title: str) -> str:
    """The page a wikilink names, as titles are written: no "#section", spaces for underscores, first
    letter upper case ("[[new_York city#History]]" -> "New York city")."""
    page = " ".join(title.split("#", 1)[0].replace("_", " ").split())
    return page[:1].upper() + page[1:]


class Renderer:
    """Walks parsed wikitext, emitting plain text with ref markers; named reuses resolve at the end."""

    def __init__(self, refs: RefTable, cite: Callable[[Any, str | None], tuple[Citation, ...]]) -> None:
        self.refs = refs
        self.cite = cite  # a ref's content and name -> its citations (wikitext.extract_citations)
        self.nodes = load_mwp().nodes
        self.parts: list[str] = []
        self.markers: list[tuple[Citation, ...] | str] = []  # a str is a ref name to resolve
        self.in_list = False
        self.links: dict[str, str] = {}  # each link's text as rendered -> the page it links to (first wins)

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
        start = len(self.parts)
        if node.text is not None:
            if str(node.text).strip():
                self.walk(node.text)
            else:  # pipe trick: [[Foo (bar)|]] renders "Foo"
                self.parts.append(re.sub(r"\s*\(.*\)\s*$", "", title))
        else:
            self.parts.append(title)
        anchor = " ".join(_MARKS.sub("", "".join(self.parts[start:])).split())
        target = link_target(title)
        if anchor and target:
            self.links.setdefault(anchor, target)

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
            ref_name = ref_tag_name(node)
            if not node.self_closing and node.contents is not None and str(node.contents).strip():
                citations = self.cite(node.contents, ref_name)
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
        name = template_name(node)
        if name.startswith("sfn"):  # short footnotes: a ref without a URL
            self.mark(())
        elif name in _NOTE_TEMPLATES:
            args = _positional(node)
            self.mark(self.cite(args[0], None) if args else ())
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


# How a page shows a {{convert}} unit code; a code not here is shown as written ("km", "ft").
_UNIT_WORDS = {
    "km2": "km²", "m2": "m²", "km3": "km³", "m3": "m³", "sqmi": "sq mi", "sqft": "sq ft", "ft3": "cu ft",
    "acre": "acres", "C": "°C", "F": "°F", "nmi": "nautical miles", "LT": "long tons", "MT": "tonnes",
    "oilbbl": "barrels", "oilbbl/d": "barrels per day", "bbl/d": "barrels per day", "cuft": "cubic feet",
    "PD/sqmi": "people per square mile", "PD/km2": "people per km²", "USgal": "US gallons", "carat": "carats",
}  # fmt: skip
_UNIT_SCALES = {"e3": "thousand", "k": "thousand", "e6": "million", "M": "million", "e9": "billion",
                "G": "billion", "T": "trillion"}  # fmt: skip


def convert_text(number: str, unit: str) -> str:
    """A {{convert}} value as the page shows it: "400000", "oilbbl/d" -> "400,000 barrels per day";
    "1.5", "e6acre" -> "1.5 million acres"; "-27", "F" -> "-27 °F"."""
    scale = ""
    for prefix, word in _UNIT_SCALES.items() if unit not in _UNIT_WORDS else ():
        if unit.startswith(prefix) and unit[len(prefix) :] in _UNIT_WORDS:
            scale, unit = word + " ", unit[len(prefix) :]
            break
    return f"{_grouped(number)} {scale}{_UNIT_WORDS.get(unit, unit)}"


def _grouped(number: str) -> str:
    """A whole number of four or more digits with thousands separators, as a page shows it: "130,395"."""
    return f"{int(number):,}" if re.fullmatch(r"\d{4,}", number) else number


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
            return f"{_grouped(args[0])} {args[1]} {convert_text(args[2], args[3])}".replace(" - ", "–")
        return convert_text(args[0], args[1]) if len(args) > 1 else args[0]
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


def tidy(paragraph: str) -> str:
    """A rendered paragraph without bold/italic quotes or magic words, its whitespace collapsed."""
    return _WS.sub(" ", _MAGIC.sub("", _STYLE.sub("", paragraph))).strip()

"""Blocks of irbgen.eval.report.document as Markdown or as one self-contained HTML page; all text escaped."""

from __future__ import annotations

import html
from collections.abc import Sequence

from irbgen.eval.report.document import Block, Bullets, Heading, Paragraph, Table


def render_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as Markdown; every text is escaped, so it shows literally."""
    parts = []
    for block in blocks:
        if isinstance(block, Heading):
            parts.append(f"{'#' * block.level} {_md(block.text)}\n")
        elif isinstance(block, Paragraph):
            parts.append(_md(block.text) + "\n")
        elif isinstance(block, Bullets):
            parts.append("".join(f"- {_md(item)}\n" for item in block.items))
        elif isinstance(block, Table):
            lines = ["| " + " | ".join(_md(cell) for cell in block.header) + " |"]
            lines.append("|" + "|".join("---" for _ in block.header) + "|")
            lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in block.rows]
            parts.append("\n".join(lines) + "\n")
        else:
            parts.append(f"![{_md(block.alt)}]({block.name})\n")
    return "\n".join(parts)


def render_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as one self-contained HTML page (pictures stay next to it); every text is escaped."""
    body = []
    for block in blocks:
        if isinstance(block, Heading):
            level = min(max(block.level, 1), 6)
            body.append(f"<h{level}>{_html(block.text)}</h{level}>")
        elif isinstance(block, Paragraph):
            body.append(f"<p>{_html(block.text)}</p>")
        elif isinstance(block, Bullets):
            items = "".join(f"<li>{_html(item)}</li>" for item in block.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(block, Table):
            head = "".join(f"<th>{_html(cell)}</th>" for cell in block.header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{_html(cell)}</td>" for cell in row) + "</tr>\n" for row in block.rows
            )
            body.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{rows}</tbody>\n</table>")
        else:
            body.append(f'<figure><img src="{_html(block.name)}" alt="{_html(block.alt)}"></figure>')
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{_html(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


_CSS = (
    "body{font-family:sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}"
    "th{background:#f3f3f3}tbody tr:nth-child(even){background:#fafafa}"
    "img{max-width:100%}figure{margin:1em 0}"
)
_MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#!"})


def _md(text: str) -> str:
    return text.translate(_MD_SPECIAL).replace("\r", " ").replace("\n", " ")


def _html(text: str) -> str:
    return html.escape(text, quote=True)

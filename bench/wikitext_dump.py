"""Wrap plain wikitext files into a MediaWiki export that `irbgen build --source wikipedia-dump` reads.

    python bench/wikitext_dump.py WIKITEXT_DIR OUT.xml.bz2 [--timestamp 2019-06-01T00:00:00Z]

Real pages often come as bare wikitext (one article per file, as other projects keep test fixtures);
this makes them a dump so they can be audited like `../shared/realdata/`. Each `*.txt` file is one page,
taken in sorted file-name order with page ids 1, 2, 3, ... (odd ids are the test half, even ones the
tuning half, as for the realdata dumps). The title is the file name with "-" and "_" read as spaces; a
lowercase file name ("toronto_star") takes the lead's first bold phrase when they share a word, else
the file name in title case. A file that starts
with "#REDIRECT" becomes a redirect page. The same files give the same bytes.
"""

from __future__ import annotations

import argparse
import bz2
import re
from pathlib import Path
from xml.sax.saxutils import escape

HEAD = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">
  <siteinfo>
    <sitename>Wikipedia</sitename>
    <dbname>enwiki</dbname>
    <base>https://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.34.0</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="0" case="first-letter" />
      <namespace key="6" case="first-letter">File</namespace>
      <namespace key="10" case="first-letter">Template</namespace>
      <namespace key="14" case="first-letter">Category</namespace>
    </namespaces>
  </siteinfo>
"""
BOLD = re.compile(r"'''(.+?)'''")
REDIRECT = re.compile(r"^\s*#REDIRECT\s*\[\[([^\]|#]+)", re.IGNORECASE)


def title_of(path: Path, text: str) -> str:
    """The page title: the file name with "-" and "_" as spaces, or the lead's first bold phrase when the
    file name is a lowercase slug."""
    name = re.sub(r"[-_]+", " ", path.stem).strip()
    if not name[:1].islower():
        return name
    bold = BOLD.search(text)
    if bold is not None:
        phrase = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", bold.group(1)).strip("' ")
        if set(name.lower().split()) & set(phrase.lower().replace("-", " ").split()):
            return phrase[:1].upper() + phrase[1:]
    return name.title()


def page_xml(page_id: int, title: str, text: str, timestamp: str) -> str:
    """One <page> element holding `text` as its only revision."""
    redirect = REDIRECT.match(text)
    redirect_line = f'    <redirect title="{escape(redirect.group(1).strip())}" />\n' if redirect else ""
    return (
        f"  <page>\n    <title>{escape(title)}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n"
        f"{redirect_line}"
        f"    <revision>\n      <id>{1000 + page_id}</id>\n      <timestamp>{timestamp}</timestamp>\n"
        "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
        f'      <text xml:space="preserve">{escape(text)}</text>\n    </revision>\n  </page>\n'
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wikitext_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--timestamp", default="2019-06-01T00:00:00Z")
    args = parser.parse_args()
    files = sorted(args.wikitext_dir.glob("*.txt"))
    parts = [HEAD]
    for page_id, path in enumerate(files, start=1):
        text = path.read_text(encoding="utf-8")
        title = title_of(path, text)
        parts.append(page_xml(page_id, title, text, args.timestamp))
        print(f"{page_id}\t{title}")
    parts.append("</mediawiki>\n")
    args.out.write_bytes(bz2.compress("".join(parts).encode("utf-8"), 9))


if __name__ == "__main__":
    main()

"""What a page is about, as a reader names it: the noun its lead defines it by, and its links.

"Andre Kirk Agassi is an American retired professional tennis player ..." defines Agassi as a
"tennis player"; a multi-hop question can then say "the tennis player who ..." instead of "the person who
...". Links tell which page a name in a sentence stands for, so one thing is one node across pages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

VAGUE_HEADS = frozenset(
    "group type kind form term member part one set series name word list number collection family "
    "branch field area way thing system unit process variety class".split()
)
_SKIPPED_MODIFIERS = frozenset(
    "former retired professional famous major minor largest notable leading first second last best "
    "well-known main other various several many new old".split()
)


def defining_noun(doc: Any) -> str | None:
    """The noun phrase a copular first sentence defines its subject by, without articles, capitalised
    words (a nationality would hint at other answers) or evaluative words; None when the sentence is not
    "X is a/an ...", its noun is plural or vague ("a group of ..."), or it is longer than three words."""
    sentence = next(iter(doc.sents), None)
    if sentence is None or sentence.root.lower_ not in {"is", "was"}:
        return None
    attr = next((child for child in sentence.root.children if child.dep_ == "attr"), None)
    if attr is None or attr.tag_ not in {"NN"} or attr.lower_ in VAGUE_HEADS:
        return None
    if not any(child.dep_ == "det" and child.lower_ in {"a", "an"} for child in attr.children):
        return None  # "the capital of ..." is not a class it belongs to
    following = doc[attr.i + 1] if attr.i + 1 < len(doc) else None
    if following is not None and following.tag_ in {"NN", "NNS", "JJ", "RB"} and following.is_lower:
        return None  # "a former American football wide receiver" parsed with "football" as the head
    words = [attr]
    for token in reversed(doc[sentence.start : attr.i]):
        if token.text == "-":
            if words[0] is attr:
                return None  # "film-maker": a half of a word
            words.pop(0)  # "German-born theoretical physicist": "born" is half of a capitalised word
            break
        taken = token.dep_ in {"compound", "amod"} and token.head in words and token.is_alpha
        if not taken or token.text[:1].isupper() or token.lower_ in _SKIPPED_MODIFIERS:
            break
        words.insert(0, token)
    return " ".join(word.lower_ for word in words) if len(words) <= 3 else None


def links_in(text: str, links: Mapping[str, str], own_name: str = "") -> dict[str, str]:
    """The links whose text occurs in `text` as whole words, longest first, never inside a longer one's
    ("German" is not found in "German Empire") nor a name before a capitalised word that continues it
    ("Perry" is not found in "Perry Rogers"); sorted by link text. The page's `own_name` is the page
    itself wherever its text says it: one "[[Alabama people|Alabama]]" early in "Alabama" does not make
    every later "Alabama" the people."""
    found: dict[str, str] = {}
    present = [anchor for anchor in links if anchor in text and anchor != own_name]  # few of hundreds
    for anchor in sorted(present, key=lambda anchor: (-len(anchor), anchor)):
        pattern = _anchor_pattern(anchor)
        if pattern.search(text):
            found[anchor] = links[anchor]
            text = pattern.sub(" ", text)
    return dict(sorted(found.items()))


@lru_cache(maxsize=4096)  # a page's links are looked for in each of its segments
def _anchor_pattern(anchor: str) -> re.Pattern[str]:
    """The link text as whole words; a name goes on in a capitalised word: "[[Fred Perry|Perry]]" is not
    the Perry of "Perry Rogers"."""
    named = anchor.split()[-1][:1].isupper()
    return re.compile(rf"(?<!\w){re.escape(anchor)}(?!\w)" + (r"(?! [A-Z][a-z])" if named else ""))

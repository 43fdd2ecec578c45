"""Attributes of an IRB sample: evidence languages and dates, freshness, and topic.

Topic follows IRB's grouping of ORES article topics into four groups. A CirrusSearch dump gives the
ORES topics of each page; an XML dump does not, so the group is then read from the page's categories,
and failing those from the fact's section headings and the page title, by keyword.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from irbgen.web.records import WebDocument

TOPIC_GROUPS = ("Culture", "Geography", "History and Society", "STEM")
ENGLISH = "en"

# Keywords (word prefixes) that put a category, heading or title in a group; checked in this order,
# so a "History of science" category is STEM, and a "Towns in X" category is Geography.
_KEYWORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "STEM",
        (
            "science",
            "scientif",
            "engineer",
            "technolog",
            "robot",
            "astronom",
            "observator",
            "research",
            "physic",
            "chemi",
            "biolog",
            "medic",
            "mathemat",
            "comput",
            "software",
            "telescope",
            "design",
            "bridge",
            "infrastructure",
            "energy",
            "wind farm",
            "species",
            "wildlife",
            "geolog",
            "hydrolog",
        ),
    ),
    (
        "Geography",
        (
            "geograph",
            "town",
            "city",
            "cities",
            "village",
            "lake",
            "river",
            "mountain",
            "hill",
            "region",
            "countr",
            "populated place",
            "bay",
            "island",
            "climate",
            "landform",
            "settlement",
        ),
    ),
    (
        "Culture",
        (
            "culture",
            "festival",
            "art",
            "music",
            "film",
            "literat",
            "sport",
            "media",
            "biograph",
            "people",
            "religio",
            "food",
            "entertain",
            "public events",
            "museum",
            "award",
            "recognition",
            "early life",
            "selected works",
            "show",
        ),
    ),
    (
        "History and Society",
        (
            "history",
            "histor",
            "politic",
            "business",
            "econom",
            "compan",
            "transport",
            "railway",
            "education",
            "militar",
            "societ",
            "law",
            "government",
            "organi",
            "operations",
            "tourism",
            "career",
            "construction",
            "traffic",
            "extension",
        ),
    ),
)


def ores_group(topic: str) -> str | None:
    """The group of an ORES topic name ("Geography.Regions.Europe" -> "Geography"), if it has one."""
    head = topic.split(".", 1)[0].replace("_", " ").strip()
    for group in TOPIC_GROUPS:
        if head.lower() == group.lower():
            return group
    return None


def keyword_group(text: str) -> str | None:
    """The first group with a keyword starting a word of `text` (case-insensitive), else None."""
    lowered = " " + " ".join(text.lower().split())
    for group, keywords in _KEYWORDS:
        if any(f" {keyword}" in lowered for keyword in keywords):
            return group
    return None


def topic_group(
    topics: Sequence[str], categories: Sequence[str], section: Sequence[str], title: str
) -> tuple[str | None, str]:
    """(group, where it came from: "ores", "category", "section", "title" or "none")."""
    for topic in topics:
        group = ores_group(topic)
        if group is not None:
            return group, "ores"
    for where, texts in (("category", categories), ("section", list(reversed(section))), ("title", [title])):
        for text in texts:
            group = keyword_group(text)
            if group is not None:
                return group, where
    return None, "none"


def evidence_attributes(documents: Iterable[WebDocument]) -> dict[str, Any]:
    """Languages and publication dates of the evidence, whether any is not English, and its freshness.

    Freshness is the year of the newest dated evidence document (None when none is dated).
    """
    documents = list(documents)
    languages = sorted({document.language or "unknown" for document in documents})
    dates = sorted({document.published for document in documents if document.published})
    return {
        "evidence_languages": languages,
        "evidence_dates": dates,
        "cross_lingual": any(language not in (ENGLISH, "unknown") for language in languages),
        "freshness": dates[-1][:4] if dates else None,
    }

"""A small document model: the blocks a report or a comparison is made of (see render for the output)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Heading:
    """A section heading."""

    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    """A paragraph of plain text."""

    text: str


@dataclass(frozen=True)
class Bullets:
    """A bulleted list of plain text items."""

    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A table of plain text cells."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Image:
    """A picture next to the document, by file name."""

    name: str
    alt: str


Block = Heading | Paragraph | Bullets | Table | Image

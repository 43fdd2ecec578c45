"""One wiki article per person: Family, Friends and Attributes sections, one sentence per fact kind."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from irbgen.phantom.relations import RelationIndex
from irbgen.schema import Document

# (label, shape, gender, singular, plural): the family facts an article states, in order.
FAMILY_LINES = (
    ("sister", "sibling", True, "sister", "sisters"),
    ("brother", "sibling", False, "brother", "brothers"),
    ("mother", "parent", True, "mother", "mothers"),
    ("father", "parent", False, "father", "fathers"),
    ("son", "child", False, "son", "sons"),
    ("daughter", "child", True, "daughter", "daughters"),
    ("wife", "spouse", True, "wife", "wives"),
    ("husband", "spouse", False, "husband", "husbands"),
)


def join_names(names: list[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


class DocumentIds:
    """Stable document ids: p0000000, p0000001, ... (names may repeat, ids never do), made when asked."""

    def __init__(self, size: int) -> None:
        self.width = max(7, len(str(size - 1)))
        self._form = re.compile(rf"p[0-9]{{{self.width}}}")
        self._last = self[size - 1]

    def __contains__(self, doc_id: object) -> bool:
        """Whether DOC_ID is the id of someone in the world (ids of one width compare as numbers)."""
        return isinstance(doc_id, str) and self._form.fullmatch(doc_id) is not None and doc_id <= self._last

    def __getitem__(self, person: int) -> str:
        return f"p{person:0{self.width}d}"

    def of(self, people: np.ndarray) -> list[str]:
        """The ids of many people at once (their digits computed as arrays, the same text as [])."""
        width = self.width
        text = np.empty((len(people), width + 1), dtype=np.uint8)
        text[:, 0] = ord("p")
        rest = np.asarray(people, dtype=np.int64)
        for column in range(width, 0, -1):
            rest, digit = np.divmod(rest, 10)
            text[:, column] = ord("0") + digit
        return text.view(f"S{width + 1}").reshape(-1).astype(f"U{width + 1}").tolist()


def document_ids(size: int) -> list[str]:
    """Every document id of a world of SIZE people, in person order."""
    return DocumentIds(size).of(np.arange(size))


# People rendered per block: only one block's relation rows are Python lists at a time.
ARTICLE_BLOCK = 65_536


# The relation shapes an article states (built once before rendering in several processes).
ARTICLE_SHAPES = (*dict.fromkeys(line[1] for line in FAMILY_LINES), "friend")


def articles(
    index: RelationIndex, dob_text: list[str], first: int = 0, end: int | None = None
) -> Iterator[Document]:
    """Render the articles of people FIRST..END-1 (default: everyone), in person order."""
    universe = index.universe
    end = universe.size if end is None else end
    names = universe.names
    vocabulary = universe.vocabulary
    of_gender = {True: universe.female, False: ~universe.female}
    family_lines = [
        (index.shape(shape), of_gender[want_female], singular, plural)
        for _, shape, want_female, singular, plural in FAMILY_LINES
    ]
    friendships = index.shape("friend")
    ids_of = DocumentIds(universe.size)
    for start in range(first, end, ARTICLE_BLOCK):
        stop = min(start + ARTICLE_BLOCK, end)
        ids = ids_of.of(np.arange(start, stop))
        female = universe.female[start:stop].tolist()
        occupations = [vocabulary.occupations[code] for code in universe.occupation[start:stop].tolist()]
        hobbies = [vocabulary.hobbies[code] for code in universe.hobby[start:stop].tolist()]
        family_rows = [
            (*_rows(matrix, start, stop, keep), singular, plural)
            for matrix, keep, singular, plural in family_lines
        ]
        friend_ptr, friend_idx = _rows(friendships, start, stop)
        for row in range(stop - start):
            person = start + row
            name = names[person]
            family = []
            for pointer, indices, singular, plural in family_rows:
                first, last = pointer[row], pointer[row + 1]
                if last - first == 1:
                    family.append(f"{name}'s {singular} is {names[indices[first]]}.\n")
                elif last > first:
                    related = join_names([names[other] for other in indices[first:last]])
                    family.append(f"{name}'s {plural} are {related}.\n")
            first, last = friend_ptr[row], friend_ptr[row + 1]
            friends = join_names([names[other] for other in friend_idx[first:last]]) if last > first else ""
            friend_line = f"{name} is friends with {friends}.\n" if friends else ""
            text = (
                f"# {name}\n\n## Family\n"
                + "".join(family)
                + "\n## Friends\n"
                + friend_line
                + "\n## Attributes\n"
                f"{name}'s date of birth is {dob_text[person]}.\n"
                f"{name}'s occupation is {occupations[row]}.\n"
                f"{name}'s hobby is {hobbies[row]}.\n"
                f"{name}'s gender is {'female' if female[row] else 'male'}.\n"
            )
            yield Document.model_construct(id=ids[row], title=name, text=text, metadata={})


def _rows(
    matrix: sp.csr_matrix, start: int, stop: int, keep: np.ndarray | None = None
) -> tuple[list[int], list[int]]:
    """Rows START..STOP of a CSR matrix as (pointers from 0, column indices), as Python lists.

    With KEEP (a boolean per column), only the columns it marks are kept.
    """
    pointer = matrix.indptr[start : stop + 1]
    indices = matrix.indices[pointer[0] : pointer[-1]]
    pointer = pointer - pointer[0]
    if keep is not None:
        kept = keep[indices]
        pointer = np.concatenate(([0], np.cumsum(kept)))[pointer]
        indices = indices[kept]
    return pointer.tolist(), indices.tolist()

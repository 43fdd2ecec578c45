"""One wiki article per person: Family, Friends and Attributes sections, one sentence per fact kind."""

from __future__ import annotations

from collections.abc import Iterator

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


def document_ids(size: int) -> list[str]:
    """Stable document ids: p0000000, p0000001, ... (names may repeat, ids never do)."""
    width = max(7, len(str(size - 1)))
    return [f"p{person:0{width}d}" for person in range(size)]


def articles(index: RelationIndex, dob_text: list[str]) -> Iterator[Document]:
    """Render every person's article, in person order."""
    universe = index.universe
    names = universe.names
    female = universe.female.tolist()
    vocabulary = universe.vocabulary
    occupation = universe.occupation.tolist()
    hobby = universe.hobby.tolist()
    rows = {}
    for shape in ("sibling", "parent", "child", "spouse", "friend"):
        matrix = index.shape(shape)
        rows[shape] = (matrix.indptr.tolist(), matrix.indices.tolist())
    friend_ptr, friend_idx = rows["friend"]
    ids = document_ids(universe.size)

    for person, name in enumerate(names):
        family = []
        for _label, shape, want_female, singular, plural in FAMILY_LINES:
            pointer, indices = rows[shape]
            related = [
                names[other]
                for other in indices[pointer[person] : pointer[person + 1]]
                if female[other] == want_female
            ]
            if len(related) == 1:
                family.append(f"{name}'s {singular} is {related[0]}.")
            elif related:
                family.append(f"{name}'s {plural} are {join_names(related)}.")
        friends = [names[other] for other in friend_idx[friend_ptr[person] : friend_ptr[person + 1]]]
        friend_line = f"{name} is friends with {join_names(friends)}.\n" if friends else ""
        text = (
            f"# {name}\n\n## Family\n"
            + "".join(line + "\n" for line in family)
            + "\n## Friends\n"
            + friend_line
            + "\n## Attributes\n"
            f"{name}'s date of birth is {dob_text[person]}.\n"
            f"{name}'s occupation is {vocabulary.occupations[occupation[person]]}.\n"
            f"{name}'s hobby is {vocabulary.hobbies[hobby[person]]}.\n"
            f"{name}'s gender is {'female' if female[person] else 'male'}.\n"
        )
        yield Document.model_construct(id=ids[person], title=name, text=text, metadata={})

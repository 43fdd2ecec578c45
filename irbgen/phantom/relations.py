"""Family and friendship relations as sparse boolean matrices, composed from the parent facts.

`M[x, y] = 1` means "y is the <relation> of x". Every relation is a *shape* (a product of the article-level
steps parent, child, sibling, spouse, friend, optionally without the diagonal) and an optional gender filter
on y. Gender filters commute with unions, so sets of people are mapped through a shape and filtered after.
The definitions follow PhantomWiki 1.0.3's Prolog rules; `tests/oracle/family.pl` checks them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from irbgen.phantom.universe import Universe

# Article-level steps: each is stated in a person's article, so following one costs one article read.
STEPS = ("parent", "child", "sibling", "spouse", "friend")


@dataclass(frozen=True)
class Shape:
    """A relation before its gender filter: a product of steps, optionally excluding the person itself."""

    steps: tuple[str, ...]
    drop_self: bool = False


SHAPES: dict[str, Shape] = {
    "parent": Shape(("parent",)),
    "child": Shape(("child",)),
    "sibling": Shape(("sibling",)),
    "spouse": Shape(("spouse",)),
    "friend": Shape(("friend",)),
    "grandparent": Shape(("parent", "parent")),
    "grandchild": Shape(("child", "child")),
    "great_grandparent": Shape(("parent", "parent", "parent")),
    "great_grandchild": Shape(("child", "child", "child")),
    "parents_sibling": Shape(("parent", "sibling")),
    "siblings_child": Shape(("sibling", "child")),
    "grandparents_sibling": Shape(("parent", "parent", "sibling")),
    "great_grandparents_sibling": Shape(("parent", "parent", "parent", "sibling")),
    "cousin": Shape(("parent", "sibling", "child"), drop_self=True),
    "cousins_child": Shape(("parent", "sibling", "child", "child"), drop_self=True),
    "second_cousin": Shape(("parent", "parent", "sibling", "child", "child"), drop_self=True),
    "spouses_parent": Shape(("spouse", "parent")),
    "spouses_sibling": Shape(("spouse", "sibling")),
    "childs_spouse": Shape(("child", "spouse")),
}

# Each shape's inverse where that is a shape too (itself when symmetric): no transpose is stored for them.
_INVERSES: dict[str, str] = {
    "sibling": "sibling",
    "spouse": "spouse",
    "friend": "friend",
    "cousin": "cousin",
    "second_cousin": "second_cousin",
    "parent": "child",
    "child": "parent",
    "grandparent": "grandchild",
    "grandchild": "grandparent",
    "great_grandparent": "great_grandchild",
    "great_grandchild": "great_grandparent",
    "parents_sibling": "siblings_child",
    "siblings_child": "parents_sibling",
    "spouses_parent": "childs_spouse",
    "childs_spouse": "spouses_parent",
}

# How a shape is built from smaller ones (so each product is computed once); drop_self applies after.
_RECIPES: dict[str, tuple[str, ...]] = {
    "grandparent": ("parent", "parent"),
    "grandchild": ("child", "child"),
    "great_grandparent": ("grandparent", "parent"),
    "great_grandchild": ("grandchild", "child"),
    "parents_sibling": ("parent", "sibling"),
    "siblings_child": ("sibling", "child"),
    "grandparents_sibling": ("grandparent", "sibling"),
    "great_grandparents_sibling": ("great_grandparent", "sibling"),
    "cousin": ("parents_sibling", "child"),
    "cousins_child": ("cousin", "child"),
    "second_cousin": ("parent", "cousin", "child"),
    "spouses_parent": ("spouse", "parent"),
    "spouses_sibling": ("spouse", "sibling"),
    "childs_spouse": ("child", "spouse"),
}


@dataclass(frozen=True)
class Relation:
    """A question-able relation: its shape, gender filter, difficulty weight and English forms."""

    name: str
    shape: str
    gender: str | None  # "female", "male" or None
    weight: int
    plural: str

    @property
    def text(self) -> str:
        """The relation as it reads in a question."""
        return self.name.replace("_in_law", "-in-law").replace("great_", "great-").replace("_", " ")


def _relation(name: str, shape: str, gender: str | None, weight: int, plural: str) -> Relation:
    return Relation(name, shape, gender, weight, plural)


_TABLE = [
    # weight 1: read straight off one article
    ("parent", "parent", None, 1, "parents"),
    ("sibling", "sibling", None, 1, "siblings"),
    ("sister", "sibling", "female", 1, "sisters"),
    ("brother", "sibling", "male", 1, "brothers"),
    ("mother", "parent", "female", 1, "mothers"),
    ("father", "parent", "male", 1, "fathers"),
    ("child", "child", None, 1, "children"),
    ("son", "child", "male", 1, "sons"),
    ("daughter", "child", "female", 1, "daughters"),
    ("wife", "spouse", "female", 1, "wives"),
    ("husband", "spouse", "male", 1, "husbands"),
    # weight 2: two articles
    ("aunt", "parents_sibling", "female", 2, "aunts"),
    ("uncle", "parents_sibling", "male", 2, "uncles"),
    ("niece", "siblings_child", "female", 2, "nieces"),
    ("nephew", "siblings_child", "male", 2, "nephews"),
    ("grandparent", "grandparent", None, 2, "grandparents"),
    ("grandmother", "grandparent", "female", 2, "grandmothers"),
    ("grandfather", "grandparent", "male", 2, "grandfathers"),
    ("grandchild", "grandchild", None, 2, "grandchildren"),
    ("granddaughter", "grandchild", "female", 2, "granddaughters"),
    ("grandson", "grandchild", "male", 2, "grandsons"),
    ("father_in_law", "spouses_parent", "male", 2, "fathers-in-law"),
    ("mother_in_law", "spouses_parent", "female", 2, "mothers-in-law"),
    ("brother_in_law", "spouses_sibling", "male", 2, "brothers-in-law"),
    ("sister_in_law", "spouses_sibling", "female", 2, "sisters-in-law"),
    ("son_in_law", "childs_spouse", "male", 2, "sons-in-law"),
    ("daughter_in_law", "childs_spouse", "female", 2, "daughters-in-law"),
    # weight 3
    ("great_aunt", "grandparents_sibling", "female", 3, "great-aunts"),
    ("great_uncle", "grandparents_sibling", "male", 3, "great-uncles"),
    ("great_grandparent", "great_grandparent", None, 3, "great-grandparents"),
    ("great_grandmother", "great_grandparent", "female", 3, "great-grandmothers"),
    ("great_grandfather", "great_grandparent", "male", 3, "great-grandfathers"),
    ("great_grandchild", "great_grandchild", None, 3, "great-grandchildren"),
    ("great_granddaughter", "great_grandchild", "female", 3, "great-granddaughters"),
    ("great_grandson", "great_grandchild", "male", 3, "great-grandsons"),
    ("cousin", "cousin", None, 3, "cousins"),
    ("female_cousin", "cousin", "female", 3, "female cousins"),
    ("male_cousin", "cousin", "male", 3, "male cousins"),
    # weight 4
    ("female_first_cousin_once_removed", "cousins_child", "female", 4, "female first cousins once removed"),
    ("male_first_cousin_once_removed", "cousins_child", "male", 4, "male first cousins once removed"),
    ("second_aunt", "great_grandparents_sibling", "female", 4, "second aunts"),
    ("second_uncle", "great_grandparents_sibling", "male", 4, "second uncles"),
    # weight 5
    ("female_second_cousin", "second_cousin", "female", 5, "female second cousins"),
    ("male_second_cousin", "second_cousin", "male", 5, "male second cousins"),
    # friendship
    ("friend", "friend", None, 1, "friends"),
]

RELATIONS: dict[str, Relation] = {row[0]: _relation(*row) for row in _TABLE}
EASY_RELATIONS = tuple(name for name, relation in RELATIONS.items() if relation.weight == 1)

ATTRIBUTES = {"dob": "date of birth", "job": "occupation", "hobby": "hobby"}


def _boolean(matrix: sp.spmatrix) -> sp.csr_matrix:
    matrix = sp.csr_matrix(matrix)
    matrix.sum_duplicates()
    matrix.data = np.ones(len(matrix.data), dtype=np.int8)
    matrix.sort_indices()
    return matrix


def _without_diagonal(matrix: sp.csr_matrix) -> sp.csr_matrix:
    coo = matrix.tocoo()
    keep = coo.row != coo.col
    shape = matrix.shape
    return _boolean(sp.coo_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=shape))


def gather(matrix: sp.csr_matrix, people: np.ndarray) -> np.ndarray:
    """All column indices in the given rows, concatenated (with repeats)."""
    starts = matrix.indptr[people]
    lengths = matrix.indptr[people + 1] - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int32)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    return matrix.indices[np.arange(total) + offsets]


class RelationIndex:
    """The relation matrices of one universe, built lazily and kept."""

    def __init__(self, universe: Universe):
        self.universe = universe
        self.size = universe.size
        self.female = universe.female
        self._shapes: dict[str, sp.csr_matrix] = {}
        self._transposed: dict[str, sp.csr_matrix] = {}

    def _base(self, name: str) -> sp.csr_matrix:
        u, n = self.universe, self.size
        if name == "parent":
            rows = np.concatenate([np.flatnonzero(u.father >= 0), np.flatnonzero(u.mother >= 0)])
            cols = np.concatenate([u.father[u.father >= 0], u.mother[u.mother >= 0]])
            return _boolean(sp.coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n)))
        if name == "child":
            return _boolean(self.shape("parent").T)
        if name == "sibling":
            return _without_diagonal(self.shape("parent") @ self.shape("child"))
        if name == "spouse":
            return _without_diagonal(self.shape("child") @ self.shape("parent"))
        if name == "friend":
            a, b = u.friendships[:, 0], u.friendships[:, 1]
            rows, cols = np.concatenate([a, b]), np.concatenate([b, a])
            return _boolean(sp.coo_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n)))
        raise KeyError(name)

    def shape(self, name: str) -> sp.csr_matrix:
        """The matrix of a shape (see SHAPES)."""
        if name not in self._shapes:
            if name in _RECIPES:
                product = self.shape(_RECIPES[name][0])
                for factor in _RECIPES[name][1:]:
                    product = _boolean(product @ self.shape(factor))
                matrix = _without_diagonal(product) if SHAPES[name].drop_self else product
            else:
                matrix = self._base(name)
            self._shapes[name] = matrix
        return self._shapes[name]

    def transposed(self, name: str) -> sp.csr_matrix:
        """The inverse of a shape, for walking back from targets to sources."""
        if name in _INVERSES:
            return self.shape(_INVERSES[name])
        if name not in self._transposed:
            self._transposed[name] = _boolean(self.shape(name).T)
        return self._transposed[name]

    def keep_gender(self, people: np.ndarray, gender: str | None) -> np.ndarray:
        if gender is None:
            return people
        return people[self.female[people] == (gender == "female")]

    def related(self, relation: str, person: int) -> np.ndarray:
        """Sorted people who are the `relation` of `person`."""
        rel = RELATIONS[relation]
        matrix = self.shape(rel.shape)
        row = matrix.indices[matrix.indptr[person] : matrix.indptr[person + 1]]
        return self.keep_gender(row, rel.gender)

    def image(self, relation: str, people: np.ndarray) -> np.ndarray:
        """Sorted union of `related(relation, p)` over `people`."""
        rel = RELATIONS[relation]
        return self.keep_gender(np.unique(gather(self.shape(rel.shape), people)), rel.gender)

    def sources(self, relation: str, people: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """Those of `people` who have at least one `relation` among `targets`."""
        rel = RELATIONS[relation]
        reached = np.zeros(self.size, dtype=bool)
        reached[gather(self.transposed(rel.shape), targets)] = True
        return people[reached[people]]

    def counts(self, relation: str, people: np.ndarray) -> np.ndarray:
        """How many `relation`s each of `people` has."""
        rel = RELATIONS[relation]
        matrix = self.shape(rel.shape)
        if rel.gender is None:
            return (matrix.indptr[people + 1] - matrix.indptr[people]).astype(np.int64)
        wanted = self.female[matrix.indices] == (rel.gender == "female")
        cumulative = np.concatenate(([0], np.cumsum(wanted)))
        return cumulative[matrix.indptr[people + 1]] - cumulative[matrix.indptr[people]]

    def via(self, relation: str, sources: np.ndarray, targets: np.ndarray) -> np.ndarray:
        """People met between `sources` and `targets` when following the relation step by step."""
        steps = SHAPES[RELATIONS[relation].shape].steps
        if len(steps) < 2:
            return np.zeros(0, dtype=np.int32)
        forward = [sources]
        for step in steps[:-1]:
            forward.append(np.unique(gather(self.shape(step), forward[-1])))
        backward = targets
        middle = []
        for position in range(len(steps) - 1, 0, -1):
            backward = np.unique(gather(self.transposed(steps[position]), backward))
            backward = np.intersect1d(backward, forward[position], assume_unique=True)
            middle.append(backward)
        return np.unique(np.concatenate(middle))

    def pairs(self, person: int, relations: tuple[str, ...]) -> list[tuple[str, int]]:
        """Every (relation, related person) pair of `person`, relations in the given order."""
        return [(name, int(other)) for name in relations for other in self.related(name, person)]

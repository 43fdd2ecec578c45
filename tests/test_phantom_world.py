"""The synthetic world: sizes, family consistency, names, friendships and vocabularies."""

from __future__ import annotations

from collections import Counter
from datetime import date

import numpy as np
import pytest

from irbgen.errors import BadInputError
from irbgen.phantom.config import PhantomConfig
from irbgen.phantom.relations import RelationIndex
from irbgen.phantom.universe import _friendships, generate_universe
from irbgen.phantom.vocabulary import load_vocabulary


@pytest.fixture(scope="module")
def vocabulary():
    return load_vocabulary()


@pytest.fixture(scope="module")
def world(vocabulary):
    return generate_universe(PhantomConfig(n=3000, seed=5), vocabulary)


def test_vocabularies_are_large_enough(vocabulary):
    assert len(vocabulary.occupations) >= 300
    assert len(vocabulary.hobbies) >= 600
    assert not set(vocabulary.female_names) & set(vocabulary.male_names)
    assert len(vocabulary.surnames) >= 4000


@pytest.mark.parametrize("n", [1, 2, 3, 7, 49, 50, 51, 123])
def test_world_has_exactly_n_people(vocabulary, n):
    universe = generate_universe(PhantomConfig(n=n, seed=n), vocabulary)
    assert universe.size == n
    assert len(set(universe.names)) == n


def test_names_are_unique_by_default(world):
    assert len(set(world.names)) == world.size


def test_duplicate_names_may_repeat(vocabulary):
    tiny = vocabulary.__class__(
        female_names=("Ada", "Bea"),
        male_names=("Cy", "Dan"),
        surnames=("Ek",),
        occupations=vocabulary.occupations,
        hobbies=vocabulary.hobbies,
    )
    universe = generate_universe(PhantomConfig(n=40, seed=1, duplicate_names=True), tiny)
    assert universe.size == 40
    assert len(set(universe.names)) <= 4
    with pytest.raises(BadInputError, match="run out of unique full names"):
        generate_universe(PhantomConfig(n=40, seed=1), tiny)


def _year(day: int) -> float:
    return day / 365.2425


def test_parents_have_the_right_gender_and_age(world):
    for child in range(world.size):
        for parent, female in ((world.father[child], False), (world.mother[child], True)):
            if parent < 0:
                continue
            assert world.female[parent] == female
            gap = _year(world.dob[child] - world.dob[parent])
            assert 17 <= gap <= 46, (world.names[child], gap)
        assert (world.father[child] < 0) == (world.mother[child] < 0)


def test_children_take_their_fathers_surname(world):
    for child in np.flatnonzero(world.father >= 0):
        assert world.names[child].split(" ", 1)[1] == world.names[world.father[child]].split(" ", 1)[1]


def test_spouses_are_one_each_and_close_in_age(world):
    spouse = RelationIndex(world).shape("spouse")
    per_person = np.diff(spouse.indptr)
    assert per_person.max() == 1
    for person in np.flatnonzero(per_person):
        other = spouse.indices[spouse.indptr[person]]
        assert world.female[person] != world.female[other]
        assert abs(_year(world.dob[person] - world.dob[other])) <= 11


def test_siblings_are_apart_or_twins(world):
    children = Counter(zip(world.father.tolist(), world.mother.tolist(), strict=True))
    assert max(count for (father, _), count in children.items() if father >= 0) <= 5
    sibling = RelationIndex(world).shape("sibling")
    twins = 0
    for person in range(world.size):
        for other in sibling.indices[sibling.indptr[person] : sibling.indptr[person + 1]]:
            gap = abs(int(world.dob[person]) - int(world.dob[other]))
            assert gap == 0 or gap >= 300
            twins += gap == 0
    assert twins > 0  # about 5% of later-born children are twins


def test_trees_respect_size_and_generations(vocabulary):
    config = PhantomConfig(n=2000, seed=3, tree_size=30, tree_depth=3)
    universe = generate_universe(config, vocabulary)
    sizes = np.bincount(universe.tree)
    assert sizes.max() <= 30
    index = RelationIndex(universe)
    assert index.shape("great_grandparent").nnz > 0  # four generations are allowed
    assert (index.shape("great_grandparent") @ index.shape("parent")).nnz == 0  # five are not


def test_friendships_form_a_sparse_random_graph(vocabulary):
    universe = generate_universe(PhantomConfig(n=20000, seed=2, friendship_k=3.0), vocabulary)
    edges = universe.friendships
    assert (edges[:, 0] < edges[:, 1]).all()
    assert len(np.unique(edges[:, 0].astype(np.int64) * universe.size + edges[:, 1])) == len(edges)
    mean_degree = 2 * len(edges) / universe.size
    assert 2.8 < mean_degree < 3.2
    crossing = (universe.tree[edges[:, 0]] != universe.tree[edges[:, 1]]).mean()
    assert crossing > 0.9  # friends are drawn from the whole world, not from the family


def _friendships_by_definition(size, k, rng):
    """The graph as first written: rounds of draws, np.unique's first appearances, then a lexsort."""
    if size < 2 or k <= 0:
        return np.zeros((0, 2), dtype=np.int32)
    wanted = int(rng.binomial(size * (size - 1) // 2, min(k / size, 1.0)))
    edges = np.zeros((0, 2), dtype=np.int64)
    while len(edges) < wanted:
        draw = max(2 * (wanted - len(edges)), 16)
        a, b = rng.integers(0, size, draw), rng.integers(0, size, draw)
        keep = a != b
        merged = np.concatenate([edges, np.stack([np.minimum(a, b)[keep], np.maximum(a, b)[keep]], axis=1)])
        _, first = np.unique(merged[:, 0] * size + merged[:, 1], return_index=True)
        edges = merged[np.sort(first)]
    edges = edges[:wanted]
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))].astype(np.int32)


@pytest.mark.parametrize(
    "size, k",
    [
        (0, 3),
        (1, 3),
        (2, 3),
        (2, 1000),
        (5, 3),
        (7, 50),
        (20, 1000),
        (100, 60),
        (1000, 500),
        (5000, 3),
        (50000, 3),
    ],
)
def test_friendships_are_the_graph_of_their_definition(size, k):
    """Sparse (a repeat is rare) and dense (most draws repeat, the last round overshoots) alike."""
    for seed in range(3):
        fast = _friendships(size, k, np.random.default_rng(seed))
        plain = _friendships_by_definition(size, k, np.random.default_rng(seed))
        assert fast.dtype == plain.dtype and fast.shape == plain.shape and (fast == plain).all()


def test_attributes_cover_the_vocabulary(world, vocabulary):
    assert len(np.unique(world.occupation)) > 0.8 * len(vocabulary.occupations)
    assert len(np.unique(world.hobby)) > 0.8 * len(vocabulary.hobbies)
    dates = world.dob_text()
    assert all(date.fromisoformat(text) for text in dates[:100])


def test_same_seed_same_world_other_seed_other_world(vocabulary):
    a = generate_universe(PhantomConfig(n=300, seed=9), vocabulary)
    b = generate_universe(PhantomConfig(n=300, seed=9), vocabulary)
    c = generate_universe(PhantomConfig(n=300, seed=10), vocabulary)
    assert a.names == b.names and (a.dob == b.dob).all() and (a.friendships == b.friendships).all()
    assert a.names != c.names


def test_a_shapes_inverse_is_its_transpose(world):
    """Shapes listed as each other's inverse (or as symmetric) share one matrix instead of a transpose."""
    from irbgen.phantom.relations import _INVERSES

    index = RelationIndex(world)
    for name, inverse in _INVERSES.items():
        transpose = (index.shape(name).T != 0).astype(np.int8).tocsr()
        assert (transpose != index.shape(inverse)).nnz == 0, (name, inverse)
        assert index.transposed(name) is index.shape(inverse)

"""The synthetic world: family trees with consistent birth dates, friendships, occupations and hobbies.

Only base facts are stored here (who is whose parent, gender, birth date, occupation, hobby, friendship);
every other relation is derived from them in `irbgen.phantom.relations`.
"""

from __future__ import annotations

import random
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

import numpy as np

from irbgen.errors import BadInputError
from irbgen.phantom.config import PhantomConfig
from irbgen.phantom.vocabulary import Vocabulary

DAYS_PER_YEAR = 365.25
MIN_PARENT_AGE, MEAN_PARENT_AGE, MAX_PARENT_AGE = 18, 27, 45
MAX_SPOUSE_GAP_YEARS = 10
MIN_SIBLING_GAP_DAYS = 300
TWIN_PROBABILITY = 0.05
FIRST_FOUNDER_YEAR, LAST_FOUNDER_YEAR = 1600, 1700


@dataclass
class Universe:
    """Base facts of a world of `size` people, as parallel arrays indexed by person."""

    names: list[str]
    female: np.ndarray  # bool
    father: np.ndarray  # int32, -1 when unknown
    mother: np.ndarray  # int32, -1 when unknown
    dob: np.ndarray  # int32 proleptic Gregorian ordinal
    occupation: np.ndarray  # int32 index into vocabulary.occupations
    hobby: np.ndarray  # int32 index into vocabulary.hobbies
    friendships: np.ndarray  # (m, 2) int32, each pair once with a < b, sorted
    tree: np.ndarray  # int32 family tree of each person
    vocabulary: Vocabulary

    @property
    def size(self) -> int:
        return len(self.names)

    def dob_text(self) -> list[str]:
        """Birth dates as YYYY-MM-DD; people born the same day share one string."""
        days, where = np.unique(self.dob, return_inverse=True)
        texts = np.array([date.fromordinal(day).isoformat() for day in days.tolist()], dtype=object)
        return texts[where.reshape(-1)].tolist()


class _Namer:
    """Hands out full names, unique unless duplicates are allowed."""

    def __init__(self, vocabulary: Vocabulary, rng: random.Random, allow_duplicates: bool):
        self.pools = {True: vocabulary.female_names, False: vocabulary.male_names}
        self.surnames = vocabulary.surnames
        self.rng = rng
        self.allow_duplicates = allow_duplicates
        self.used: set[int] = set()  # one int per full name taken: (first, surname, gender)

    def random_surname(self) -> int:
        return self.rng.randrange(len(self.surnames))

    def name(self, female: bool, surname: int | None) -> tuple[str, int]:
        """A full name for a person of this gender; `surname=None` lets the namer choose it."""
        pool = self.pools[female]
        fixed = surname is not None
        for _ in range(64 if fixed else 16):
            chosen = surname if fixed else self.random_surname()
            first = self.rng.randrange(len(pool))
            if self.allow_duplicates or self._key(female, first, chosen) not in self.used:
                return self._take(female, first, chosen)
        surnames = [surname] if fixed else range(len(self.surnames))
        for chosen in surnames:
            for first in range(len(pool)):
                if self._key(female, first, chosen) not in self.used:
                    return self._take(female, first, chosen)
        raise BadInputError(
            f"the vocabulary has run out of unique full names after {len(self.used):,} people; "
            "pass --duplicate-names, or --vocab-dir with a copy of the word lists that has more names"
        )

    def _key(self, female: bool, first: int, surname: int) -> int:
        return (first * len(self.surnames) + surname) * 2 + female

    def _take(self, female: bool, first: int, surname: int) -> tuple[str, int]:
        self.used.add(self._key(female, first, surname))
        return f"{self.pools[female][first]} {self.surnames[surname]}", surname


class _TreeBuilder:
    """Grows family trees one person at a time, appending to shared per-person columns.

    Columns are compact arrays, and children are kept only for the tree being grown (trees never link).
    """

    def __init__(self, config: PhantomConfig, vocabulary: Vocabulary, rng: random.Random):
        self.config = config
        self.rng = rng
        self.namer = _Namer(vocabulary, rng, config.duplicate_names)
        self.names: list[str] = []
        self.surname = array("i")
        self.female = array("b")
        self.father = array("i")
        self.mother = array("i")
        self.spouse = array("i")
        self.children: dict[int, list[int]] = {}  # of the tree being grown
        self.level = array("i")
        self.dob = array("i")
        self.tree = array("i")

    def _add(self, female: bool, surname: int | None, level: int, dob: int, tree: int) -> int:
        name, surname = self.namer.name(female, surname)
        self.names.append(name)
        self.surname.append(surname)
        self.female.append(female)
        self.father.append(-1)
        self.mother.append(-1)
        self.spouse.append(-1)
        self.level.append(level)
        self.dob.append(dob)
        self.tree.append(tree)
        return len(self.names) - 1

    def _day_in_year(self, year: int) -> int:
        return date(year, self.rng.randint(1, 12), self.rng.randint(1, 28)).toordinal()

    def _year(self, person: int) -> int:
        return date.fromordinal(self.dob[person]).year

    def _gap(self, mean: float, spread: float, low: int, high: int) -> int:
        return min(max(round(self.rng.gauss(mean, spread)), low), high)

    def _add_spouse(self, person: int) -> int:
        year = self._year(person) + self._gap(0, 2, -MAX_SPOUSE_GAP_YEARS, MAX_SPOUSE_GAP_YEARS)
        spouse = self._add(
            not self.female[person], None, self.level[person], self._day_in_year(year), self.tree[person]
        )
        self.spouse[person], self.spouse[spouse] = spouse, person
        return spouse

    def _add_parents(self, child: int) -> None:
        child_year = self._year(child)
        father_year = child_year - self._gap(MEAN_PARENT_AGE, 3, MIN_PARENT_AGE, MAX_PARENT_AGE)
        mother_year = father_year + self._gap(0, 2, -MAX_SPOUSE_GAP_YEARS, MAX_SPOUSE_GAP_YEARS)
        mother_year = min(max(mother_year, child_year - MAX_PARENT_AGE), child_year - MIN_PARENT_AGE)
        level, tree = self.level[child] - 1, self.tree[child]
        father = self._add(False, self.surname[child], level, self._day_in_year(father_year), tree)
        mother = self._add(True, None, level, self._day_in_year(mother_year), tree)
        self.spouse[father], self.spouse[mother] = mother, father
        self.father[child], self.mother[child] = father, mother
        self.children.setdefault(father, []).append(child)
        self.children.setdefault(mother, []).append(child)

    def _child_dob(self, father: int, mother: int) -> int:
        siblings = self.children.get(father, [])
        if siblings and self.rng.random() < TWIN_PROBABILITY:
            return self.dob[self.rng.choice(siblings)]
        older, younger = sorted((self.dob[father], self.dob[mother]))
        low = younger + round(MIN_PARENT_AGE * DAYS_PER_YEAR)
        high = older + round(MAX_PARENT_AGE * DAYS_PER_YEAR)
        mean = younger + MEAN_PARENT_AGE * DAYS_PER_YEAR
        taken = [self.dob[sibling] for sibling in siblings]

        def free(day: int) -> bool:
            return low <= day <= high and all(abs(day - other) >= MIN_SIBLING_GAP_DAYS for other in taken)

        for _ in range(100):
            day = round(self.rng.gauss(mean, 3 * DAYS_PER_YEAR))
            if free(day):
                return day
        # The window spans at least 17 years and at most five siblings block 600 days each.
        candidates = [day for day in range(low, high + 1, 7) if free(day)]
        return self.rng.choice(candidates) if candidates else low

    def _add_child(self, person: int) -> None:
        spouse = self.spouse[person] if self.spouse[person] >= 0 else self._add_spouse(person)
        father, mother = (spouse, person) if self.female[person] else (person, spouse)
        child = self._add(
            self.rng.random() < 0.5,
            self.surname[father],
            self.level[person] + 1,
            self._child_dob(father, mother),
            self.tree[person],
        )
        self.father[child], self.mother[child] = father, mother
        self.children.setdefault(father, []).append(child)
        self.children.setdefault(mother, []).append(child)

    def grow(self, target: int, tree: int) -> int:
        """Add one family tree of at most `target` people; returns how many it got."""
        config, rng = self.config, self.rng
        self.children = {}
        year = rng.randint(FIRST_FOUNDER_YEAR, LAST_FOUNDER_YEAR)
        first = self._add(rng.random() < 0.5, None, 0, self._day_in_year(year), tree)
        members = [first]
        lowest = highest = 0
        for _ in range(10 * target):
            if len(members) >= target:
                break
            person = members[rng.randrange(len(members))]
            room = target - len(members)
            span = highest - lowest
            level = self.level[person]
            can_parents = (
                self.father[person] < 0 and room >= 2 and (level > lowest or span < config.tree_depth)
            )
            can_child = (
                len(self.children.get(person, ())) < config.max_children
                and room >= (1 if self.spouse[person] >= 0 else 2)
                and (level < highest or span < config.tree_depth)
            )
            if can_parents and can_child:
                can_parents = rng.random() < 0.5
                can_child = not can_parents
            before = len(self.names)
            if can_child:
                self._add_child(person)
                highest = max(highest, level + 1)
            elif can_parents:
                self._add_parents(person)
                lowest = min(lowest, level - 1)
            members.extend(range(before, len(self.names)))
        return len(members)


def _friendships(size: int, k: float, rng: np.random.Generator) -> np.ndarray:
    """An Erdos-Renyi G(n, p = k / n) graph: a binomial number of edges, drawn uniformly without repeats.

    Pairs are drawn in rounds until `wanted` distinct ones have come; the graph is the first `wanted`
    distinct pairs in draw order, sorted. A pair is kept as one int64 key, a * size + b (a < b), whose
    order is the pairs' order.
    """
    if size < 2 or k <= 0:
        return np.zeros((0, 2), dtype=np.int32)
    p = min(k / size, 1.0)
    pairs_total = size * (size - 1) // 2
    wanted = int(rng.binomial(pairs_total, p))
    if wanted == 0:
        return np.zeros((0, 2), dtype=np.int32)
    rounds: list[np.ndarray] = []
    distinct = 0
    while distinct < wanted:
        draw = max(2 * (wanted - distinct), 16)
        a = rng.integers(0, size, draw)
        b = rng.integers(0, size, draw)
        keep = a != b
        rounds.append(np.minimum(a, b)[keep] * size + np.maximum(a, b)[keep])
        keys = np.concatenate(rounds)
        ordered = np.sort(keys)
        new_value = np.concatenate(([True], ordered[1:] != ordered[:-1]))
        distinct = int(np.count_nonzero(new_value))
    chosen = _first_distinct(keys, ordered, new_value, wanted)
    return np.stack([chosen // size, chosen % size], axis=1).astype(np.int32)


def _first_distinct(keys: np.ndarray, ordered: np.ndarray, new_value: np.ndarray, wanted: int) -> np.ndarray:
    """The first WANTED distinct values of KEYS in order of first appearance, sorted. ORDERED is KEYS
    sorted and NEW_VALUE marks where a value starts in it.

    A repeated key is rare in a sparse graph, so only the positions of repeated values are looked at
    one by one to find which appearance of a value comes first.
    """
    first = np.ones(len(keys), dtype=bool)  # whether a position holds its value's first appearance
    repeated = ordered[1:][~new_value[1:]]
    if len(repeated):
        at = np.flatnonzero(np.isin(keys, repeated))
        seen: set[int] = set()
        for position, key in zip(at.tolist(), keys[at].tolist(), strict=True):
            first[position] = key not in seen
            seen.add(key)
    end = int(np.searchsorted(np.cumsum(first), wanted)) + 1  # the prefix that holds WANTED values
    if end == len(keys):
        return ordered[new_value]
    prefix = np.sort(keys[:end])
    return prefix[np.concatenate(([True], prefix[1:] != prefix[:-1]))]


def generate_universe(
    config: PhantomConfig,
    vocabulary: Vocabulary,
    progress: Callable[[str, int, int], None] | None = None,
) -> Universe:
    """Build a world of exactly `config.n` people from `config.seed`; `progress(stage, done, total)`."""
    streams = np.random.SeedSequence(config.seed).spawn(3)
    tree_rng = random.Random(int(streams[0].generate_state(1)[0]))
    builder = _TreeBuilder(config, vocabulary, tree_rng)
    remaining, tree = config.n, 0
    while remaining > 0:
        remaining -= builder.grow(min(config.tree_size, remaining), tree)
        tree += 1
        if progress is not None and tree % 1000 == 0:
            progress("world", config.n - remaining, config.n)
    if progress is not None:
        progress("world", config.n, config.n)
    size = len(builder.names)
    attribute_rng = np.random.default_rng(streams[1])
    return Universe(
        names=builder.names,
        female=np.array(builder.female, dtype=bool),
        father=np.array(builder.father, dtype=np.int32),
        mother=np.array(builder.mother, dtype=np.int32),
        dob=np.array(builder.dob, dtype=np.int32),
        occupation=attribute_rng.integers(0, len(vocabulary.occupations), size).astype(np.int32),
        hobby=attribute_rng.integers(0, len(vocabulary.hobbies), size).astype(np.int32),
        friendships=_friendships(size, config.friendship_k, np.random.default_rng(streams[2])),
        tree=np.array(builder.tree, dtype=np.int32),
        vocabulary=vocabulary,
    )

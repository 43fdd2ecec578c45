"""Every answer, and every hop's people, checked against SWI-Prolog running tests/oracle/family.pl.

The oracle runs each question's logical form (its Prolog goals) as one conjunction: the distinct values
of the answer variable must equal the answers, and every person on some solution path must be in the
evidence of the hop that passes through them. Each hop's sub-question is a prefix of the goals, and
its answers must equal the prefix's. Universes are small because Prolog enumerates every path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

if os.environ.get("IRBGEN_REQUIRE_ORACLE"):
    import pyswip  # CI sets IRBGEN_REQUIRE_ORACLE so a missing Prolog fails instead of skipping
else:
    pyswip = pytest.importorskip("pyswip", reason="the oracle needs pyswip and SWI-Prolog (swi-prolog-nox)")

from irbgen.builds.phantom import build_phantom  # noqa: E402
from irbgen.phantom.articles import document_ids  # noqa: E402
from irbgen.phantom.config import PhantomConfig  # noqa: E402
from irbgen.phantom.relations import ATTRIBUTES, RELATIONS  # noqa: E402
from irbgen.phantom.vocabulary import load_vocabulary  # noqa: E402

RULES = Path(__file__).parent / "oracle" / "family.pl"


def _facts(universe) -> str:
    names, lines = universe.names, []
    dob = universe.dob_text()
    vocabulary = universe.vocabulary
    for person, name in enumerate(names):
        for parent in (universe.father[person], universe.mother[person]):
            if parent >= 0:
                lines.append(f'parent("{name}", "{names[parent]}").')
        lines.append(f'gender("{name}", "{"female" if universe.female[person] else "male"}").')
        lines.append(f'dob("{name}", "{dob[person]}").')
        lines.append(f'job("{name}", "{vocabulary.occupations[universe.occupation[person]]}").')
        lines.append(f'hobby("{name}", "{vocabulary.hobbies[universe.hobby[person]]}").')
    for a, b in universe.friendships.tolist():
        lines.append(f'friend_("{names[a]}", "{names[b]}").')
    return "\n".join(sorted(lines)) + "\n"


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


# Solve once and sort (so deduplicate) each variable's values in Prolog: converting every solution to
# Python, not the search, was the cost. Only Sets comes back bound.
DISTINCT_COLUMNS = """
distinct_columns(Vars, Goal, Sets) :-
    findall(Vars, Goal, All), length(Vars, N), numlist(1, N, Positions),
    maplist(column(All), Positions, Sets).
column(All, Position, Sorted) :- findall(X, (member(T, All), nth1(Position, T, X)), Xs), sort(Xs, Sorted).
"""


def _distinct(prolog, goals: list[str], variables: list[str]) -> list[list[str]]:
    """Distinct values of each variable over all solutions of the conjunction of `goals`."""
    query = f"distinct_columns([{', '.join(variables)}], ({', '.join(goals)}), Sets)"
    sets = list(prolog.query(query, maxresult=1))[0]["Sets"]
    return [sorted({_text(value) for value in column}) for column in sets]


def _sorted(values: list[str], numeric: bool) -> list[str]:
    return sorted(values, key=int) if numeric else sorted(values)


def _start_name(goal: str) -> str:
    return re.search(r'"([^"]+)"', goal).group(1)


def _output(goal: str) -> str:
    """The variable a goal binds: its last variable (a Y, Answer or Count)."""
    return re.findall(r"\b(Y\d+|Answer|Count)\b", goal)[-1]


def _load(tmp_path: Path, universe):
    prolog = pyswip.Prolog()
    # Each pyswip Prolog shares one engine: wipe the previous world's facts before loading this one.
    for predicate in ("parent/2", "gender/2", "friend_/2", "dob/2", "job/2", "hobby/2"):
        list(prolog.query(f"retractall({predicate.split('/')[0]}(_, _))"))
    facts = tmp_path / "facts.pl"
    facts.write_text(_facts(universe), encoding="utf-8")
    prolog.consult(str(RULES))
    helpers = tmp_path / "distinct_columns.pl"
    helpers.write_text(DISTINCT_COLUMNS, encoding="utf-8")
    prolog.consult(str(helpers))
    list(prolog.query(f"load_files('{facts.as_posix()}', [redefine_module(false)])"))
    return prolog


@pytest.mark.parametrize(
    ("n", "seed", "tree_size", "friendship_k"),
    [
        (24, 1, 24, 2.0),
        (30, 4, 30, 2.0),
        (50, 5, 25, 2.0),
        (60, 3, 30, 1.5),
        (80, 9, 40, 1.0),
        (100, 11, 50, 3.0),
    ],
)
def test_answers_and_hops_match_prolog(tmp_path, n, seed, tree_size, friendship_k):
    config = PhantomConfig(
        n=n, seed=seed, tree_size=tree_size, friendship_k=friendship_k, depth=20, questions_per_template=3
    )
    build = build_phantom(config, load_vocabulary())
    prolog = _load(tmp_path, build.universe)
    doc_of = dict(zip(build.universe.names, document_ids(build.universe.size), strict=True))
    checked = 0
    for sample in build.samples:
        goals = sample.provenance.logical_form
        assert len(goals) == len(sample.chain) == sample.hops
        outputs = [_output(goal) for goal in goals]
        numeric = outputs[-1] == "Count"
        # The whole question: final answers, and who lies on some path to them.
        on_path = _distinct(prolog, goals, outputs)
        assert _sorted(on_path[-1], numeric) == _sorted(sample.answers, numeric), sample.question
        # Each hop's sub-question is a prefix of the goals; its answers are the prefix's answers.
        for position, hop in enumerate(sample.chain):
            prefix_numeric = numeric and position == len(goals) - 1
            expected = _distinct(prolog, goals[: position + 1], [outputs[position]])[0]
            assert _sorted(hop.answers, prefix_numeric) == _sorted(expected, prefix_numeric), hop.question
        # A hop's evidence holds the articles of everyone on a path through it; a one-article relation
        # needs exactly the people on both of its ends.
        start = [] if goals[0].startswith(tuple(ATTRIBUTES)) else [_start_name(goals[0])]
        people = [start] + on_path
        for position, hop in enumerate(sample.chain):
            if hop.operation not in ("lookup", "relation"):
                continue
            ends = {doc_of[name] for name in people[position] + people[position + 1]}
            assert ends <= set(hop.evidence), hop.question
            if hop.operation == "relation" and RELATIONS[hop.predicate].weight == 1:
                assert set(hop.evidence) == ends, hop.question
        checked += 1
    assert checked == 50 * 3  # depth 20 gives 50 templates

"""Every answer, and every hop's people, checked against SWI-Prolog running tests/oracle/family.pl.

The oracle runs each question's logical form (its Prolog goals) as one conjunction and collects the
distinct values of every variable over all solutions: the final variable must equal the answers, and
each intermediate variable must equal the people irbgen lists for that hop (those on some path to an
answer). Universes are small because Prolog enumerates every path.
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

from irbgen.phantom.build import build_phantom  # noqa: E402
from irbgen.phantom.config import PhantomConfig  # noqa: E402
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


def _oracle(prolog, goals: list[str], variables: list[str]) -> dict[str, list[str]]:
    body = ", ".join(goals)
    result = {}
    for variable in variables:
        rows = list(prolog.query(f"findall(V, ({body}, V = {variable}), L0), sort(L0, L)", maxresult=1))
        result[variable] = sorted(_text(value) for value in rows[0]["L"])
    return result


def _load(tmp_path: Path, universe):
    prolog = pyswip.Prolog()
    # Each pyswip Prolog shares one engine: wipe the previous world's facts before loading this one.
    for predicate in ("parent/2", "gender/2", "friend_/2", "dob/2", "job/2", "hobby/2"):
        list(prolog.query(f"retractall({predicate.split('/')[0]}(_, _))"))
    facts = tmp_path / "facts.pl"
    facts.write_text(_facts(universe), encoding="utf-8")
    prolog.consult(str(RULES))
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
    checked = 0
    for sample in build.samples:
        goals = sample.provenance.logical_form
        answer = sample.provenance.query_plan[-1]["variable"]
        hop_variables = sorted(set(re.findall(r"\bY\d+\b", " ".join(goals))), key=lambda v: int(v[1:]))
        found = _oracle(prolog, goals, hop_variables + ([answer] if answer not in hop_variables else []))
        expected_answers = sorted(sample.answers)
        if answer == "Count":
            assert sorted(found[answer], key=int) == sorted(expected_answers, key=int), sample.question
        else:
            assert found[answer] == expected_answers, sample.question
        people_hops = [hop for hop in sample.chain if hop.operation in ("lookup", "relation")]
        assert len(people_hops) == len(hop_variables), sample.question
        for hop, variable in zip(people_hops, hop_variables, strict=True):
            assert found[variable] == hop.answers, f"{sample.question} ({variable})"
        checked += 1
    assert checked == 50 * 3  # depth 20 gives 50 templates

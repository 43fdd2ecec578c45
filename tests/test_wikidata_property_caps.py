"""Property caps in Wikidata chain sampling, and the spread of properties and subject kinds in the card
and in `irbgen compare`."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main
from irbgen.eval.compare import compare_benchmarks, render_table
from irbgen.spread import OTHER, top_rows
from irbgen.wikidata.chains import NO_PROPERTY_CAPS, PropertyCaps, over_caps, sample_chains
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import Newness, make_popularity
from irbgen.wikidata.records import Statement, Value, WikidataEntity
from irbgen.wikidata.stages import subject_kind
from irbgen.wikidata.vocabulary import load_trivial
from tests.test_wikidata_chains import EXHAUSTIVE, edge, literal, make_kb

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "wikidata"


def sample(kb, property_caps, **options):
    return sample_chains(
        kb,
        popularity=make_popularity("sitelinks", kb),
        threshold=10,
        newness=Newness(None),
        rng=random.Random(0),
        caps=EXHAUSTIVE,
        property_caps=property_caps,
        **options,
    )


def properties(chain) -> list[str]:
    return [hop.statement.property for hop in chain.hops]


# --- sampling on hand-made bases --------------------------------------------------------------------------


def one_hop_kb():
    """40 items with P1; every fourth also has a property of its own."""
    statements = [literal(f"Q{i}", "P1", f"v{i}") for i in range(1, 41)]
    statements += [literal(f"Q{i}", f"P{100 + i}", f"w{i}") for i in range(4, 41, 4)]
    return make_kb(statements)


def test_no_property_ends_more_than_its_share_of_the_chains_asked_for():
    kb = one_hop_kb()
    uncapped = sample(kb, NO_PROPERTY_CAPS, hops=(1, 1), per_hop=20)
    assert Counter(properties(chain)[-1] for chain in uncapped)["P1"] > 5  # the cap has something to do
    capped = sample(kb, PropertyCaps(share=0.25), hops=(1, 1), per_hop=20)
    finals = Counter(properties(chain)[-1] for chain in capped)
    assert finals["P1"] == 5  # 25% of the 20 chains asked for
    assert len(capped) == 15 and max(finals.values()) <= 5  # the ten other properties fill in
    assert capped == sample(kb, PropertyCaps(share=0.25), hops=(1, 1), per_hop=20)  # seeded


def test_a_bridge_property_takes_at_most_its_share_of_all_hops():
    # A_i -P1-> B_i -P(200+i)-> literal: every 2-hop chain bridges over P1
    statements = [edge(f"Q{i}", "P1", f"Q{100 + i}") for i in range(1, 21)]
    statements += [literal(f"Q{100 + i}", f"P{200 + i}", f"x{i}") for i in range(1, 21)]
    kb = make_kb(statements)
    assert len(sample(kb, NO_PROPERTY_CAPS, hops=(2, 2), per_hop=10)) == 10
    capped = sample(kb, PropertyCaps(share=0.25), hops=(2, 2), per_hop=10)
    assert len(capped) == 5  # 25% of the 20 hops asked for
    assert all(properties(chain)[0] == "P1" for chain in capped)


def test_trivial_properties_are_never_asked_by_default():
    assert {"P21", "P31"} <= load_trivial()
    statements = [edge(f"Q{i}", "P21", "Q6581097") for i in range(1, 11)]
    statements += [literal(f"Q{i}", "P569", f"d{i}") for i in range(1, 11)]
    kb = make_kb(statements)
    uncapped = sample(kb, NO_PROPERTY_CAPS, hops=(1, 1), per_hop=20)
    assert any("P21" in properties(chain) for chain in uncapped)
    capped = sample(kb, PropertyCaps(), hops=(1, 1), per_hop=20)
    assert capped and not any("P21" in properties(chain) for chain in capped)
    allowed = sample(kb, PropertyCaps(share=1.0, trivial_share=0.1), hops=(1, 1), per_hop=20)
    assert Counter(properties(chain)[-1] for chain in allowed)["P21"] == 2  # 10% of 20 hops


def test_over_caps_leaves_no_property_over_its_share_of_the_chains_left():
    chains = sample(one_hop_kb(), NO_PROPERTY_CAPS, hops=(1, 1), per_hop=40)
    caps = PropertyCaps(share=0.25)
    dropped = over_caps(chains, caps, seed=3)
    assert set(dropped.values()) == {"P1"}
    left = [chain for chain in chains if chain.id not in dropped]
    finals = Counter(properties(chain)[-1] for chain in left)
    assert finals["P1"] == math.floor(0.25 * len(left))
    assert finals["P1"] + 1 > 0.25 * (len(left) + 1)  # no more was dropped than needed
    assert over_caps(chains, caps, seed=3) == dropped
    assert over_caps(left, caps, seed=3) == {}


def test_bad_shares_are_refused_naming_the_option(tmp_path):
    result = CliRunner().invoke(main, [*BUILD, "--property-share", "1.5", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "property_share" in result.output or "property-share" in result.output
    assert "Traceback" not in result.output


# --- the bundled sample: caps, card and compare -----------------------------------------------------------

BUILD = [
    "build", "--source", "wikidata-dump", "--offline", "--quiet",
    "--dump", str(SAMPLES / "wikidata-new.json.bz2"),
    "--old-dump", str(SAMPLES / "wikidata-old.json.gz"),
]  # fmt: skip


SHARE = 0.15  # tighter than the default 0.25: uncapped, population ends 25% of the sample's questions


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("caps") / "run"
    result = CliRunner().invoke(main, [*BUILD, "--property-share", str(SHARE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "benchmark"


def samples(bench: Path) -> list[dict]:
    return [json.loads(line) for line in (bench / "samples.jsonl").read_text().splitlines()]


def test_the_sample_build_honours_the_caps(bench):
    rows = samples(bench)
    props = [row["attributes"]["extra"]["properties"] for row in rows]
    finals = Counter(p[-1] for p in props)
    uses = Counter(prop for p in props for prop in p)
    assert max(finals.values()) <= max(1, math.floor(SHARE * len(rows)))
    assert max(uses.values()) <= max(1, math.floor(SHARE * sum(uses.values())))
    assert not set(uses) & load_trivial()
    assert {len(p) for p in props} == {1, 2, 3, 4}


def card_table(card: str, heading: str) -> list[tuple[str, str]]:
    section = card.split(f"#### {heading}\n", 1)[1].strip().split("\n\n")[0]
    return [tuple(re.fullmatch(r"\| (.*) \| (.*) \|", line).groups()) for line in section.splitlines()[2:]]


def expected(counts: Counter, total: int) -> list[tuple[str, str]]:
    return [(value, f"{n} ({100 * n / total:.1f}%)") for value, n in top_rows(counts)]


def test_the_card_lists_properties_asked_and_subject_kinds(bench):
    rows = samples(bench)
    card = (bench / "README.md").read_text()
    assert "### Properties and entity kinds" in card
    finals = Counter(row["chain"][-1]["predicate"] for row in rows)
    bridges = Counter(step["predicate"] for row in rows for step in row["chain"][:-1])
    kinds = Counter(row["attributes"]["extra"]["subject_kind"] for row in rows)
    assert card_table(card, "Final hop") == expected(finals, len(rows))
    assert card_table(card, "Bridges") == expected(bridges, sum(bridges.values()))
    assert card_table(card, "Subject kind") == expected(kinds, len(rows))
    assert card_table(card, "Final hop")[-1][0] == OTHER  # more than ten properties asked
    assert "human" in kinds  # a class the sample dump labels


def test_compare_shows_the_spread_side_by_side(bench, tmp_path):
    rows = samples(bench)
    result = compare_benchmarks([bench, bench], tmp_path / "cmp", bm25=False)
    profile = result["benchmarks"][0]["spread"]
    finals = Counter(row["chain"][-1]["predicate"] for row in rows)
    assert profile["final hop"] == {"total": len(rows), "counts": dict(top_rows(finals, top=len(finals)))}
    (top, count), *_ = top_rows(finals)
    table = render_table(result)
    line = next(line for line in table.splitlines() if line.startswith("top final hop"))
    assert line.count(f"{top} {100 * count / len(rows):.1f}% ({len(finals)} distinct)") == 2
    markdown = (tmp_path / "cmp" / "compare.md").read_text()
    for title in ("## Final-hop properties", "## Bridge properties", "## Subject kinds"):
        assert title in markdown
    share = f"{count} ({100 * count / len(rows):.1f}%)"
    assert f"| {top} | {share} | {share} |" in markdown


def test_a_subject_kind_is_a_word_never_a_bare_q_id():
    def item(qid, label, claims):
        statements = [Statement(head=qid, property=p, tail=Value(type="entity", id=t, text=t), rank="normal")
                      for p, t in claims]  # fmt: skip
        return WikidataEntity(id=qid, kind="item", label=label, statements=statements)

    kb = KnowledgeBase([
        item("Q1", "Ada Vell", [("P31", "Q5")]),  # human, whose class item the dump lacks
        item("Q2", "Vell Harbour", [("P31", "Q999"), ("P17", "Q3")]),  # an unlabelled class
        item("Q3", "Norland", [("P31", "Q6")]),
        item("Q6", "sovereign state", []),
        item("Q4", "Loose Item", []),
    ])  # fmt: skip
    assert [subject_kind(kb, q) for q in ("Q1", "Q2", "Q3", "Q4")] == [
        "person", "place", "sovereign state", "(none)"]  # fmt: skip

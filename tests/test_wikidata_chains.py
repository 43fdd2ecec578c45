"""Chain constraints (checked against brute-force definitions on random graphs), strata and quotas."""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from irbgen.errors import BadInputError
from irbgen.wikidata.chains import (
    EXHAUSTIVE,
    NO_PROPERTY_CAPS,
    SamplingCaps,
    allocate_quotas,
    chain_id,
    has_shortcut,
    has_unique_answers,
    is_acyclic,
    is_connected,
    is_subchain,
    sample_chains,
    stratum,
    violations,
)
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import (
    STRATA,
    Newness,
    label_hop,
    make_popularity,
    parse_mix,
    possible_strata,
    stratum_weight,
)
from irbgen.wikidata.records import Chain, Statement, Value, WikidataEntity

# --- hand-made knowledge bases --------------------------------------------------------------------------


def edge(head: str, prop: str, tail: str) -> Statement:
    return Statement(head=head, property=prop, tail=Value(type="entity", id=tail, text=tail), rank="normal")


def literal(head: str, prop: str, text: str) -> Statement:
    value = Value(type="quantity", text=text, raw=text)  # a unit-less quantity: an answer on any property
    return Statement(head=head, property=prop, tail=value, rank="normal")


def make_kb(
    statements: list[Statement],
    sitelinks: dict[str, int] | None = None,
    properties: dict[str, str] | None = None,
    missing: frozenset[str] = frozenset(),
) -> KnowledgeBase:
    """Items for every head and entity tail (except `missing`), properties with the given datatypes."""
    sitelinks = sitelinks or {}
    ids = {s.head for s in statements} | {s.tail.id for s in statements if s.tail.id}
    items = [
        WikidataEntity(
            id=qid,
            kind="item",
            label=f"label {qid}",
            sitelinks=sitelinks.get(qid, 0),
            statements=[s for s in statements if s.head == qid],
        )
        for qid in sorted(ids - missing)
    ]
    props = [
        WikidataEntity(id=pid, kind="property", label=f"prop {pid}", datatype=datatype)
        for pid, datatype in sorted((properties or {}).items())
    ]
    return KnowledgeBase([*items, *props])


def sample(
    kb: KnowledgeBase, old: KnowledgeBase | None = None, seed: int = 0, threshold: float = 10, **options
):
    options.setdefault("caps", EXHAUSTIVE)
    options.setdefault("property_caps", NO_PROPERTY_CAPS)
    options.setdefault("per_hop", 10**6)
    return sample_chains(
        kb,
        popularity=make_popularity("sitelinks", kb),
        threshold=threshold,
        newness=Newness(old),
        rng=random.Random(seed),
        **options,
    )


def as_chain(kb: KnowledgeBase, statements: list[Statement]) -> Chain:
    popularity = make_popularity("sitelinks", kb)
    return Chain(id=chain_id(statements), hops=[label_hop(s, popularity, 10, None) for s in statements])


def ids(chains: list[Chain]) -> list[str]:
    return [chain.id for chain in chains]


# --- brute-force definitions, written apart from the module's ---------------------------------------


def bf_connected(path: list[Statement]) -> bool:
    return bool(path) and all(
        path[i].tail.type == "entity" and path[i].tail.id == path[i + 1].head for i in range(len(path) - 1)
    )


def bf_acyclic(path: list[Statement]) -> bool:
    entities = [path[0].head] + [s.tail.id for s in path if s.tail.type == "entity"]
    return max(Counter(entities).values()) == 1


def bf_unique(path: list[Statement], edges: list[Statement]) -> bool:
    return all(
        len({e.tail.key for e in edges if (e.head, e.property) == (s.head, s.property)}) == 1 for s in path
    )


def bf_shortcut(path: list[Statement], edges: list[Statement]) -> bool:
    nodes = [path[0].head] + [s.tail.key for s in path]
    return any(
        e.head == nodes[i] and e.tail.key == nodes[j]
        for e in edges
        for i in range(len(nodes))
        for j in range(i + 2, len(nodes))
    )


def bf_subchain(inner: list[str], outer: list[str]) -> bool:
    return "\x00" + "\x00".join(inner) + "\x00" in "\x00" + "\x00".join(outer) + "\x00"


def bf_valid_chains(kb: KnowledgeBase, edges: list[Statement], length: int) -> set[str]:
    """Every valid chain of that length, by trying every sequence of distinct-position statements."""
    usable = [
        e
        for e in edges
        if e.property != "P31" and (e.tail.type != "entity" or kb.entities.get(e.tail.id) is not None)
    ]
    found = set()
    for path in itertools.product(usable, repeat=length):
        path = list(path)
        if (
            bf_connected(path)
            and bf_acyclic(path)
            and bf_unique(path, edges)
            and not bf_shortcut(path, edges)
        ):
            found.add(chain_id(path))
    return found


# --- random graphs --------------------------------------------------------------------------------------

ENTITY_IDS = [f"Q{i}" for i in range(1, 9)]
PROPERTY_IDS = [f"P{i}" for i in range(1, 7)] + ["P31"]


@st.composite
def graphs(draw, max_edges: int = 16):
    """A small KB (a random path plus random edges; unknown tails, P31, literals) and its edge list."""
    tails = st.one_of(
        st.sampled_from(ENTITY_IDS), st.sampled_from(ENTITY_IDS), st.sampled_from(["Q99", "lit:a", "lit:b"])
    )
    backbone = draw(st.permutations(ENTITY_IDS))[: draw(st.integers(0, 5))]
    triples = [
        (h, draw(st.sampled_from(PROPERTY_IDS)), t) for h, t in zip(backbone, backbone[1:], strict=False)
    ]
    triples += draw(
        st.lists(
            st.tuples(st.sampled_from(ENTITY_IDS), st.sampled_from(PROPERTY_IDS), tails), max_size=max_edges
        )
    )
    edges = [literal(h, p, t[4:]) if t.startswith("lit:") else edge(h, p, t) for h, p, t in triples]
    edges = list({e.key: e for e in edges}.values())
    sitelinks = {qid: draw(st.integers(0, 20)) for qid in ENTITY_IDS}
    old_edges = [e for e in edges if draw(st.booleans())]
    kb = make_kb(edges, sitelinks, missing=frozenset({"Q99"}))
    return kb, edges, make_kb(old_edges, missing=frozenset({"Q99"}))


def assert_valid_output(kb: KnowledgeBase, chains: list[Chain], hop_counts: range, per_hop: int) -> None:
    assert len(set(ids(chains))) == len(chains)
    for chain in chains:
        path = [hop.statement for hop in chain.hops]
        assert len(path) in hop_counts
        assert chain.id == chain_id(path)
        assert violations(chain, kb) == []
        assert all(s.tail.type != "entity" or s.tail.id in kb.entities for s in path)
    per_count = Counter(len(chain.hops) for chain in chains)
    assert all(count <= per_hop for count in per_count.values())
    keys = {chain.id: [hop.statement.key for hop in chain.hops] for chain in chains}
    for a, b in itertools.permutations(keys, 2):
        assert not bf_subchain(keys[a], keys[b]), (a, b)


FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(graphs(), st.integers(1, 6), st.integers(0, 10**6))
def test_every_sampled_chain_meets_every_constraint(graph, per_hop, seed):
    kb, _, old = graph
    chains = sample(kb, old, seed=seed, hops=(1, 4), per_hop=per_hop, caps=SamplingCaps(max_per_seed=1))
    assert_valid_output(kb, chains, range(1, 5), per_hop)


@FAST
@given(
    graphs(),
    st.dictionaries(st.sampled_from(STRATA), st.integers(0, 3)),
    st.integers(1, 4),
    st.integers(0, 99),
)
def test_only_weighted_strata_are_sampled(graph, weights, per_hop, seed):
    kb, _, old = graph
    if not any(weights.values()):
        return
    use_old = any(w for name, w in weights.items() if not name.endswith("-unknown"))
    chains = sample(kb, old if use_old else None, seed=seed, hops=(1, 3), per_hop=per_hop, mix=weights)
    assert_valid_output(kb, chains, range(1, 4), per_hop)
    for length in (1, 2, 3):
        found = Counter(stratum(chain) for chain in chains if len(chain.hops) == length)
        assert all(weights.get(name, 0) > 0 for name in found)


@FAST
@given(graphs(), st.integers(1, 3), st.integers(0, 10**6))
def test_exhaustive_sampling_of_one_hop_count_finds_exactly_the_brute_force_chains(graph, length, seed):
    kb, edges, old = graph
    chains = sample(kb, old if seed % 2 else None, seed=seed, hops=(length, length))
    assert set(ids(chains)) == bf_valid_chains(kb, edges, length)


@FAST
@given(graphs(), st.lists(st.integers(0, 100), min_size=1, max_size=4))
def test_checkers_agree_with_brute_force_on_arbitrary_paths(graph, picks):
    kb, edges, _ = graph
    if not edges:
        return
    path = [edges[pick % len(edges)] for pick in picks]
    chain = as_chain(kb, path)
    assert is_connected(chain) == bf_connected(path)
    assert is_acyclic(chain) == bf_acyclic(path)
    assert has_unique_answers(chain, kb) == bf_unique(path, edges)
    if bf_connected(path):
        assert has_shortcut(chain, kb) == bf_shortcut(path, edges)


@FAST
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=3), st.lists(st.integers(0, 3), min_size=1, max_size=5)
)
def test_is_subchain_agrees_with_brute_force(inner, outer):
    pool = [edge(f"Q{i}", "P1", f"Q{i + 1}") for i in range(4)]
    kb = make_kb(pool)
    a, b = as_chain(kb, [pool[i] for i in inner]), as_chain(kb, [pool[i] for i in outer])
    assert is_subchain(a, b) == bf_subchain([pool[i].key for i in inner], [pool[i].key for i in outer])


# --- each constraint on a hand-made graph ---------------------------------------------------------------


def test_connectivity_and_literal_answers_only_at_the_end():
    kb = make_kb([edge("Q1", "P1", "Q2"), literal("Q2", "P2", "blue"), literal("Q1", "P3", "x")])
    chains = sample(kb, hops=(1, 3))
    assert ids(chains) == ["c:Q1>P3>quantity:x", "c:Q1>P1>Q2>P2>quantity:blue"]
    assert not is_connected(as_chain(kb, [literal("Q1", "P3", "x"), literal("Q2", "P2", "blue")]))
    assert not is_connected(Chain(id="c:", hops=[]))


def test_chain_ids_are_readable_and_free_of_whitespace():
    path = [edge("Q1", "P27", "Q2"), literal("Q2", "P1448", "Kingdom of\tAlder\u3000mark 100%")]
    assert chain_id(path) == "c:Q1>P27>Q2>P1448>quantity:Kingdom%20of%09Alder%E3%80%80mark%20100%25"
    assert chain_id(path[:1]) == "c:Q1>P27>Q2"


def test_acyclicity_forbids_coming_back():
    kb = make_kb([edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q1")])
    assert [c for c in sample(kb, hops=(2, 2))] == []
    assert not is_acyclic(as_chain(kb, [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q1")]))


def test_uniqueness_skips_a_head_property_with_two_tails():
    kb = make_kb([edge("Q1", "P1", "Q2"), edge("Q1", "P1", "Q3"), edge("Q1", "P2", "Q4")])
    assert ids(sample(kb, hops=(1, 1))) == ["c:Q1>P2>Q4"]
    assert not has_unique_answers(as_chain(kb, [edge("Q1", "P1", "Q2")]), kb)


def test_a_value_repeated_with_other_qualifiers_is_one_hop():
    first = edge("Q1", "P39", "Q2").model_copy(update={"qualifiers": {"P580": ["2001"]}})
    again = edge("Q1", "P39", "Q2").model_copy(update={"qualifiers": {"P580": ["2009"]}})
    kb = make_kb([first, again, edge("Q2", "P17", "Q3")])
    assert ids(sample(kb, hops=(1, 2))) == ["c:Q1>P39>Q2>P17>Q3"]  # once, not twice
    assert ids(sample(kb, hops=(1, 1))) == ["c:Q1>P39>Q2", "c:Q2>P17>Q3"]


def test_a_direct_link_to_a_later_node_is_a_shortcut_but_a_backward_one_is_not():
    path = [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3")]
    shortcut = make_kb([*path, edge("Q1", "P9", "Q3")])
    backward = make_kb([*path, edge("Q3", "P9", "Q1")])
    assert sample(shortcut, hops=(2, 2)) == []
    assert has_shortcut(as_chain(shortcut, path), shortcut)
    assert chain_id(path) in ids(sample(backward, hops=(2, 2)))


def test_a_shortcut_from_a_middle_entity_or_to_the_literal_answer_counts_too():
    path = [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3"), literal("Q3", "P3", "red")]
    middle = make_kb([*path, edge("Q2", "P8", "Q9"), literal("Q2", "P9", "red")])
    assert has_shortcut(as_chain(middle, path), middle)
    assert chain_id(path) not in ids(sample(middle, hops=(3, 3)))


def test_the_shortcut_check_looks_at_excluded_properties_too():
    path = [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3")]
    kb = make_kb([*path, edge("Q1", "P31", "Q3")])
    assert sample(kb, hops=(2, 2)) == []


def test_excluded_properties_datatypes_and_unknown_tails_are_skipped():
    statements = [
        edge("Q1", "P31", "Q2"),  # default excluded id
        literal("Q1", "P214", "113230702"),  # external-id datatype
        literal("Q1", "P2", "fine"),
        edge("Q1", "P3", "Q404"),  # tail not in the base
        Statement(head="Q1", property="P4", tail=Value(type="globecoordinate", text="1,2"), rank="normal"),
    ]
    kb = make_kb(statements, properties={"P214": "external-id", "P2": "string"}, missing=frozenset({"Q404"}))
    assert ids(sample(kb, hops=(1, 1))) == ["c:Q1>P2>quantity:fine"]
    allowed = sample(kb, hops=(1, 1), exclude_properties=frozenset(), exclude_datatypes=frozenset())
    # P31 stays out: irbgen/resources/wikidata/denied_properties.txt denies it whatever the caller excludes
    assert set(ids(allowed)) == {"c:Q1>P2>quantity:fine", "c:Q1>P214>quantity:113230702"}
    assert violations(as_chain(kb, [statements[0]]), kb) == ["excluded"]


# --- sub-chains -----------------------------------------------------------------------------------------


def test_longer_chains_win_over_their_sub_chains():
    path = [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3"), edge("Q3", "P3", "Q4")]
    kb = make_kb(path)
    assert ids(sample(kb, hops=(1, 3))) == [chain_id(path)]
    assert len(sample(kb, hops=(1, 2))) == 2  # the two 2-hop chains cover every 1-hop chain
    assert len(sample(kb, hops=(1, 1))) == 3


def test_shorter_hop_counts_fill_their_quota_around_the_chosen_chains():
    path = [edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3")]
    kb = make_kb([*path, literal("Q5", "P1", "a"), literal("Q6", "P1", "b")])
    chains = sample(kb, hops=(1, 2), per_hop=2)
    assert ids(chains) == ["c:Q5>P1>quantity:a", "c:Q6>P1>quantity:b", chain_id(path)]


# --- strata, mixes and quotas ---------------------------------------------------------------------------


def star_kb(popular: int, unpopular: int) -> KnowledgeBase:
    """Disjoint 1-hop facts: `popular` heads with 50 sitelinks, `unpopular` with none."""
    heads = [f"Q{i}" for i in range(1, popular + unpopular + 1)]
    return make_kb([literal(h, "P1", f"v{h}") for h in heads], {h: 50 for h in heads[:popular]})


def test_stratum_names_the_compositions():
    kb = make_kb([edge("Q1", "P1", "Q2"), edge("Q2", "P2", "Q3")], {"Q1": 50, "Q2": 50, "Q3": 1})
    old = make_kb([edge("Q1", "P1", "Q2")])
    (chain,) = sample(kb, old, hops=(2, 2))
    assert [hop.popular for hop in chain.hops] == [True, False]
    assert [hop.new for hop in chain.hops] == [False, True]
    assert stratum(chain) == "mixed-mixed"
    (unknown,) = sample(kb, hops=(2, 2))
    assert stratum(unknown) == "mixed-unknown"
    assert stratum(as_chain(kb, [edge("Q1", "P1", "Q2")])) == "popular-unknown"


def test_possible_strata():
    assert possible_strata(1, False) == ["popular-unknown", "unpopular-unknown"]
    assert len(possible_strata(3, True)) == 9 and "mixed-unknown" not in possible_strata(3, True)


def test_weights_split_each_hop_count():
    chains = sample(star_kb(20, 20), hops=(1, 1), per_hop=8, mix="popular=3,unpopular=1")
    assert Counter(stratum(c) for c in chains) == {"popular-unknown": 6, "unpopular-unknown": 2}


def test_default_weights_are_equal_over_the_strata_found_and_a_short_stratum_gives_way():
    chains = sample(star_kb(20, 20), hops=(1, 1), per_hop=10)
    assert Counter(stratum(c) for c in chains) == {"popular-unknown": 5, "unpopular-unknown": 5}
    chains = sample(star_kb(3, 20), hops=(1, 1), per_hop=10)
    assert Counter(stratum(c) for c in chains) == {"popular-unknown": 3, "unpopular-unknown": 7}


def test_newness_strata_with_an_old_dump():
    kb = star_kb(10, 10)
    old = make_kb([s for s in kb.statements if int(s.head[1:]) % 2 == 0])
    stats: Counter = Counter()
    chains = sample(kb, old, hops=(1, 1), per_hop=6, mix="unpopular-new=2,popular-old=1,*=0", stats=stats)
    assert Counter(stratum(c) for c in chains) == {"unpopular-new": 4, "popular-old": 2}
    assert stats["chains_1_hop:unpopular-new"] == 4 and stats["candidates_1_hop:unpopular-new"] == 5


def test_a_mix_that_no_chain_can_meet_is_bad_input():
    with pytest.raises(BadInputError, match="without an old dump"):
        sample(star_kb(2, 2), hops=(1, 2), mix="unpopular-new=1")


def test_per_hop_quota_is_respected_for_every_hop_count():
    chains = sample(random_kb(random.Random(3), 150, 600), hops=(1, 4), per_hop=7, caps=SamplingCaps())
    assert Counter(len(c.hops) for c in chains) == {1: 7, 2: 7, 3: 7, 4: 7}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("unpopular-new=2,popular-old=1,*=1", {"unpopular-new": 2, "popular-old": 1, "*": 1}),
        ("Unpopular=3, new=1", {"unpopular-*": 3, "*-new": 1}),
        ("*-*=1,mixed-mixed=0.5", {"*": 1, "mixed-mixed": 0.5}),
    ],
)
def test_parse_mix(text, expected):
    assert parse_mix(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("popular", "not name=weight"),
        ("=1", "not name=weight"),
        ("popular=1,", "not name=weight"),
        ("famous=1", "'famous' is not a stratum"),
        ("mixed=1", "ambiguous"),
        ("popular-fresh=1", "newness one of"),
        ("popular=lots", "'lots' of 'popular' is not a number"),
        ("popular=-1", "finite number >= 0"),
        ("popular=inf", "finite number >= 0"),
        ("popular=1,popular-*=2", "given twice"),
        ("popular=0,*=0", "every weight is 0"),
    ],
)
def test_parse_mix_rejects_bad_strings(text, message):
    with pytest.raises(BadInputError, match=message):
        parse_mix(text)


def test_the_most_specific_pattern_gives_the_weight():
    mix = parse_mix("popular-new=5,popular=4,new=3,*=2")
    assert [stratum_weight(mix, s) for s in ("popular-new", "popular-old", "mixed-new", "mixed-old")] == [
        5,
        4,
        3,
        2,
    ]
    assert stratum_weight(parse_mix("popular=1"), "unpopular-new") == 0
    assert stratum_weight(None, "unpopular-new") == 1


def test_allocate_quotas():
    plenty = {"a": 100, "b": 100, "c": 100}
    assert allocate_quotas(10, {"a": 1, "b": 1, "c": 1}, plenty) == {"a": 4, "b": 3, "c": 3}
    assert allocate_quotas(10, {"a": 3, "b": 1, "c": 0}, plenty) == {"a": 8, "b": 2}
    assert allocate_quotas(10, {"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 2, "c": 100}) == {
        "a": 1,
        "b": 2,
        "c": 7,
    }
    assert allocate_quotas(10, {"a": 1, "b": 1}, {"a": 2, "b": 3}) == {"a": 2, "b": 3}
    assert allocate_quotas(0, {"a": 1}, {"a": 3}) == {}


@given(
    st.integers(0, 50),
    st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 5), min_size=1),
    st.dictionaries(st.sampled_from("abcdef"), st.integers(0, 30)),
)
def test_allocated_quotas_fit_availability_and_fill_what_they_can(total, weights, available):
    quotas = allocate_quotas(total, weights, available)
    assert all(0 < quotas[s] <= available[s] and weights[s] > 0 for s in quotas)
    reachable = sum(available.get(s, 0) for s, w in weights.items() if w > 0)
    assert sum(quotas.values()) == min(total, reachable)


# --- determinism and bounded work -----------------------------------------------------------------------


def random_kb(rng: random.Random, items: int, edges: int) -> KnowledgeBase:
    """A sparse random graph with literals; sitelinks spread from 0 to 40."""
    ids_ = [f"Q{i}" for i in range(1, items + 1)]
    statements = {}
    for _ in range(edges):
        head, prop = rng.choice(ids_), f"P{rng.randint(1, 40)}"
        tail = rng.choice(ids_)
        s = literal(head, prop, f"v{rng.randint(0, 9)}") if rng.random() < 0.2 else edge(head, prop, tail)
        statements[s.key] = s
    return make_kb(list(statements.values()), {q: rng.randint(0, 40) for q in ids_})


def test_same_seed_same_chains_and_another_seed_other_chains():
    kb = random_kb(random.Random(7), 300, 1200)
    old = make_kb([s for s in kb.statements if hash(s.key) % 3] or kb.statements[:1])
    first = sample(kb, old, seed=1, hops=(1, 4), per_hop=10, caps=SamplingCaps())
    again = sample(kb, old, seed=1, hops=(1, 4), per_hop=10, caps=SamplingCaps())
    other = sample(kb, old, seed=2, hops=(1, 4), per_hop=10, caps=SamplingCaps())
    assert ids(first) == ids(again) and first == again
    assert ids(first) != ids(other)
    assert_valid_output(kb, first, range(1, 5), 10)


def test_work_is_bounded_by_the_caps():
    kb = random_kb(random.Random(11), 2000, 16000)
    stats: Counter = Counter()
    started = time.perf_counter()
    caps = SamplingCaps(max_expansions=3000, max_seed_expansions=100)
    chains = sample(kb, seed=5, hops=(1, 4), per_hop=10**4, caps=caps, stats=stats)
    assert time.perf_counter() - started < 10
    assert all(stats[f"expansions_{n}_hop"] <= 3000 for n in range(1, 5))
    assert stats["expansions_4_hop"] > 0 and chains
    assert_valid_output(kb, chains[:200], range(1, 5), 10**4)


def test_hops_and_per_hop_are_checked():
    kb = star_kb(1, 1)
    with pytest.raises(BadInputError, match="--hops"):
        sample(kb, hops=(0, 2))
    with pytest.raises(BadInputError, match="per-hop"):
        sample(kb, hops=(1, 1), per_hop=-1)
    assert len(sample(kb, hops=range(1, 2))) == 2

"""Masking criteria, single-hop targets and multi-hop chains, on hand-made facts and graphs."""

from __future__ import annotations

import random

import pytest

from irbgen.errors import BadInputError
from irbgen.irb.masking import (
    NodeIndex,
    contained_in_other_node,
    first_maskable,
    in_every_keypoint,
    is_atomic,
    is_named_entity,
    maskable_nodes,
    same_node,
    unique_for_relation,
    why_not_maskable,
)
from irbgen.irb.plans import multi_hop_plans, single_hop_plans
from irbgen.irb.records import Entity, Fact, GroundedKeypoint, KnowledgeGraph, Triple

LABELS = {
    "Person": "PERSON",
    "Date": "DATE",
    "Quantity": "QUANTITY",
    "Country": "GPE",
    "Location": "LOC",
    "Organization": "ORG",
}


def make_fact(fact_id: str, *texts: str, documents: tuple[list[str], ...] = ()) -> Fact:
    keypoints = [
        GroundedKeypoint(
            keypoint_id=f"{fact_id}.{i}", text=text, documents=documents[i] if documents else [f"d{fact_id}"]
        )
        for i, text in enumerate(texts)
    ]
    return Fact(id=fact_id, page_id=1, title="T", sentence=texts[0], keypoints=keypoints, citations=[])


def make_graph(fact_id: str, triples: list[tuple[str, str, str, str, str]], entities=None) -> KnowledgeGraph:
    """Triples as (head, head type, relation, tail, tail type); entities default to every node."""
    edges = [Triple(head=h, head_type=ht, relation=r, tail=t, tail_type=tt) for h, ht, r, t, tt in triples]
    if entities is None:
        nodes = {(e.head, e.head_type) for e in edges} | {(e.tail, e.tail_type) for e in edges}
        entities = [(node, LABELS.get(kind, "ORG")) for node, kind in sorted(nodes)]
    found = [Entity(text=text, label=label) for text, label in entities]
    return KnowledgeGraph(fact_id=fact_id, triples=edges, coverage=1.0, entities=found, method="rules")


# --- criteria -------------------------------------------------------------------------------------------


def test_is_named_entity_ignores_case_and_a_leading_the():
    entities = [Entity(text="the Vellmouth Harbour Bridge", label="FAC"), Entity(text="2007", label="DATE")]
    assert is_named_entity("Vellmouth Harbour Bridge", entities)
    assert is_named_entity("The vellmouth harbour bridge", entities)
    assert is_named_entity("2007", entities)
    assert not is_named_entity("Harbour Bridge", entities)
    assert not is_named_entity("foundation design", entities)


def test_in_every_keypoint_needs_whole_words_in_each_keypoint():
    keypoints = ["Ilse Marrow joined Halden & Rusk.", "The firm made ilse marrow a partner."]
    assert in_every_keypoint("Ilse Marrow", keypoints)
    assert in_every_keypoint("the Ilse Marrow", keypoints)
    assert not in_every_keypoint("Halden & Rusk", keypoints)
    assert not in_every_keypoint("Marrow", ["Marrowfield is a village."])
    assert not in_every_keypoint("Marrow", [])


@pytest.mark.parametrize("node", ["Halden & Rusk", "Smith and Jones", "Reed et al.", "Reed Et Al"])
def test_is_atomic_rejects_conjunctions(node):
    assert not is_atomic(node)


@pytest.mark.parametrize("node", ["Ilse Marrow", "Anderson", "Brandon Hall", "Rand Corporation"])
def test_is_atomic_keeps_single_names(node):
    assert is_atomic(node)


def test_contained_in_other_node_looks_only_at_longer_distinct_nodes():
    nodes = ["Ilse Marrow", "Marrow", "Vellmouth Harbour Bridge", "2007"]
    assert contained_in_other_node("Marrow", nodes)
    assert contained_in_other_node("Harbour Bridge", nodes)
    assert not contained_in_other_node("Ilse Marrow", nodes)
    assert not contained_in_other_node("2007", nodes)
    assert not contained_in_other_node("Marrow", ["Marrow", "the marrow"])  # the same node, respelled
    assert not contained_in_other_node("Marrow", ["Ilse Marrow"], threshold=101)


def test_unique_for_relation_checks_heads_and_tails():
    two_tails = [
        Triple(head="Marrow", head_type="Person", relation="joined", tail="Halden", tail_type="Organization"),
        Triple(head="Marrow", head_type="Person", relation="joined", tail="Rusk", tail_type="Organization"),
    ]
    assert not unique_for_relation("Halden", two_tails)
    assert unique_for_relation("Marrow", two_tails)
    two_heads = [
        Triple(head="Alice", head_type="Person", relation="founded", tail="Acme", tail_type="Organization"),
        Triple(head="Bob", head_type="Person", relation="founded", tail="Acme", tail_type="Organization"),
    ]
    assert not unique_for_relation("Alice", two_heads)
    assert unique_for_relation("Acme", two_heads)
    other_relation = two_tails[:1] + [two_tails[1].model_copy(update={"relation": "left"})]
    assert unique_for_relation("Halden", other_relation)


def test_maskable_nodes_in_graph_order_and_why_not():
    fact = make_fact(
        "f1", "Halden & Rusk hired Ilse Marrow in 2007, and the Vellmouth Bridge opened in 2024."
    )
    graph = make_graph(
        "f1",
        [
            ("Halden & Rusk", "Organization", "hired", "Ilse Marrow", "Person"),
            ("Ilse Marrow", "Person", "hired in", "2007", "Date"),
            ("Vellmouth Bridge", "Product", "opened in", "2024", "Date"),
            ("Vellmouth Bridge", "Product", "opened by", "Marrow", "Person"),
            ("Vellmouth Bridge", "Product", "was opened", "recently", "Other"),
        ],
    )
    keypoints = [kp.text for kp in fact.keypoints]
    assert maskable_nodes(graph, keypoints) == [
        ("Ilse Marrow", "Person"),
        ("2007", "Date"),
        ("Vellmouth Bridge", "Product"),
        ("2024", "Date"),
    ]
    assert why_not_maskable("Halden & Rusk", graph, keypoints) == "not_atomic"
    assert why_not_maskable("Marrow", graph, keypoints) == "contained_in_other_node"
    assert why_not_maskable("recently", graph, keypoints) == "not_in_every_keypoint"
    # IRB's single-hop target is the first maskable *head*, not the first maskable node
    assert first_maskable(graph, keypoints) == ("Ilse Marrow", "Person")
    tails_only = make_graph("f1", [("Halden & Rusk", "Organization", "hired", "Ilse Marrow", "Person")])
    assert first_maskable(tails_only, keypoints) == ("Ilse Marrow", "Person")


def test_first_maskable_prefers_a_later_head_to_an_earlier_tail():
    keypoints = ["Halden & Rusk hired Ilse Marrow; the Vellmouth Bridge opened in 2024."]
    graph = make_graph(
        "f1",
        [
            ("Halden & Rusk", "Organization", "hired", "Ilse Marrow", "Person"),
            ("Vellmouth Bridge", "Product", "opened in", "2024", "Date"),
        ],
    )
    assert maskable_nodes(graph, keypoints)[0] == ("Ilse Marrow", "Person")
    assert first_maskable(graph, keypoints) == ("Vellmouth Bridge", "Product")


def test_not_in_every_keypoint_and_not_unique_are_named():
    keypoints = ["Marrow joined Halden in 2007.", "Marrow joined Rusk."]
    graph = make_graph(
        "f1",
        [
            ("Marrow", "Person", "joined", "Halden", "Organization"),
            ("Marrow", "Person", "joined", "Rusk", "Organization"),
            ("Marrow", "Person", "joined in", "2007", "Date"),
        ],
    )
    assert why_not_maskable("2007", graph, keypoints) == "not_in_every_keypoint"
    assert why_not_maskable("Rusk", graph, ["Marrow joined Halden and Rusk."]) == "not_unique_for_relation"
    assert why_not_maskable("Marrow", graph, keypoints) is None


def test_same_node_matches_spellings_but_not_neighbours():
    assert same_node("Ilse Marrow", "Person", "the ilse marrow", "Organization")
    assert same_node("Marrow", "Person", "Ilse Marrow", "Person")
    assert same_node("Vellmouth Harbor Bridge", "Product", "Vellmouth Harbour Bridge", "Product")
    assert same_node("Ilse Marow", "Person", "Marrow", "Person")
    assert not same_node("Jane Smith", "Person", "John Smith", "Person")
    assert not same_node("Ilse", "Person", "Ilse Marrow", "Person")
    assert not same_node("Vellmouth", "Person", "The Vellmouth Orchid Festival", "Person")
    assert not same_node("Vellmouth", "Location", "Vellmouth Harbour Bridge", "Location")
    assert not same_node("Marrow", "Person", "Ilse Marrow", "Organization")
    assert not same_node("12 March 2024", "Date", "13 March 2024", "Date")


def test_node_index_finds_the_owners_same_node_may_accept():
    index = NodeIndex()
    index.add("f1", "Ilse Marrow", "Person")
    index.add("f2", "the Vellmouth Harbour Bridge", "Product")
    index.add("f3", "2007", "Date")
    index.add("f4", "Marrow", "Person")
    assert index.owners("Marow", "Person") >= {"f1", "f4"}
    assert index.owners("Vellmouth Harbor Bridge", "Product") == {"f2"}
    assert index.owners("Vellmouth", "Product") == set()
    assert index.owners("2007", "Date") == {"f3"}
    assert index.owners("2008", "Date") == set()


# --- single hop -----------------------------------------------------------------------------------------


def test_single_hop_plans_and_rejects():
    facts = [
        make_fact("a", "Ilse Marrow joined Halden & Rusk in 2007.", documents=(["d2", "d1"],)),
        make_fact("b", "Work began in spring.", "Work ended in autumn.", documents=(["d3"], ["d1", "d3"])),
        make_fact("c", "No graph was made for this fact."),
    ]
    graphs = [
        make_graph("b", [("Work", "Other", "began in", "spring", "Other")], entities=[]),
        make_graph(
            "a",
            [
                ("Ilse Marrow", "Person", "joined", "Halden & Rusk", "Organization"),
                ("Ilse Marrow", "Person", "joined in", "2007", "Date"),
            ],
        ),
        make_graph("z", [("X", "Other", "is", "Y", "Other")]),
    ]
    plans, rejects = single_hop_plans(facts, graphs)
    assert [plan.id for plan in plans] == ["s:a"]
    hop = plans[0].hops[0]
    assert (hop.answer, hop.answer_type, hop.bridge) == ("Ilse Marrow", "Person", None)
    assert hop.documents == ["d1", "d2"]
    assert hop.keypoints == ["Ilse Marrow joined Halden & Rusk in 2007."]
    assert plans[0].kind == "single_hop" and plans[0].answer == "Ilse Marrow"
    assert [(r.stage, r.reason, r.key) for r in rejects] == [
        ("plans", "no_maskable_node", "b"),
        ("plans", "missing_fact", "z"),
    ]
    assert rejects[0].detail == "Work: not_named_entity; spring: not_named_entity"


def test_single_hop_documents_are_the_union_over_keypoints():
    fact = make_fact("b", "Ilse Marrow won.", "Ilse Marrow retired.", documents=(["d3"], ["d1", "d3"]))
    graph = make_graph("b", [("Ilse Marrow", "Person", "won", "Gold Medal", "Other")])
    plans, _ = single_hop_plans([fact], [graph])
    assert plans[0].hops[0].documents == ["d1", "d3"]


def test_graph_without_triples_is_rejected():
    _, rejects = single_hop_plans([make_fact("a", "Text.")], [make_graph("a", [])])
    assert rejects[0].reason == "no_maskable_node" and rejects[0].detail == "the graph has no triples"


# --- multi hop ------------------------------------------------------------------------------------------

# A chain Alpha Corp -> Brill -> River Tay -> Lake Orrin, each named in the next fact's graph.
CHAIN = {
    "A": (
        "Alpha Corp was founded by Tom Reed.",
        ("Alpha Corp", "Organization", "founded by", "Tom Reed", "Person"),
    ),
    "B": ("Alpha Corp is based in Brill.", ("Alpha Corp", "Organization", "based in", "Brill", "Location")),
    "C": ("Brill lies on the River Tay.", ("Brill", "Location", "lies on", "River Tay", "Location")),
    "D": (
        "The River Tay flows into Lake Orrin.",
        ("River Tay", "Location", "flows into", "Lake Orrin", "Location"),
    ),
}


def chain_inputs(names=("A", "B", "C", "D")):
    facts = [make_fact(name, CHAIN[name][0]) for name in names]
    graphs = [make_graph(name, [CHAIN[name][1]]) for name in names]
    single, rejects = single_hop_plans(facts, graphs)
    assert not rejects
    keypoints = {fact.id: [kp.text for kp in fact.keypoints] for fact in facts}
    maskable = {graph.fact_id: maskable_nodes(graph, keypoints[graph.fact_id]) for graph in graphs}
    return single, maskable


def test_two_hop_chains():
    single, maskable = chain_inputs()
    plans = multi_hop_plans(single, 2, random.Random(0), maskable=maskable)
    # single-hop answers: A and B "Alpha Corp", C "Brill", D "River Tay"; "/2" = the fact's 2nd maskable node
    assert [plan.id for plan in plans] == ["m:A>B/2", "m:B>A/2", "m:C>B", "m:D>C"]
    first = plans[0]
    assert first.kind == "multi_hop"
    assert [(hop.fact_id, hop.answer, hop.bridge) for hop in first.hops] == [
        ("A", "Alpha Corp", None),
        ("B", "Brill", "Alpha Corp"),
    ]
    assert first.answer == "Brill" and first.answer_type == "Location"


def test_three_and_four_hop_chains_never_repeat_a_fact_or_answer():
    single, maskable = chain_inputs()
    three = multi_hop_plans(single, 3, random.Random(0), maskable=maskable)
    expected = ["m:A>B/2", "m:A>B/2>C/2", "m:B>A/2", "m:C>B", "m:C>B>A/2", "m:D>C", "m:D>C>B"]
    assert [plan.id for plan in three] == expected
    four = multi_hop_plans(single, 4, random.Random(0), maskable=maskable)
    ids = [plan.id for plan in four]
    assert ids == expected[:2] + ["m:A>B/2>C/2>D/2"] + expected[2:] + ["m:D>C>B>A/2"]
    assert {len(plan.hops) for plan in four} == {2, 3, 4}
    assert len(ids) == len(set(ids))
    for plan in four:
        facts = [hop.fact_id for hop in plan.hops]
        answers = [hop.answer.lower() for hop in plan.hops]
        assert len(facts) == len(set(facts)) and len(answers) == len(set(answers))
        for before, after in zip(plan.hops, plan.hops[1:], strict=False):
            assert after.bridge == before.answer and after.answer != after.bridge
    deepest = next(plan for plan in four if plan.id == "m:A>B/2>C/2>D/2")
    assert [hop.answer for hop in deepest.hops] == ["Alpha Corp", "Brill", "River Tay", "Lake Orrin"]
    assert all(
        len(plan.hops) <= 2 for plan in multi_hop_plans(single, 2, random.Random(0), maskable=maskable)
    )


def test_no_chains_at_one_hop_and_bad_max_hops():
    single, maskable = chain_inputs()
    assert multi_hop_plans(single, 1, random.Random(0), maskable=maskable) == []
    with pytest.raises(BadInputError, match="max_hops"):
        multi_hop_plans(single, 5, random.Random(0))


def test_default_maskable_uses_only_single_hop_answers():
    single, _ = chain_inputs()
    # B's own answer is Alpha Corp, the bridge from A, so A>B needs B's other node (Brill): not by default
    assert [plan.id for plan in multi_hop_plans(single, 3, random.Random(0))] == ["m:C>B", "m:D>C", "m:D>C>B"]


def test_a_surname_bridges_to_the_full_name():
    facts = [
        make_fact("p", "Ilse Marrow designed the Tay Bridge."),
        make_fact("q", "Marrow was born in Brill."),
    ]
    graphs = [
        make_graph("p", [("Ilse Marrow", "Person", "designed", "Tay Bridge", "Product")]),
        make_graph("q", [("Marrow", "Person", "born in", "Brill", "Location")]),
    ]
    single, _ = single_hop_plans(facts, graphs)
    keypoints = {fact.id: [kp.text for kp in fact.keypoints] for fact in facts}
    maskable = {graph.fact_id: maskable_nodes(graph, keypoints[graph.fact_id]) for graph in graphs}
    plans = multi_hop_plans(single, 2, random.Random(0), maskable=maskable)
    assert [(plan.id, plan.hops[1].bridge, plan.answer) for plan in plans] == [
        ("m:p>q/2", "Marrow", "Brill"),
        ("m:q>p/2", "Ilse Marrow", "Tay Bridge"),
    ]


def test_the_next_answer_may_not_appear_in_an_earlier_hop():
    facts = [make_fact("x", "Alpha Corp is based in Brill."), make_fact("y", "Alpha Corp moved to Brill.")]
    graphs = [
        make_graph("x", [("Alpha Corp", "Organization", "based in", "Brill", "Location")]),
        make_graph("y", [("Alpha Corp", "Organization", "moved to", "Brill", "Location")]),
    ]
    single, _ = single_hop_plans(facts, graphs)
    keypoints = {fact.id: [kp.text for kp in fact.keypoints] for fact in facts}
    maskable = {graph.fact_id: maskable_nodes(graph, keypoints[graph.fact_id]) for graph in graphs}
    assert multi_hop_plans(single, 2, random.Random(0), maskable=maskable) == []


def hub_inputs(spokes: int):
    facts = [make_fact("hub", "Ilse Marrow founded Alpha Corp.")]
    graphs = [make_graph("hub", [("Ilse Marrow", "Person", "founded", "Alpha Corp", "Organization")])]
    for i in range(spokes):
        town = f"Town{i}ville"
        facts.append(make_fact(f"s{i}", f"{town} honoured Ilse Marrow."))
        graphs.append(make_graph(f"s{i}", [(town, "Location", "honoured", "Ilse Marrow", "Person")]))
    single, _ = single_hop_plans(facts, graphs)
    keypoints = {fact.id: [kp.text for kp in fact.keypoints] for fact in facts}
    maskable = {graph.fact_id: maskable_nodes(graph, keypoints[graph.fact_id]) for graph in graphs}
    return single, maskable


def test_continuations_per_answer_are_capped_with_the_seeded_rng():
    single, maskable = hub_inputs(6)
    plans = multi_hop_plans(single, 2, random.Random(7), maskable=maskable, max_per_answer=3)
    from_hub = [plan.id for plan in plans if plan.id.startswith("m:hub>")]
    assert len(from_hub) == 3
    again = multi_hop_plans(single, 2, random.Random(7), maskable=maskable, max_per_answer=3)
    assert [plan.id for plan in again] == [plan.id for plan in plans]
    choices = {
        tuple(
            p.id for p in multi_hop_plans(single, 2, random.Random(seed), maskable=maskable) if "hub>" in p.id
        )
        for seed in range(10)
    }
    assert len(choices) > 1
    uncapped = multi_hop_plans(single, 2, random.Random(7), maskable=maskable, max_per_answer=10)
    assert len([plan for plan in uncapped if plan.id.startswith("m:hub>")]) == 6

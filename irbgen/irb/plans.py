"""Question plans: which node each question asks for, how facts chain into multi-hop questions, and
which unmasked nodes are paraphrased or made false.

Plan ids are stable and readable: "s:<fact>" (single hop), "m:<fact>><fact>[/k]" (multi-hop, innermost
fact first; "/k" when a hop masks the k-th maskable node of its fact instead of its single-hop answer),
"f:<plan id>" (false premise made from that plan). Pure functions: same inputs and seed, same plans.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import date

from irbgen.errors import BadInputError
from irbgen.irb.bridges import bridge_named_once, description_words, node_pages
from irbgen.irb.gates import (
    agreed_type,
    answer_failure,
    answer_fragment,
    bridge_not_entity,
    entity_label,
    identifies_one,
    opens_sentence,
    shared_with_others,
    surname_alone,
)
from irbgen.irb.leads import is_lead_fact
from irbgen.irb.masking import (
    NodeIndex,
    first_maskable,
    maskable_nodes,
    normalize,
    same_node,
    triple_nodes,
    why_not_maskable,
)
from irbgen.irb.node_types import normal_title, page_types
from irbgen.irb.premises import (
    CHANGED_TYPES,
    Refusal,
    date_beside_another_date,
    date_of_a_common_event,
    date_of_a_ranking,
    perturb,
    value_of_the_answer,
)
from irbgen.irb.questions import WriteQuestions
from irbgen.irb.records import Fact, KnowledgeGraph, NodeChange, PlanHop, QuestionPlan
from irbgen.irb.rules.graph import node_type as label_type
from irbgen.irb.rules.questions import defines_itself
from irbgen.irb.shortcuts import REASON as SHORTCUT
from irbgen.irb.shortcuts import drop_shortcuts, normaliser, shortcut_document
from irbgen.irb.transforms import DATE_RULES, TRANSFORMED_TYPES, apply_changes, paraphrase
from irbgen.records import Reject

STAGE = "plans"
MAX_HOPS = 4
FALSE_PREMISE_ANSWER = "False premise question"
MAX_DETAIL_CHARS = 500
MAX_STARTS_TRIED = 4  # first hops tried, best described first, to describe the bridge of one second hop
MAX_LEAD_ENDS = 3  # chains ending at one lead fact ("the capital of the state that ..."), each from its start

Node = tuple[str, str]  # (node as written, type)


def fact_documents(fact: Fact) -> list[str]:
    """The sorted union of the documents supporting the fact's keypoints."""
    return sorted({document for keypoint in fact.keypoints for document in keypoint.documents})


def _reject_detail(graph: KnowledgeGraph, keypoints: Sequence[str]) -> str:
    nodes = [node for node, _, _ in triple_nodes(graph.triples)]
    if not nodes:
        return "the graph has no triples"
    detail = "; ".join(f"{node}: {why_not_maskable(node, graph, keypoints)}" for node in nodes)
    return detail if len(detail) <= MAX_DETAIL_CHARS else detail[: MAX_DETAIL_CHARS - 3] + "..."


def single_hop_plans(
    facts: Iterable[Fact],
    graphs: Iterable[KnowledgeGraph],
    pages: Mapping[str, str] | None = None,
    page_text: Mapping[int, Sequence[str]] | None = None,
) -> tuple[list[QuestionPlan], list[Reject]]:
    """One plan per fact with a graph, masking its first maskable head (else tail), in fact order.

    A fact without a maskable node is a reject "no_maskable_node" naming each node's failed criterion;
    a graph whose fact is missing is a reject "missing_fact"; a fact without a graph is skipped (the
    graph stage wrote its reject). `page_text` (page id -> its facts' keypoints) shows where the page
    writes a name in full (gates.surname_alone).
    """
    by_fact: dict[str, KnowledgeGraph] = {}
    for graph in graphs:
        by_fact.setdefault(graph.fact_id, graph)
    plans: list[QuestionPlan] = []
    rejects: list[Reject] = []
    seen: set[str] = set()
    for fact in facts:
        graph = by_fact.get(fact.id)
        if graph is None or fact.id in seen:
            continue
        seen.add(fact.id)
        keypoints = [keypoint.text for keypoint in fact.keypoints]
        target = first_maskable(graph, keypoints)
        if target is None:
            detail = _reject_detail(graph, keypoints)
            rejects.append(Reject(stage=STAGE, reason="no_maskable_node", key=fact.id, detail=detail))
            continue
        text = (page_text or {}).get(fact.page_id, ())
        gated = gated_nodes(graph, keypoints, pages, fact.title, text, fact.links)
        if not gated:
            shared = shared_with_others(target[0], target[1], keypoints, fact.title)
            alone = surname_alone(target[0], target[1], text, fact.links.get(target[0]))
            reason, detail = (
                answer_failure(target[0], keypoints, graph.entities)
                or (("answer_surname_alone", alone) if alone else None)
                or (("answer_shared_with_others", shared) if shared else None)
                or (
                    "answer_type_conflict",
                    f"{target[0]!r}: the graph says {target[1]}, spaCy says "
                    f"{entity_label(target[0], graph.entities)}",
                )
            )
            rejects.append(Reject(stage=STAGE, reason=reason, key=fact.id, detail=detail))
            continue
        target = _first_in_order(graph, gated)
        label = entity_label(target[0], graph.entities)
        hop = PlanHop(
            fact_id=fact.id,
            keypoints=keypoints,
            triples=list(graph.triples),
            answer=target[0],
            answer_type=target[1],
            answer_label=label,
            documents=fact_documents(fact),
            node_pages=node_pages(fact, [node for node, _, _ in triple_nodes(graph.triples)]),
        )
        plans.append(QuestionPlan(id=f"s:{fact.id}", kind="single_hop", hops=[hop]))
    for fact_id in sorted(set(by_fact) - seen):
        detail = "its fact is not among the facts given"
        rejects.append(Reject(stage=STAGE, reason="missing_fact", key=fact_id, detail=detail))
    return plans, rejects


def gated_nodes(
    graph: KnowledgeGraph,
    keypoints: Sequence[str],
    pages: Mapping[str, str] | None = None,
    title: str = "",
    page_text: Sequence[str] = (),
    links: Mapping[str, str] | None = None,
) -> list[Node]:
    """The maskable nodes that pass the answer gates, each typed only as far as spaCy's label, the
    run's pages (`pages`: see node_types.page_types) and the node's name agree; with the fact's page
    `title`, not its subject where other places may share what is said of it (gates.shared_with_others);
    no person by one word that the page's keypoints (`page_text`) or the fact's wikilinks (`links`:
    text -> page) name in full (gates.surname_alone)."""
    nodes = []
    for node, node_type in maskable_nodes(graph, keypoints):
        page_type = (pages or {}).get(normal_title(node))
        label = entity_label(node, graph.entities)
        asked = agreed_type(node, node_type, label, page_type, subject=opens_sentence(node, keypoints))
        if asked is None or answer_failure(node, keypoints, graph.entities) is not None:
            continue
        if title and shared_with_others(node, asked, keypoints, title) is not None:
            continue
        if surname_alone(node, asked, page_text, (links or {}).get(node)) is not None:
            continue
        nodes.append((node, asked))
    return nodes


def _first_in_order(graph: KnowledgeGraph, nodes: Sequence[Node]) -> Node:
    """IRB's order among `nodes`: the first head of the graph, else the first tail."""
    keys = {normalize(node): (node, node_type) for node, node_type in nodes}
    ends = [triple.head for triple in graph.triples] + [triple.tail for triple in graph.triples]
    return next(keys[normalize(end)] for end in ends if normalize(end) in keys)


def more_single_hop_plans(
    single: Sequence[QuestionPlan],
    maskable: Mapping[str, Sequence[Node]],
    graphs: Mapping[str, KnowledgeGraph],
    *,
    per_fact: int,
) -> list[QuestionPlan]:
    """Single-hop plans for a fact's other answer-gated nodes, up to `per_fact` questions a fact:
    "s:<fact>/k" asks for its k-th node (in graph order, heads first). Multi-hop chains use only the
    first plan of each fact."""
    plans = []
    for plan in single:
        hop = plan.hops[0]
        nodes = list(maskable.get(hop.fact_id, ()))
        entities = graphs[hop.fact_id].entities
        others = [
            (number, node)
            for number, node in enumerate(nodes, 1)
            if normalize(node[0]) != normalize(hop.answer)
        ]
        for number, (node, node_type) in others[: per_fact - 1]:
            update = {"answer": node, "answer_type": node_type, "answer_label": entity_label(node, entities)}
            plans.append(
                QuestionPlan(
                    id=f"s:{hop.fact_id}/{number}", kind="single_hop", hops=[hop.model_copy(update=update)]
                )
            )
    return plans


# --- multi-hop ----------------------------------------------------------------------------------------


class _Chainer:
    """Finds where a hop's answer appears unmasked in other facts' graphs, and extends chains there."""

    def __init__(
        self,
        single: Sequence[QuestionPlan],
        maskable: Mapping[str, Sequence[Node]],
        labels: Mapping[str, Mapping[str, str]],
        nouns: Mapping[str, str] | None = None,
    ) -> None:
        self.base = {plan.hops[0].fact_id: plan.hops[0] for plan in single}
        self.labels = labels
        self.nouns = nouns or {}
        self.order = {fact_id: index for index, fact_id in enumerate(self.base)}
        self.maskable = {fact_id: list(maskable.get(fact_id, ())) for fact_id in self.base}
        self.nodes = {
            fact_id: [(node, node_type) for node, node_type, _ in triple_nodes(hop.triples)]
            for fact_id, hop in self.base.items()
        }
        self.index = NodeIndex()
        for fact_id, nodes in self.nodes.items():
            for node, node_type in nodes:
                self.index.add(fact_id, node, node_type)
        self._bridges: dict[tuple[Node, str | None, str | None], list[tuple[str, Node]]] = {}

    def bridges(
        self, answer: Node, label: str | None = None, page: str | None = None
    ) -> list[tuple[str, Node]]:
        """(fact id, node) for each fact whose graph has a node naming `answer` (spaCy's `label`; linked to
        `page`) as the same thing; exact spellings first."""
        if (answer, label, page) not in self._bridges:
            found = []
            for fact_id in sorted(self.index.owners(*answer), key=self.order.__getitem__):
                nodes = self.nodes[fact_id]
                exact = [node for node in nodes if normalize(node[0]) == normalize(answer[0])]
                fuzzy = [node for node in nodes if same_node(*answer, *node)]
                bridge = (exact or fuzzy)[0] if exact or fuzzy else None
                if bridge is not None and self._same_thing(answer, label, page, fact_id, bridge):
                    found.append((fact_id, bridge))
            self._bridges[answer, label, page] = found
        return self._bridges[answer, label, page]

    def _same_thing(
        self, answer: Node, label: str | None, page: str | None, fact_id: str, bridge: Node
    ) -> bool:
        """The bridge names the answer as a whole ("Washington" is not "Washington, D.C.") and spaCy,
        where it labels both, gives both one type (not a PERSON Washington and a GPE one)."""
        if answer_fragment(bridge[0], self.base[fact_id].keypoints, ()) is not None:
            return False
        here = self.base[fact_id].node_pages.get(normalize(bridge[0]))
        if page is not None and here is not None:
            return page == here  # linked to one page, or to two
        here = self.labels.get(fact_id, {}).get(normalize(bridge[0]))
        return here is None or label is None or label_type(here, bridge[0]) == label_type(label, answer[0])

    def continuations(self, chain: Sequence[PlanHop]) -> list[PlanHop]:
        """Every next hop: a new fact naming the last answer, masking a node no earlier hop names."""
        used = {hop.fact_id for hop in chain}
        answers = [(hop.answer, hop.answer_type) for hop in chain]
        earlier = [node for hop in chain for node in self.nodes[hop.fact_id]]
        hops = []
        page = chain[-1].node_pages.get(normalize(chain[-1].answer))
        for fact_id, bridge in self.bridges(answers[-1], chain[-1].answer_label, page):
            if fact_id in used:
                continue
            for node in self.maskable[fact_id]:
                if same_node(*node, *bridge) or any(same_node(*node, *other) for other in answers + earlier):
                    continue
                base = self.base[fact_id]
                label = self.labels.get(fact_id, {}).get(normalize(node[0]))
                update = {"answer": node[0], "answer_type": node[1], "bridge": bridge[0]}
                update["answer_label"] = label
                update["answer_noun"] = self.nouns.get(base.node_pages.get(normalize(node[0]), ""))
                hops.append(base.model_copy(update=update))
        return hops

    def starts(self) -> list[PlanHop]:
        """A first hop for every maskable node of every fact, in fact then graph order."""
        hops = []
        for fact_id, base in self.base.items():
            for node, node_type in self.maskable[fact_id] or [(base.answer, base.answer_type)]:
                label = self.labels.get(fact_id, {}).get(normalize(node))
                noun = self.nouns.get(base.node_pages.get(normalize(node), ""))
                update = {
                    "answer": node,
                    "answer_type": node_type,
                    "answer_label": label,
                    "answer_noun": noun,
                }
                hops.append(base.model_copy(update=update))
        return hops

    def hop_label(self, hop: PlanHop) -> str:
        """The fact id, with "/k" when the hop masks the fact's k-th maskable node, not its own answer."""
        if normalize(hop.answer) == normalize(self.base[hop.fact_id].answer):
            return hop.fact_id
        keys = [normalize(node) for node, _ in self.maskable[hop.fact_id]]
        return f"{hop.fact_id}/{keys.index(normalize(hop.answer)) + 1}"


def multi_hop_plans(
    single: Sequence[QuestionPlan],
    max_hops: int,
    rng: random.Random,
    *,
    maskable: Mapping[str, Sequence[Node]] | None = None,
    labels: Mapping[str, Mapping[str, str]] | None = None,
    max_per_answer: int = 3,
    rejects: list[Reject] | None = None,
    describe: Callable[[PlanHop], int | None] | None = None,
    keep: Callable[[Sequence[PlanHop]], tuple[str, str] | None] | None = None,
    nouns: Mapping[str, str] | None = None,
    self_described: Collection[str] = (),
) -> list[QuestionPlan]:
    """Chains of 2..max_hops single-hop facts, innermost first, each hop's answer named in the next.

    Hop i+1 is another fact whose graph has a node naming hop i's answer (`same_node`; that node is the
    bridge) and masks one of its `maskable` nodes (default: its single-hop answer) that is not the
    bridge, not an earlier answer and not a node of an earlier hop (which would give the answer away).
    No fact or answer repeats. A chain only goes on through an answer whose spaCy label (`labels`:
    fact id -> normalised node -> label; without it, no chain is stopped) is a named entity
    (gates.bridge_not_entity); each chain stopped there is added to `rejects` when given. Where a chain
    has more than `max_per_answer` next hops, the seeded `rng` samples that many, so big dumps stay
    bounded. Plans come depth-first in the order of `single`.

    With `describe` (a first hop -> how many words its question takes as a description of its answer, or
    None when it cannot describe it: see irb/bridges.py), chains start only at describable hops, best
    (shortest) first, and each second hop (a fact and the node it asks for) is made once, through the
    best-described start that reaches it and that `keep` accepts (it returns why not, (reason, detail),
    or None: e.g. a shortcut, or no question the rules can write), trying at most MAX_STARTS_TRIED starts
    (a second hop none of them describes is a reject: see `_described_pairs`); a start is used
    for at most `max_per_answer` second hops, so one bridge is described by several of its facts.

    `nouns` (page title -> what its lead says the page's subject is) names a hop's answer, where a
    wikilink or the page title says which page it is, in the description of it ("the tennis player
    who ..."). Two nodes linked to different pages never bridge. A start from a fact of
    `self_described` that asks for the sentence's subject ("Apollo 11 was the first spaceflight ...")
    names its answer's kind itself, so that bridge need not be an entity of a known type.
    """
    if not 1 <= max_hops <= MAX_HOPS:
        raise BadInputError(f"max_hops must be between 1 and {MAX_HOPS}, got {max_hops}")
    if max_per_answer < 1:
        raise BadInputError(f"max_per_answer must be at least 1, got {max_per_answer}")
    if maskable is None:
        maskable = {
            plan.hops[0].fact_id: [(plan.hops[0].answer, plan.hops[0].answer_type)] for plan in single
        }
    chainer = _Chainer(single, maskable, labels or {}, nouns)
    plans: list[QuestionPlan] = []

    def extend(chain: list[PlanHop]) -> None:
        if len(chain) >= 2:
            plan_id = "m:" + ">".join(chainer.hop_label(hop) for hop in chain)
            plans.append(QuestionPlan(id=plan_id, kind="multi_hop", hops=list(chain)))
        if len(chain) == max_hops:
            return
        options = chainer.continuations(chain)
        last = chain[-1]
        checked = options and labels is not None
        not_entity = bridge_not_entity(last.answer_label, last.answer_type) if checked else None
        if not_entity is not None:
            if rejects is not None:
                key = "m:" + ">".join(chainer.hop_label(hop) for hop in chain) + ">..."
                detail = f"{not_entity}: {chain[-1].answer!r} ({len(options)} next hops not made)"
                rejects.append(Reject(stage=STAGE, reason="bridge_not_entity", key=key, detail=detail))
            return
        if len(options) > max_per_answer:
            picked = sorted(rng.sample(range(len(options)), max_per_answer))
            options = [options[index] for index in picked]
        for hop in options:
            extend(chain + [hop])

    if describe is None:
        for plan in single:
            extend([plan.hops[0]])
        return plans
    if max_hops >= 2:
        checked = labels is not None
        pairs = _described_pairs(chainer, describe, keep, max_per_answer, checked, rejects, self_described)
        for chain in pairs:
            extend(chain)
    return plans


Why = tuple[str, str]  # (reason, detail) of a chain the check refused


def described_well(hop: PlanHop, writer: WriteQuestions) -> int | None:
    """How well the hop describes its answer inside another question (bridges.description_words: fewer
    is better), or None; the hop must also be a question the build keeps on its own, so "the state whose
    single largest increase came in the area of information" is refused as "The single largest increase
    in which place came in the area of information?" is."""
    words = description_words(hop)
    if words is None:
        return None
    plan = QuestionPlan(id=f"s:{hop.fact_id}", kind="single_hop", hops=[hop])
    return None if writer.rules_failure(plan) is not None else words


def _described_pairs(
    chainer: _Chainer,
    describe: Callable[[PlanHop], int | None],
    keep: Callable[[Sequence[PlanHop]], Why | None] | None,
    max_per_answer: int,
    check_bridges: bool,
    rejects: list[Reject] | None,
    self_described: Collection[str] = (),
) -> list[list[PlanHop]]:
    """The 2-hop chains of `multi_hop_plans` with `describe`: each second hop once, through the best
    described start `keep` accepts. A second hop none of its tried starts makes is a reject: the check's
    own reason when the last refusal was a shortcut, else "multi_hop_not_writable"."""
    ranked = [(describe(hop), hop) for hop in chainer.starts()]
    starts = [
        hop for words, hop in sorted((pair for pair in ranked if pair[0] is not None), key=lambda p: p[0])
    ]
    chains: list[list[PlanHop]] = []
    taken: dict[tuple[str, str], int] = {}
    tried: dict[tuple[str, str], int] = {}
    failed: dict[tuple[str, str], tuple[str, Why]] = {}  # second hop -> (last plan id tried, why not)
    for start in starts:  # sorted() is stable: equal lengths keep the order of the single-hop plans
        options = chainer.continuations([start])
        checked = check_bridges and not (start.fact_id in self_described and defines_itself(start))
        not_entity = bridge_not_entity(start.answer_label, start.answer_type) if checked else None
        if options and not_entity is not None:
            if rejects is not None:
                detail = f"{not_entity}: {start.answer!r} ({len(options)} next hops not made)"
                key = f"m:{chainer.hop_label(start)}>..."
                rejects.append(Reject(stage=STAGE, reason="bridge_not_entity", key=key, detail=detail))
            continue
        used = 0
        for hop in options:
            second = (hop.fact_id, normalize(hop.answer))
            if used == max_per_answer:
                break
            # a lead fact ends several chains: "the capital of the state that ..." from several first hops
            chains_of_it = MAX_LEAD_ENDS if is_lead_fact(hop.fact_id) else 1
            if (
                taken.get(second, 0) == chains_of_it
                or tried.get(second, 0) == MAX_STARTS_TRIED * chains_of_it
            ):
                continue
            tried[second] = tried.get(second, 0) + 1
            why = keep([start, hop]) if keep is not None else None
            if why is not None:
                failed[second] = (f"m:{chainer.hop_label(start)}>{chainer.hop_label(hop)}", why)
                continue
            taken[second] = taken.get(second, 0) + 1
            failed.pop(second, None)
            used += 1
            chains.append([start, hop])
    for second, (plan_id, (reason, detail)) in sorted(failed.items(), key=lambda item: item[1][0]):
        if reason != SHORTCUT:
            tries = f"no description of its bridge made a question ({tried[second]} tried)"
            reason, detail = "multi_hop_not_writable", f"{tries}; the last: {reason}: {detail}"
        if rejects is not None:
            rejects.append(Reject(stage=STAGE, reason=reason, key=plan_id, detail=detail))
    return chains


# --- changes and false premises ---------------------------------------------------------------------


def changeable_nodes(plan: QuestionPlan) -> list[Node]:
    """Unmasked Person, Date, Country and Quantity nodes of all hops: not an answer, bridge or a
    spelling of an answer; one per normalized node, in hop and graph order."""
    masked = [(hop.answer, hop.answer_type) for hop in plan.hops]
    bridges = {normalize(hop.bridge) for hop in plan.hops if hop.bridge}
    nodes: list[Node] = []
    seen: set[str] = set()
    for hop in plan.hops:
        if is_lead_fact(hop.fact_id):
            continue  # "born on 3 April 1885" picks a director out; "born 131 years ago" fits thousands
        for node, node_type, _ in triple_nodes(hop.triples):
            key = normalize(node)
            if node_type not in TRANSFORMED_TYPES or key in seen or key in bridges:
                continue
            if any(same_node(node, node_type, *answer) for answer in masked):
                continue
            seen.add(key)
            nodes.append((node, node_type))
    return nodes


Labels = Mapping[str, Mapping[str, str]]  # fact id -> normalised node -> spaCy entity label


def node_label(plan: QuestionPlan, node: str, labels: Labels | None) -> str | None:
    """spaCy's label of a node in any hop's keypoints; "" when no labels are given (not known)."""
    if labels is None:
        return ""
    key = normalize(node)
    return next((labels[hop.fact_id][key] for hop in plan.hops if key in labels.get(hop.fact_id, {})), None)


def paraphrase_changes(plan: QuestionPlan, reference: date, labels: Labels | None = None) -> list[NodeChange]:
    """The paraphrase of every changeable node that has one and that changes a keypoint's words, with at
    most one relative date."""
    changes: list[NodeChange] = []
    asks_date = any(hop.answer_type == "Date" for hop in plan.hops)
    keep_dates = speaks_of_future(plan) or asks_date  # a relative date there would read wrongly
    nodes = changeable_nodes(plan)
    if plan.hops[-1].answer_type == "Person":
        # "Who was born in Ulm on 14 March 1879?" is one man; "... 137 years ago" fits a thousand
        keep_dates = keep_dates or any(kind == "Date" and identifies_one(node) for node, kind in nodes)
    for node, node_type in nodes:
        change = paraphrase(node, node_type, reference, node_label(plan, node, labels))
        if change is None or (change.rule == "relative_date" and (keep_dates or _has_date(changes))):
            continue
        if change.rule == "relative_date" and _fronted_date(plan, node):
            continue
        if change.rule == "initials" and (_named_as_place(plan, node) or _quoted(plan, node)):
            continue
        if not any(apply_changes(text, [change]) != text for hop in plan.hops for text in hop.keypoints):
            continue  # "finish 2002 as the oldest": a date the question keeps as written
        changes.append(change)
    return changes


_FRONTED = re.compile(r"^(?:In|On)\s+(?P<phrase>[^,]{1,40}),")


def _fronted_date(plan: QuestionPlan, node: str) -> bool:
    """ "In 1998, Andre Agassi won five titles and leapt ... during a calendar year.": the question moves
    the fronted date to its end, after a noun, where "18 years ago" would read as part of that noun's
    phrase ("a calendar year 18 years ago"); "in 1998" does not."""
    opening = re.compile(rf"^(?:In|On)\s+(?:[\w-]+\s+){{0,2}}{re.escape(node)}\b")  # "In 1987 Allan ..."
    texts = [text for hop in plan.hops for text in hop.keypoints]
    return bool(_after_fronted(plan, node)) or any(opening.match(text) for text in texts)


def _after_fronted(plan: QuestionPlan, node: str) -> list[str]:
    """What follows the fronted phrase ("In 1998, ...") of each keypoint whose fronted phrase holds `node`."""
    rests = []
    for hop in plan.hops:
        for text in hop.keypoints:
            match = _FRONTED.match(text)
            if match and normalize(node) in normalize(match.group("phrase")):
                rests.append(text[match.end() :])
    return rests


_LAST_APPOSITION = re.compile(r",\s+(?:the|a|an|which|who|whose|where)\b[^,]*$")


def _fronted_before_apposition(plan: QuestionPlan, node: str) -> bool:
    """ "On 8 December 2012, Baku was selected to host the 2015 European Games, the first to be held in
    competition's history.": the question moves the fronted date to the end, after the apposition, where
    a false "7 years ago" reads as the apposition's date."""
    return any(_LAST_APPOSITION.search(rest.rstrip(" .")) for rest in _after_fronted(plan, node))


def _named_as_place(plan: QuestionPlan, node: str) -> bool:
    """A keypoint puts the name right after "at", "near" or "in", as a place: "objects found at Crvena
    Stijena in Montenegro" (spaCy's PERSON); initials would make a person of it."""
    pattern = re.compile(rf"\b(?:at|near|in)\s+{re.escape(node)}\b(?!['’]s)")
    return any(pattern.search(text) for hop in plan.hops for text in hop.keypoints)


_QUOTED = re.compile(r"[\"“]([^\"“”]*)[\"”]")


def _quoted(plan: QuestionPlan, node: str) -> bool:
    """A keypoint quotes the name: 'the long form name ... is "Teyrnas Unedig Prydain Fawr a Gogledd
    Iwerddon"' (spaCy's PERSON); a quotation keeps its words, never initials."""
    return any(
        node in quoted for hop in plan.hops for text in hop.keypoints for quoted in _QUOTED.findall(text)
    )


_FUTURE = re.compile(r"\b(?:will|would|shall|is expected to|are expected to|plans? to|scheduled to)\b", re.I)


def speaks_of_future(plan: QuestionPlan) -> bool:
    """A keypoint that speaks of the future from its own time ("... will be implemented in 2013"): a date
    there cannot be made relative to today without reading wrongly ("will be implemented 3 years ago")."""
    return any(_FUTURE.search(text) for hop in plan.hops for text in hop.keypoints)


def _has_date(changes: Sequence[NodeChange]) -> bool:
    return any(change.rule in DATE_RULES for change in changes)


def false_premise_target(valid: int, share: float) -> int:
    """How many false premises make them `share` of all plans: round half up of share*valid/(1-share)."""
    return math.floor(share * valid / (1 - share) + 0.5)


def _false_change(plan: QuestionPlan, reference: date, seed: int) -> NodeChange | list[Refusal]:
    """One false change for a single-hop plan, from an rng of its own so it does not depend on other
    plans; else the refusal of each node tried (irb/premises.py). Only single-hop plans: in a chain a
    changed node may sit in the description of a bridge, which then picks out nothing (nonsense, not a
    false premise)."""
    if plan.kind != "single_hop":
        return [Refusal("not_single_hop", f"{plan.id} is {plan.kind}")]
    rng = random.Random(f"{seed}:false:{plan.id}")
    nodes = [node for node in changeable_nodes(plan) if node[1] in CHANGED_TYPES]
    if not nodes:
        return [Refusal("no_date_or_quantity", f"{plan.id} has no unmasked Date or Quantity node")]
    rng.shuffle(nodes)
    future = speaks_of_future(plan)
    texts = plan.hops[0].keypoints
    refusals = []
    for node, node_type in nodes:
        if future and node_type == "Date":
            refusals.append(Refusal("date_in_future_text", f"{node!r}: the keypoint speaks of the future"))
            continue
        if {node_type, plan.hops[0].answer_type} == {"Date", "Quantity"}:
            detail = f"{node!r} and the answer {plan.hops[0].answer!r} are a value and its time"
            refusals.append(Refusal("value_and_time", detail + ": a moved one asks about another time"))
            continue
        refusal = _date_refusal(plan, node) if node_type == "Date" else None
        if refusal is not None:
            refusals.append(refusal)
            continue
        change = perturb(node, node_type, reference, rng, texts)
        if isinstance(change, NodeChange) and node_type == "Quantity":
            hop = plan.hops[0]
            held = value_of_the_answer(node, change.replacement, hop.answer, hop.triples, texts)
            change = Refusal("value_of_the_answer", f"{node!r}: {held}") if held else change
        if isinstance(change, NodeChange) and node_type == "Date":
            change = _moved_date_refusal(plan, node) or change
        if isinstance(change, NodeChange):
            return change
        refusals.append(change)
    return refusals


def _moved_date_refusal(plan: QuestionPlan, node: str) -> Refusal | None:
    """Why a false date would read wrongly where the question puts it: beside the asked date ("in what
    year and 3.2% 14 years ago"), or moved from the front to the end, after an apposition it would seem
    to date."""
    if plan.hops[0].answer_type == "Date":
        return Refusal("date_beside_asked_date", f"{node!r} beside the asked date: two times")
    if _fronted_before_apposition(plan, node):
        return Refusal("fronted_date", f"{node!r} moves to the end, after an apposition it seems to date")
    return None


def _date_refusal(plan: QuestionPlan, node: str) -> Refusal | None:
    """Why a date of the plan's fact may not move, read from the whole fact (irb/premises.py)."""
    hop = plan.hops[0]
    checks = (
        ("date_beside_another_date", date_beside_another_date(node, hop.answer, hop.triples)),
        ("date_of_a_ranking", date_of_a_ranking(hop.keypoints)),
        ("date_of_a_common_event", date_of_a_common_event(node, hop.answer, hop.triples, hop.keypoints)),
    )
    return next((Refusal(reason, f"{node!r}: {detail}") for reason, detail in checks if detail), None)


def false_premise_plans(
    valid: Sequence[QuestionPlan],
    share: float,
    reference: date,
    seed: int,
    keep: Callable[[QuestionPlan], Why | None] | None = None,
) -> tuple[list[QuestionPlan], list[Reject]]:
    """False-premise plans ("f:<plan id>") making up `share` of all plans, in the order of `valid`.

    Each is a valid single-hop plan with one Date or Quantity node made false by a clear margin (its
    paraphrase dropped; see irb/premises.py). Candidates are tried in a seeded order; with `keep` (a plan
    -> why its question cannot be written, or None) only those whose question passes are taken. Too few:
    as many as possible, and a reject "false_premise_short" says how many are missing and why the other
    plans gave none (a plan without a false value under the refusal of the last node it tried; a
    refused question under "question: <gate>").
    """
    target = false_premise_target(len(valid), share)
    candidates = []
    why: Counter[str] = Counter()
    for plan in valid if target else ():
        change = _false_change(plan, reference, seed)
        if isinstance(change, NodeChange):
            candidates.append((plan, change))
        else:
            why[change[-1].reason] += 1
    order = list(range(len(candidates)))
    random.Random(f"{seed}:false").shuffle(order)
    taken: list[int] = []
    for index in order:
        if len(taken) == target:
            break
        plan = _false_plan(*candidates[index])
        refused = keep(plan) if keep is not None else None
        if refused is None:
            taken.append(index)
        else:
            why[f"question: {refused[0]}"] += 1
    plans = [_false_plan(*candidates[index]) for index in sorted(taken)]
    rejects = []
    if len(plans) < target:
        short = target - len(plans)
        reasons = ", ".join(f"{reason}: {count}" for reason, count in sorted(why.items()))
        detail = f"wanted {target} false-premise plans, made {len(plans)}: {short} short"
        detail += f" ({len(candidates)} of {len(valid)} plans have a Date or Quantity that can be made"
        detail += f" false by a clear margin; the others: {reasons})"
        extra = {"wanted": target, "made": len(plans), "short": short, "refused": dict(sorted(why.items()))}
        rejects.append(
            Reject(stage=STAGE, reason="false_premise_short", key="false_premise", detail=detail, extra=extra)
        )
    return plans, rejects


def _false_plan(plan: QuestionPlan, change: NodeChange) -> QuestionPlan:
    """The plan with its false change, without the paraphrase of that node (nor a relative date beside a
    false one: one relative date per question)."""
    kept = [old for old in plan.changes if normalize(old.node) != normalize(change.node)]
    if change.rule in DATE_RULES:
        kept = [old for old in kept if old.rule not in DATE_RULES]
    return QuestionPlan(id=f"f:{plan.id}", kind="false_premise", hops=plan.hops, changes=kept + [change])


def make_plans(
    facts: Iterable[Fact],
    graphs: Iterable[KnowledgeGraph],
    *,
    max_hops: int = 2,
    false_premise_share: float = 0.2,
    reference_date: date,
    seed: int,
    max_multi_hop: int | None = None,
    max_per_answer: int = 12,
    documents: Mapping[str, str] | None = None,
    answers_per_fact: int = 1,
) -> tuple[list[QuestionPlan], list[Reject]]:
    """(plans, rejects): single-hop, then multi-hop, then false-premise plans; valid ones paraphrased.

    `answers_per_fact` > 1 also asks, in other single-hop plans, for the next answer-gated nodes of a
    fact ("s:<fact>/k" for its k-th; see `more_single_hop_plans`).

    With `documents` (document id -> main text), multi-hop plans whose answer is already in a first-hop
    document are rejected as shortcuts (see irb/shortcuts.py). `max_multi_hop` then keeps a seeded
    sample of that many multi-hop plans (in their order).

    False premises come from single-hop plans whose question the rules write past every gate, with and
    without the false change (see `false_premise_plans` and irb/premises.py).
    """
    if not 0 <= false_premise_share < 1:
        raise BadInputError(f"false_premise_share must be in [0, 1), got {false_premise_share}")
    if max_multi_hop is not None and max_multi_hop < 0:
        raise BadInputError(f"max_multi_hop must not be negative, got {max_multi_hop}")
    facts, graphs = list(facts), list(graphs)
    pages = page_types(facts)
    page_text: dict[int, list[str]] = {}
    for fact in facts:
        page_text.setdefault(fact.page_id, []).extend(keypoint.text for keypoint in fact.keypoints)
    single, rejects = single_hop_plans(facts, graphs, pages, page_text)
    leads = {fact.id for fact in facts if fact.source == "lead"}
    asked = [plan for plan in single if plan.hops[0].fact_id not in leads]  # leads only describe bridges
    keypoints = {fact.id: [keypoint.text for keypoint in fact.keypoints] for fact in facts}
    graph_of = {graph.fact_id: graph for graph in reversed(graphs)}  # the first graph of a fact wins
    planned = [plan.hops[0].fact_id for plan in single]
    titles = {fact.id: fact.title if fact.source == "citation" else "" for fact in facts}  # leads pick one
    fact_of = {fact.id: fact for fact in facts}
    maskable = {
        fact_id: gated_nodes(
            graph_of[fact_id],
            keypoints[fact_id],
            pages,
            titles[fact_id],
            page_text[fact_of[fact_id].page_id],
            fact_of[fact_id].links,
        )
        for fact_id in planned
    }
    more = more_single_hop_plans(asked, maskable, graph_of, per_fact=answers_per_fact)
    labels = {
        fact_id: {normalize(entity.text): entity.label for entity in reversed(graph_of[fact_id].entities)}
        for fact_id in planned
    }
    bridge_rejects: list[Reject] = []
    normalised = normaliser(documents or {})

    writer = WriteQuestions("rules", graphs=graphs)

    def writable(plan: QuestionPlan) -> Why | None:
        """Why the rules cannot write the plan's question past every gate, or None."""
        failure = writer.rules_failure(plan)
        return None if failure is None else (failure.reason, failure.detail)

    def keep(chain: Sequence[PlanHop]) -> Why | None:
        """Why the rules cannot make this chain a question, or None."""
        plan = QuestionPlan(id="m:", kind="multi_hop", hops=list(chain))
        if not bridge_named_once(*chain[-2:]):
            return "bridge_named_twice", f"{chain[-1].bridge!r} stays in the question beside its description"
        shortcut = shortcut_document(plan, normalised)
        if shortcut is not None:
            return SHORTCUT, f"the answer {plan.answer!r} is in {shortcut}, a document of the first hop"
        return writable(plan)

    multi = multi_hop_plans(
        single,
        max_hops,
        random.Random(f"{seed}:multi"),
        maskable=maskable,
        labels=labels,
        max_per_answer=max_per_answer,
        rejects=bridge_rejects,
        describe=lambda hop: described_well(hop, writer),
        keep=keep,
        nouns={fact.title: fact.page_noun for fact in facts if fact.page_noun},
        self_described={
            fact.id for fact in facts if fact.source == "lead" and fact.lead_claims[0].kind == "definite"
        },
    )
    rejects = rejects + bridge_rejects
    if documents is not None:
        multi, shortcuts = drop_shortcuts(multi, documents)
        rejects = rejects + shortcuts
    if max_multi_hop is not None and len(multi) > max_multi_hop:
        kept = sorted(random.Random(f"{seed}:multi-cap").sample(range(len(multi)), max_multi_hop))
        multi = [multi[index] for index in kept]
    valid = [
        plan.model_copy(update={"changes": paraphrase_changes(plan, reference_date, labels)})
        for plan in asked + more + multi
    ]
    false, short = false_premise_plans(valid, false_premise_share, reference_date, seed, writable)
    return valid + false, rejects + short

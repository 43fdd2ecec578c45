"""Which nodes of a fact's knowledge graph may be masked, and how masked answers link graphs.

A node is maskable (IRB §A.1) when it is a named entity, appears in every keypoint, names one entity,
is not contained in another node, and is the only head (or tail) of its relation. Each criterion is a
predicate of its own, so a reject can name the first one a node fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rapidfuzz import fuzz, process

from irbgen.irb.records import Entity, KnowledgeGraph, Triple

CONTAINED_THRESHOLD = 75  # rapidfuzz partial_ratio, as IRB uses
BRIDGE_THRESHOLD = 90  # rapidfuzz score for two spellings of one node across graphs
SURNAME_PREFILTER = 80  # looser score on last words, to find the candidates the surname rule checks

_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’]s?$")
_NOT_ATOMIC = re.compile(r"\band\b|&|\bet\s+al\b", re.IGNORECASE)


@lru_cache(maxsize=1 << 18)
def normalize(node: str) -> str:
    """Lowercase, single spaces, no leading "the", no trailing possessive or punctuation."""
    text = " ".join(node.split()).strip(' ,;:.!?"()[]')
    text = _POSSESSIVE.sub("", _LEADING_THE.sub("", text))
    return text.casefold().strip()


def is_named_entity(node: str, entities: Iterable[Entity]) -> bool:
    """The node equals a spaCy entity span (case-insensitive, ignoring a leading "the")."""
    key = normalize(node)
    return bool(key) and any(normalize(entity.text) == key for entity in entities)


def _mention(node: str) -> re.Pattern[str] | None:
    words = normalize(node).split()
    if not words:
        return None
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(word) for word in words) + r"(?!\w)", re.IGNORECASE)


def in_every_keypoint(node: str, keypoints: Sequence[str]) -> bool:
    """The node occurs as whole words in each keypoint (case-insensitive); False without keypoints."""
    pattern = _mention(node)
    return pattern is not None and bool(keypoints) and all(pattern.search(text) for text in keypoints)


def is_atomic(node: str) -> bool:
    """The node names one entity: no "and", "&" or "et al"."""
    return _NOT_ATOMIC.search(node) is None


def contained_in_other_node(node: str, nodes: Iterable[str], threshold: int = CONTAINED_THRESHOLD) -> bool:
    """A distinct, longer node contains this one (rapidfuzz partial_ratio >= threshold)."""
    key = normalize(node)
    for other in nodes:
        other_key = normalize(other)
        if other_key != key and len(other_key) > len(key) and fuzz.partial_ratio(key, other_key) >= threshold:
            return True
    return False


def unique_for_relation(node: str, triples: Iterable[Triple]) -> bool:
    """Where the node is a tail, its (head, relation) has no other tail; where a head, likewise."""
    key = normalize(node)
    tails: dict[tuple[str, str], set[str]] = {}
    heads: dict[tuple[str, str], set[str]] = {}
    for triple in triples:
        head, relation, tail = normalize(triple.head), normalize(triple.relation), normalize(triple.tail)
        tails.setdefault((head, relation), set()).add(tail)
        heads.setdefault((relation, tail), set()).add(head)
    groups = list(tails.values()) + list(heads.values())
    return not any(key in seen and len(seen) > 1 for seen in groups)


def triple_nodes(triples: Iterable[Triple]) -> list[tuple[str, str, bool]]:
    """(node, type, is_head) in order, heads before tails of a triple; one entry per normalized node,
    with its first spelling and type, and is_head True when it heads any triple."""
    nodes: list[tuple[str, str, bool]] = []
    seen: dict[str, int] = {}
    for triple in triples:
        for node, node_type, is_head in (
            (triple.head, triple.head_type, True),
            (triple.tail, triple.tail_type, False),
        ):
            key = normalize(node)
            if not key:
                continue
            if key in seen:
                first, first_type, was_head = nodes[seen[key]]
                nodes[seen[key]] = (first, first_type, was_head or is_head)
                continue
            seen[key] = len(nodes)
            nodes.append((node, node_type, is_head))
    return nodes


def graph_nodes(graph: KnowledgeGraph) -> list[tuple[str, str, bool]]:
    """`triple_nodes` of the graph's triples."""
    return triple_nodes(graph.triples)


def why_not_maskable(node: str, graph: KnowledgeGraph, keypoints: Sequence[str]) -> str | None:
    """The name of the first criterion the node fails, or None when it is maskable."""
    if not is_named_entity(node, graph.entities):
        return "not_named_entity"
    if not in_every_keypoint(node, keypoints):
        return "not_in_every_keypoint"
    if not is_atomic(node):
        return "not_atomic"
    others = [other for other, _, _ in graph_nodes(graph)]
    if contained_in_other_node(node, others):
        return "contained_in_other_node"
    if not unique_for_relation(node, graph.triples):
        return "not_unique_for_relation"
    return None


def maskable_nodes(graph: KnowledgeGraph, keypoints: Sequence[str]) -> list[tuple[str, str]]:
    """(node, type) of the maskable nodes, in graph order (heads before tails of the same triple)."""
    return [
        (node, node_type)
        for node, node_type, _ in graph_nodes(graph)
        if why_not_maskable(node, graph, keypoints) is None
    ]


def first_maskable(graph: KnowledgeGraph, keypoints: Sequence[str]) -> tuple[str, str] | None:
    """IRB's single-hop target: the first maskable head, else the first maskable tail, else None."""
    maskable = {normalize(node) for node, _ in maskable_nodes(graph, keypoints)}
    heads = [(triple.head, triple.head_type) for triple in graph.triples]
    tails = [(triple.tail, triple.tail_type) for triple in graph.triples]
    return next(((node, node_type) for node, node_type in heads + tails if normalize(node) in maskable), None)


def _surname_of(short: str, full: str) -> bool:
    """`short` spells the last words of the longer name `full` (rapidfuzz ratio >= 90)."""
    short_words, full_words = short.split(), full.split()
    if len(short_words) >= len(full_words):
        return False
    return fuzz.ratio(short, " ".join(full_words[-len(short_words) :])) >= BRIDGE_THRESHOLD


def same_node(a: str, a_type: str, b: str, b_type: str) -> bool:
    """Whether two nodes of different graphs name the same thing.

    Equal after `normalize`; or, for nodes of the same type without digits, rapidfuzz ratio >= 90
    (spelling and punctuation variants); or, for two Person nodes, one is the other's surname
    ("Marrow" and "Ilse Marrow"). token_set_ratio is not used: it also matches "Vellmouth" with
    "Vellmouth Orchid Festival", which a small NER model may tag as a person.
    """
    a_key, b_key = normalize(a), normalize(b)
    if not a_key or not b_key:
        return False
    if a_key == b_key:
        return True
    if a_type != b_type or any(char.isdigit() for char in a_key + b_key):
        return False  # "12 March 2024" is not "13 March 2024", though ratio says 92
    if fuzz.ratio(a_key, b_key) >= BRIDGE_THRESHOLD:
        return True
    return a_type == "Person" and (_surname_of(a_key, b_key) or _surname_of(b_key, a_key))


class NodeIndex:
    """Nodes of many graphs by owner (a fact id), to find the owners of nodes `same_node` may accept
    without comparing a node against every other: exact keys, rapidfuzz over the distinct spellings of
    one type, and for Person nodes over last words."""

    def __init__(self) -> None:
        self._owners: dict[str, set[str]] = {}
        self._spellings: dict[str, set[str]] = {}
        self._by_last_word: dict[str, set[str]] = {}
        self._sorted: tuple[dict[str, list[str]], list[str]] | None = None

    def add(self, owner: str, node: str, node_type: str) -> None:
        """Record that `owner`'s graph has this node."""
        key = normalize(node)
        if not key:
            return
        self._owners.setdefault(key, set()).add(owner)
        if not any(char.isdigit() for char in key):
            self._spellings.setdefault(node_type, set()).add(key)
            if node_type == "Person":
                self._by_last_word.setdefault(key.split()[-1], set()).add(key)
        self._sorted = None

    def _choices(self) -> tuple[dict[str, list[str]], list[str]]:
        """(spellings by type, last words of Person nodes), sorted so matches come in a stable order."""
        if self._sorted is None:
            by_type = {kind: sorted(keys) for kind, keys in self._spellings.items()}
            self._sorted = by_type, sorted(self._by_last_word)
        return self._sorted

    def owners(self, node: str, node_type: str) -> set[str]:
        """Owners of every node that may be `same_node` as this one (a superset: check each with it)."""
        key = normalize(node)
        found = set(self._owners.get(key, ()))
        if not key or any(char.isdigit() for char in key):
            return found
        by_type, last_words = self._choices()
        spellings = by_type.get(node_type, [])
        for match, _, _ in process.extract(
            key, spellings, scorer=fuzz.ratio, score_cutoff=BRIDGE_THRESHOLD, limit=None
        ):
            found |= self._owners[match]
        if node_type == "Person":
            last = key.split()[-1]
            for word, _, _ in process.extract(
                last, last_words, scorer=fuzz.ratio, score_cutoff=SURNAME_PREFILTER, limit=None
            ):
                for spelling in self._by_last_word[word]:
                    found |= self._owners[spelling]
        return found

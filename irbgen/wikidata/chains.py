"""Chains of 1-4 connected Wikidata triples under MINTQA's constraints, stratified by hop count and labels.

A chain is a path Q1 -P-> Q2 -P-> ... -> answer. Every sampled chain is:

- connected: each tail is an item and is the next hop's head; only the last tail may be a literal;
- acyclic: no entity appears twice on the path;
- never back over itself: no hop takes the inverse of the hop before it (follows after followed by,
  capital of after capital, shares border with twice: `relations.is_inverse`);
- about things, not classes: neither the subject nor a bridge is a class, a Wikimedia category or list
  page (`relations.is_class`); the answer may be one (an occupation, a genre);
- unique: every hop is the statement `answerable.select` picks for its (head, property): the only
  truthy value, or the one its latest point in time or its missing end time singles out;
- shortcut-free: no statement in the knowledge base (any property, excluded ones too) goes from an
  entity of the path to a later, non-adjacent node of the path; the final literal counts as a node, so a
  date reachable in one step from the first head is a shortcut too. The base holds what the reader kept:
  the statements it dropped as never asked (`answerable.never_asked`) are in no passage either, and are
  no shortcut;
- not a sub-chain: no output chain is a contiguous part of another output chain. Longer chains win:
  hop counts are sampled longest first and shorter candidates inside an already chosen chain are
  skipped, so the shorter hop counts still fill their quotas from other candidates.

Statements that make poor questions are skipped: ids in `DEFAULT_EXCLUDED` and the denied list,
datatypes in `DEFAULT_EXCLUDED_DATATYPES` (external ids, URLs, coordinates, media, ...; the property's
datatype, else the statement's own), and the values `answerable.why_unusable` refuses. The reader has
already dropped most of them; these checks stay for what it keeps (instance of, a property entity's
datatype, a base read with `--keep-all-statements`).

Strata (`irbgen.wikidata.labels.stratum`): a chain's popularity composition (all hops popular, all
unpopular, or mixed) and newness composition (all new, all old, mixed, or unknown without an old dump),
written "unpopular-new". Each hop count gets `per_hop` chains, split over the strata by `mix` weights
(`labels.parse_mix`) with `allocate_quotas`: a stratum short of candidates leaves its share to the others.

Bounded work (`SamplingCaps`): per hop count, seeds (items) are visited in a seeded random order and a
depth-first search from each tries at most `max_branch` random out-edges per entity and
`max_seed_expansions` edges in all; a partial path is dropped once every stratum it could still end in
is full; a seed gives at most `max_per_seed` chains to each stratum; each stratum keeps at most `per_hop`
candidates; the search stops when every weighted stratum is full or after `max_expansions` edges.
Nothing enumerates every path of a large graph, and the graph's indexes are built lazily per head.

Property caps (`PropertyCaps`, `--property-share` 0.25, `--trivial-share` 0), applied twice:

- in sampling, against the build's target: no property ends more than `share` of per_hop x hop counts
  chains or takes more than `share` of per_hop x (sum of hop counts) hops, at least one each; a trivial
  property (`irbgen/resources/wikidata/trivial_properties.txt`: sex or gender, ...) takes at most
  `trivial_share` of them (0: none). A candidate over a cap is not sampled (`property_cap_N_hop` in the
  manifest's chain_sampling), so the search goes on to other properties; while one hop count is
  collected its held candidates count against the caps, then only the chains chosen do;
- on the chains that got a question (`over_caps`, in the samples step): the same shares of the samples
  actually written and of their hops, exactly; a chain over is a reject `property_cap`.

Both follow the seeded order, so the caps are deterministic.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from urllib.parse import quote

from irbgen.errors import BadInputError
from irbgen.wikidata.answerable import EXCLUDED_DATATYPES, datatype, is_selected, why_unusable
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.labels import (
    Newness,
    Popularity,
    label_hop,
    mix_weights,
    possible_strata,
    stratum_weight,
)
from irbgen.wikidata.labels import stratum as stratum  # part of this module's API: the chain's stratum
from irbgen.wikidata.records import Chain, ChainHop, Statement
from irbgen.wikidata.relations import inverse_step, is_class, is_inverse
from irbgen.wikidata.vocabulary import load_trivial

DEFAULT_EXCLUDED: frozenset[str] = frozenset(
    {
        "P31",  # instance of: a class, not a fact worth a question, and a hub that links everything
        "P279",  # subclass of: same
        "P856",  # official website
        "P625",  # coordinate location
        "P18",  # image
        "P154",  # logo image
        "P373",  # Commons category (a string datatype, so the datatype rule misses it)
        "P910",  # topic's main category
        "P1343",  # described by source
        "P460",  # said to be the same as
        "P1889",  # different from
    }
)
# media, links and ids: their values are not something a question can ask for in words
DEFAULT_EXCLUDED_DATATYPES: frozenset[str] = EXCLUDED_DATATYPES
_BAD_TAILS = frozenset({"globecoordinate", "other"})
_ID_UNSAFE = re.compile(r"[\s%]")


@dataclass(frozen=True)
class SamplingCaps:
    """Bounds on the search for one hop count (see the module docstring)."""

    max_expansions: int | None = None  # None: max(20_000, 20 * per_hop * weighted strata)
    max_seed_expansions: int = 500
    max_branch: int = 16
    max_per_seed: int = 2


@dataclass(frozen=True)
class PropertyCaps:
    """How much of a build one property may take (see "Property caps" in the module docstring)."""

    share: float = 0.25  # of the final hops, and of all hops, the build asks for
    trivial_share: float = 0.0  # of all hops, for each trivial property
    trivial: frozenset[str] | None = None  # None: trivial_properties.txt

    def __post_init__(self) -> None:
        for name in ("share", "trivial_share"):
            if not 0 <= getattr(self, name) <= 1:
                flag = name.replace("_", "-")
                raise BadInputError(f"--{flag} must be within 0-1, got {getattr(self, name)}")


NO_PROPERTY_CAPS = PropertyCaps(share=1.0, trivial_share=1.0)


def _limit(share: float, total: int, least: int) -> float:
    """share x total, rounded down, at least `least`; a share of 1 caps nothing (candidates held count)."""
    return max(least, math.floor(share * total)) if share < 1 else math.inf


class _PropertyCounter:
    """Uses of each property by the chains chosen so far plus the candidates held, against the caps."""

    def __init__(self, caps: PropertyCaps, per_hop: int, counts: list[int]) -> None:
        self.trivial = caps.trivial if caps.trivial is not None else load_trivial()
        self.final_limit = _limit(caps.share, per_hop * len(counts), 1)
        self.any_limit = _limit(caps.share, per_hop * sum(counts), 1)
        self.trivial_limit = _limit(caps.trivial_share, per_hop * sum(counts), 0)
        self.final: Counter = Counter()
        self.any: Counter = Counter()

    def allows(self, properties: list[str]) -> bool:
        """Whether a chain over these properties keeps every count within its cap."""
        if self.final[properties[-1]] >= self.final_limit:
            return False
        for prop, uses in Counter(properties).items():
            limit = self.trivial_limit if prop in self.trivial else self.any_limit
            if self.any[prop] + uses > limit:
                return False
        return True

    def add(self, properties: list[str]) -> None:
        self.final[properties[-1]] += 1
        self.any.update(properties)

    def recount(self, chains: list[Chain]) -> None:
        """Count the chosen chains only (the candidates not chosen give their uses back)."""
        self.final, self.any = Counter(), Counter()
        for chain in chains:
            self.add([hop.statement.property for hop in chain.hops])


def over_caps(chains: list[Chain], caps: PropertyCaps, seed: int) -> dict[str, str]:
    """Chains to drop so that, among those left, no property ends more than `caps.share` of the chains or
    takes more than `caps.share` of the hops (at least one use each), and no trivial property more than
    `caps.trivial_share` of the hops: chain id -> the property it was dropped for.

    While a property is over, one chain using it is dropped: most uses of it first, then fewest hops (a
    long chain is rarer), then a seeded order. Deterministic for the same chains, caps and seed.
    """
    trivial = caps.trivial if caps.trivial is not None else load_trivial()
    properties = {chain.id: [hop.statement.property for hop in chain.hops] for chain in chains}
    rank = {chain_id: random.Random(f"{seed}:{chain_id}").random() for chain_id in properties}
    final = Counter(props[-1] for props in properties.values())
    uses = Counter(prop for props in properties.values() for prop in props)
    kept, hops = len(properties), sum(uses.values())
    dropped: dict[str, str] = {}

    def excess(prop: str) -> float:
        over_final = final[prop] - max(1, math.floor(caps.share * kept))
        share = caps.trivial_share if prop in trivial else caps.share
        floor = 0 if prop in trivial else 1
        return max(over_final, uses[prop] - max(floor, math.floor(share * hops)))

    queues: dict[str, Iterator[str]] = {}  # per property, its chains in the order they are dropped

    def queue(prop: str) -> Iterator[str]:
        if prop not in queues:
            using = [cid for cid, props in properties.items() if prop in props]
            order = lambda cid: (-properties[cid].count(prop), len(properties[cid]), rank[cid])  # noqa: E731
            queues[prop] = iter(sorted(using, key=order))
        return queues[prop]

    while kept:
        prop = min(uses, key=lambda p: (-excess(p), p))
        if excess(prop) <= 0:
            break
        victim = next(cid for cid in queue(prop) if cid not in dropped)
        dropped[victim] = prop
        final[properties[victim][-1]] -= 1
        uses.subtract(properties[victim])
        kept, hops = kept - 1, hops - len(properties[victim])
    return dropped


EXHAUSTIVE = SamplingCaps(
    max_expansions=10**12, max_seed_expansions=10**12, max_branch=10**9, max_per_seed=10**9
)


# --- chains and their constraints -----------------------------------------------------------------------


def chain_id(statements: Iterable[Statement]) -> str:
    """A readable, stable id without whitespace: "c:Q1>P57>Q2>P19>Q3".

    A literal answer is written as its value key with whitespace and "%" percent-encoded
    ("c:Q1>P1448>monolingualtext:Kingdom%20of%20Aldermark@en"), so the id can be a run file's query id.
    """
    statements = list(statements)
    parts = [statements[0].head] if statements else []
    for statement in statements:
        parts += [statement.property, _ID_UNSAFE.sub(lambda m: quote(m.group(), safe=""), statement.tail.key)]
    return "c:" + ">".join(parts)


def path_nodes(chain: Chain) -> list[str]:
    """The first head, then every tail's key: the nodes a connected chain walks through."""
    if not chain.hops:
        return []
    return [chain.hops[0].statement.head, *(hop.statement.tail.key for hop in chain.hops)]


def is_connected(chain: Chain) -> bool:
    """Non-empty, and every tail but the last is an entity that is the next hop's head."""
    hops = [hop.statement for hop in chain.hops]
    if not hops:
        return False
    return all(
        earlier.tail.type == "entity" and earlier.tail.id == later.head
        for earlier, later in zip(hops, hops[1:], strict=False)
    )


def is_acyclic(chain: Chain) -> bool:
    """No entity appears twice among the path's nodes (the first head and the entity tails)."""
    hops = chain.hops
    entities = [hop.statement.tail.id for hop in hops if hop.statement.tail.type == "entity"]
    if hops:
        entities.insert(0, hops[0].statement.head)
    return len(entities) == len(set(entities))


def has_unique_answers(chain: Chain, kb: KnowledgeBase) -> bool:
    """Every hop is the statement `answerable.select` picks for its (head, property): its only value,
    or the one a point in time or a missing end time singles out."""
    return all(is_selected(kb, hop.statement) for hop in chain.hops)


def walks_back(chain: Chain) -> bool:
    """Whether some hop takes the inverse of the hop before it (`relations.inverse_step`)."""
    return inverse_step(hop.statement.property for hop in chain.hops) is not None


def class_nodes(chain: Chain, kb: KnowledgeBase) -> list[str]:
    """The subject and bridges of the chain that are classes (`relations.is_class`); the answer may be."""
    return [hop.statement.head for hop in chain.hops if is_class(kb, hop.statement.head)]


def has_shortcut(chain: Chain, kb: KnowledgeBase) -> bool:
    """Whether some statement goes from a path node straight to a later, non-adjacent path node."""
    nodes = path_nodes(chain)
    for i, node in enumerate(nodes[:-2]):
        reachable = {statement.tail.key for statement in kb.by_head.get(node, ())}
        if reachable.intersection(nodes[i + 2 :]):
            return True
    return False


def is_subchain(chain: Chain, other: Chain) -> bool:
    """Whether chain's triples appear contiguously, in order, in other's (a chain is its own sub-chain)."""
    inner = [hop.statement.key for hop in chain.hops]
    outer = [hop.statement.key for hop in other.hops]
    size = len(inner)
    return any(outer[start : start + size] == inner for start in range(len(outer) - size + 1))


def is_excluded(
    statement: Statement,
    kb: KnowledgeBase,
    exclude_properties: frozenset[str] = DEFAULT_EXCLUDED,
    exclude_datatypes: frozenset[str] = DEFAULT_EXCLUDED_DATATYPES,
) -> bool:
    """Whether the statement's property, datatype or value makes a poor question (`answerable`)."""
    if statement.property in exclude_properties or statement.tail.type in _BAD_TAILS:
        return True
    if datatype(kb, statement) in exclude_datatypes:
        return True
    return why_unusable(kb, statement) not in (None, "excluded_datatype", "unlabelled_entity")


def violations(
    chain: Chain,
    kb: KnowledgeBase,
    exclude_properties: frozenset[str] = DEFAULT_EXCLUDED,
    exclude_datatypes: frozenset[str] = DEFAULT_EXCLUDED_DATATYPES,
) -> list[str]:
    """The constraints a chain breaks: "connected", "acyclic", "inverse", "class", "unique", "shortcut",
    "excluded"."""
    broken = []
    if not is_connected(chain):
        broken.append("connected")
    if not is_acyclic(chain):
        broken.append("acyclic")
    if walks_back(chain):
        broken.append("inverse")
    if class_nodes(chain, kb):
        broken.append("class")
    if not has_unique_answers(chain, kb):
        broken.append("unique")
    if has_shortcut(chain, kb):
        broken.append("shortcut")
    if any(is_excluded(hop.statement, kb, exclude_properties, exclude_datatypes) for hop in chain.hops):
        broken.append("excluded")
    return broken


def subsequences(chain: Chain) -> set[tuple[str, ...]]:
    """Every contiguous run of the chain's statement keys, the whole chain included."""
    keys = tuple(hop.statement.key for hop in chain.hops)
    return {keys[start:end] for start in range(len(keys)) for end in range(start + 1, len(keys) + 1)}


# --- quotas -----------------------------------------------------------------------------------------


def _shares(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Split total by weights with largest remainders (ties: stratum name)."""
    exact = {
        name: Fraction(total) * Fraction(weight) / sum(map(Fraction, weights.values()))
        for name, weight in weights.items()
    }
    shares = {name: math.floor(value) for name, value in exact.items()}
    left = total - sum(shares.values())
    for name in sorted(exact, key=lambda name: (-(exact[name] - shares[name]), name))[:left]:
        shares[name] += 1
    return shares


def allocate_quotas(total: int, weights: Mapping[str, float], available: Mapping[str, int]) -> dict[str, int]:
    """Split total over weighted strata; a stratum short of its share gives the rest to the others."""
    active = sorted(name for name, weight in weights.items() if weight > 0 and available.get(name, 0) > 0)
    quotas: dict[str, int] = {}
    remaining = total
    while active and remaining > 0:
        shares = _shares(remaining, {name: weights[name] for name in active})
        short = [name for name in active if shares[name] >= available[name]]
        if not short:
            quotas.update(shares)
            break
        for name in short:
            quotas[name] = available[name]
            remaining -= available[name]
        active = [name for name in active if name not in short]
    return {name: quota for name, quota in sorted(quotas.items()) if quota > 0}


# --- sampling -------------------------------------------------------------------------------------------


Step = tuple[Statement, str, str]  # a usable edge with its statement key and tail key, computed once


class _Graph:
    """Lazy per-head views of the base: edges a chain may use, and every tail a head reaches."""

    def __init__(self, kb: KnowledgeBase, exclude_properties, exclude_datatypes) -> None:
        self.kb = kb
        self.exclude = (frozenset(exclude_properties), frozenset(exclude_datatypes))
        self._out: dict[str, list[Step]] = {}
        self._reach: dict[str, frozenset[str]] = {}
        self._classes: dict[str, bool] = {}
        self._seeds: list[str] | None = None

    def _usable(self, statement: Statement) -> bool:
        if is_excluded(statement, self.kb, *self.exclude):
            return False
        tail = statement.tail
        if tail.type == "entity" and (not tail.id or not self._is_item(tail.id)):
            return False
        return is_selected(self.kb, statement)

    def _is_item(self, entity_id: str) -> bool:
        return self.kb.kind(entity_id) == "item"

    def is_class(self, entity_id: str) -> bool:
        """`relations.is_class`, cached."""
        if entity_id not in self._classes:
            self._classes[entity_id] = is_class(self.kb, entity_id)
        return self._classes[entity_id]

    def seeds(self) -> list[str]:
        """Items that head at least one statement and are not classes, sorted (a fresh list each call)."""
        if self._seeds is None:
            heads = (head for head in self.kb.by_head if self._is_item(head))
            self._seeds = sorted(head for head in heads if not self.is_class(head))
        return list(self._seeds)

    def out(self, head: str) -> list[Step]:
        """The head's usable edges, one per statement key, sorted by (property, tail key).

        Wikidata repeats a value under one property when the claims differ in qualifiers (two terms of
        the same office); as hops they are the same, and two of them would make one chain twice.
        """
        if head not in self._out:
            usable: dict[str, Step] = {}
            for statement in self.kb.by_head.get(head, ()):
                if statement.key not in usable and self._usable(statement):
                    usable[statement.key] = (statement, statement.key, statement.tail.key)
            self._out[head] = sorted(usable.values(), key=lambda step: (step[0].property, step[2]))
        return self._out[head]

    def reach(self, head: str) -> frozenset[str]:
        """The tail keys of every statement of the head, usable or not."""
        if head not in self._reach:
            self._reach[head] = frozenset(s.tail.key for s in self.kb.by_head.get(head, ()))
        return self._reach[head]


class _Labeller:
    """label_hop with a cache per statement key."""

    def __init__(self, popularity: Popularity, threshold: float, newness: Newness | None) -> None:
        self.popularity, self.threshold, self.newness = popularity, threshold, newness
        self._cache: dict[str, ChainHop] = {}

    def hop(self, statement: Statement, key: str) -> ChainHop:
        if key not in self._cache:
            self._cache[key] = label_hop(statement, self.popularity, self.threshold, self.newness)
        return self._cache[key]

    def chain(self, steps: list[Step]) -> Chain:
        statements = [statement for statement, _, _ in steps]
        return Chain(id=chain_id(statements), hops=[self.hop(statement, key) for statement, key, _ in steps])


def _reachable(seen: frozenset[bool | None], yes: str, no: str) -> tuple[str, ...]:
    """Compositions a path can still end in, given the flags of its hops so far."""
    if None in seen:
        return ("unknown",)
    if len(seen) == 2:
        return ("mixed",)
    if seen:
        return (yes if True in seen else no, "mixed")
    return (yes, no, "mixed", "unknown")


def _final(seen: frozenset[bool | None], yes: str, no: str) -> str:
    """The composition of a finished path (same rule as `stratum`)."""
    return _reachable(seen, yes, no)[0]


class _Walker:
    """Depth-first search for chains of one length from one seed, within an edge allowance.

    A prefix is abandoned as soon as every stratum it could still end in is closed (full, or weightless).
    """

    def __init__(self, graph: _Graph, labeller: _Labeller, length: int, rng: random.Random, caps, allowance):
        self.graph, self.labeller, self.length, self.rng, self.caps = graph, labeller, length, rng, caps
        self.allowance = allowance
        self.spent = 0
        self.open: set[str] = set()  # the strata that still take candidates; the caller keeps it current

    def paths(self, seed: str) -> Iterator[tuple[list[Step], str]]:
        """Paths from seed that meet the chain constraints and can land in an open stratum, with it."""
        yield from self._walk([seed], [], frozenset(), frozenset())

    def _is_open(self, pops: frozenset, news: frozenset) -> bool:
        return any(
            f"{p}-{n}" in self.open
            for p in _reachable(pops, "popular", "unpopular")
            for n in _reachable(news, "new", "old")
        )

    def _walk(self, nodes: list[str], path: list[Step], pops: frozenset, news: frozenset):
        options = self.graph.out(nodes[-1])
        for step in self.rng.sample(options, min(len(options), self.caps.max_branch)):
            if self.spent >= self.allowance:
                return
            self.spent += 1
            statement, key, tail_key = step
            last = len(path) + 1 == self.length
            if not self._may_append(nodes, path, statement, tail_key, last):
                continue
            hop = self.labeller.hop(statement, key)
            more_pops, more_news = pops | {hop.popular}, news | {hop.new}
            if not self._is_open(more_pops, more_news):
                continue
            path.append(step)
            if last:
                name = f"{_final(more_pops, 'popular', 'unpopular')}-{_final(more_news, 'new', 'old')}"
                if name in self.open:
                    yield list(path), name
            else:
                nodes.append(tail_key)
                yield from self._walk(nodes, path, more_pops, more_news)
                nodes.pop()
            path.pop()

    def _may_append(
        self, nodes: list[str], path: list[Step], statement: Statement, tail_key: str, last: bool
    ) -> bool:
        if statement.tail.type != "entity" and not last:
            return False
        if tail_key in nodes:
            return False
        if path and is_inverse(path[-1][0].property, statement.property):
            return False
        if not last and self.graph.is_class(tail_key):
            return False
        return not any(tail_key in self.graph.reach(node) for node in nodes[:-1])


def _hop_counts(hops: tuple[int, int] | Iterable[int]) -> list[int]:
    """(lo, hi) as an inclusive range, or a range/set of hop counts; each must be >= 1."""
    if isinstance(hops, tuple | list) and len(hops) == 2:
        counts = list(range(hops[0], hops[1] + 1))
    else:
        counts = sorted(set(hops))
    if not counts or any(not isinstance(count, int) or count < 1 for count in counts):
        raise BadInputError(f"--hops: {hops!r} must name hop counts >= 1, e.g. 1-4")
    return counts


def _collect(
    graph: _Graph,
    labeller: _Labeller,
    length: int,
    weights: dict[str, float],
    per_hop: int,
    blocked: set[tuple[str, ...]],
    caps: SamplingCaps,
    rng: random.Random,
    stats: Counter,
    uses: _PropertyCounter,
) -> dict[str, list[Chain]]:
    """Candidates of one length by stratum, each stratum holding at most per_hop."""
    budget = caps.max_expansions or max(20_000, 20 * per_hop * len(weights))
    buckets: dict[str, list[Chain]] = {name: [] for name in weights}
    spent = 0
    seeds = graph.seeds()
    rng.shuffle(seeds)
    for seed in seeds:
        unfilled = {name for name, bucket in buckets.items() if len(bucket) < per_hop}
        if spent >= budget or not unfilled:
            break
        walker = _Walker(graph, labeller, length, rng, caps, min(caps.max_seed_expansions, budget - spent))
        walker.open = unfilled
        given: Counter = Counter()
        for steps, name in walker.paths(seed):
            if tuple(key for _, key, _ in steps) in blocked:
                stats[f"subchains_skipped_{length}_hop"] += 1
                continue
            properties = [statement.property for statement, _, _ in steps]
            if not uses.allows(properties):
                stats[f"property_cap_{length}_hop"] += 1
                continue
            uses.add(properties)
            buckets[name].append(labeller.chain(steps))
            given[name] += 1
            if len(buckets[name]) >= per_hop or given[name] >= caps.max_per_seed:
                walker.open.discard(name)
            if not walker.open:
                break
        spent += walker.spent
    stats[f"expansions_{length}_hop"] += spent
    return buckets


def sample_chains(
    kb: KnowledgeBase,
    *,
    hops: tuple[int, int] | Iterable[int] = (1, 4),
    per_hop: int = 50,
    mix: str | Mapping[str, float] | None = None,
    popularity: Popularity,
    threshold: float,
    newness: Newness | None,
    rng: random.Random,
    exclude_properties: frozenset[str] = DEFAULT_EXCLUDED,
    exclude_datatypes: frozenset[str] = DEFAULT_EXCLUDED_DATATYPES,
    caps: SamplingCaps | None = None,
    property_caps: PropertyCaps | None = None,
    stats: Counter | None = None,
) -> list[Chain]:
    """Up to per_hop chains per hop count, split over strata by mix, sorted by (hops, id).

    `hops` is an inclusive (lo, hi) pair or any other collection of hop counts. `mix` is a --mix string
    or a mapping of the same names (`parse_mix`); without it every stratum weighs the same, so the
    strata found share each hop count's quota equally. `property_caps` (default `PropertyCaps()`) bounds
    each property's share. `stats`, when given, receives counts per hop count: edges tried, candidates
    and chains per stratum, sub-chains skipped, candidates over a property cap.
    """
    counts = _hop_counts(hops)
    if per_hop < 0:
        raise BadInputError(f"per-hop quota {per_hop} must be >= 0")
    weights = mix_weights(mix)
    caps = caps or SamplingCaps()
    stats = stats if stats is not None else Counter()
    has_old = newness is not None and newness.old is not None
    by_length = {
        length: {
            name: w for name in possible_strata(length, has_old) if (w := stratum_weight(weights, name)) > 0
        }
        for length in counts
    }
    if not any(by_length.values()):
        raise BadInputError(
            f"--mix gives no weight to a stratum that can occur ({'with' if has_old else 'without'} an old "
            f"dump: {', '.join(possible_strata(max(counts), has_old))})"
        )
    graph = _Graph(kb, exclude_properties, exclude_datatypes)
    labeller = _Labeller(popularity, threshold, newness)
    blocked: set[tuple[str, ...]] = set()
    uses = _PropertyCounter(property_caps or PropertyCaps(), per_hop, counts)
    chosen: list[Chain] = []
    for length in sorted(counts, reverse=True):  # longest first: shorter chains avoid the chosen ones
        if not by_length[length] or per_hop == 0:
            continue
        weights = by_length[length]
        buckets = _collect(graph, labeller, length, weights, per_hop, blocked, caps, rng, stats, uses)
        available = {name: len(bucket) for name, bucket in buckets.items()}
        stats.update({f"candidates_{length}_hop:{name}": count for name, count in available.items() if count})
        for name, quota in allocate_quotas(per_hop, by_length[length], available).items():
            stats[f"chains_{length}_hop:{name}"] += quota
            for chain in rng.sample(buckets[name], quota):
                chosen.append(chain)
                blocked |= subsequences(chain)
        uses.recount(chosen)
    return sorted(chosen, key=lambda chain: (len(chain.hops), chain.id))

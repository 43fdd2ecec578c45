"""Which fact describes a bridge: a multi-hop question names its bridge by a short fact about it.

A 2-hop question asks for something of a bridge entity without naming it: "Who managed the person who
was married to Brooke Shields from 1997 to 1999?". The inner fact ("who was married to ...") should be
short, one clause, about the bridge as its subject, and pick it out: a rank ("the largest", "the
first", "the main"), an exact figure, a full date or another person. A year alone does not: many people
"became a Foreign Member of the Royal Netherlands Academy in 1920", many states' "slaves were freed by
the 13th Amendment in 1865". Many facts can describe one bridge; `description_words` scores each so
planning can use the best ones.
"""

from __future__ import annotations

from collections.abc import Iterable

from irbgen.irb.gates import described_badly, identifies_one, person_nodes
from irbgen.irb.masking import normalize
from irbgen.irb.places import gives_country_away
from irbgen.irb.records import Fact, PlanHop
from irbgen.irb.rules.questions import (
    HEADS,
    BridgeNotWritable,
    NodeNotFound,
    defines_itself,
    inner_question,
    later_possessives,
    node_spans,
)
from irbgen.text import contains_answer
from irbgen.wikipedia.leads import subject_name

UNNAMED_PENALTY = 100


def description_words(hop: PlanHop) -> int | None:
    """Words of the hop's own question when it can describe its answer inside another question, or None;
    UNNAMED_PENALTY more when it names nothing ("Which country's population reached 9 million in 2010?"),
    so descriptions that name something are tried first.

    The rules' wording decides (an llm backend rewrites the question later, from the same fact).
    """
    if hop.answer_type not in HEADS and not hop.answer_noun and not defines_itself(hop):
        return None  # it would be "the thing that ..."
    try:
        question = inner_question(hop)
    except (NodeNotFound, BridgeNotWritable):
        return None
    if described_badly(question) is not None or not picks_one_out(question, hop):
        return None
    words = question.split()
    named = any(word[:1].isupper() for word in words[1:])  # "... of the Royal Netherlands Academy ..."
    return len(words) if named else len(words) + UNNAMED_PENALTY


def picks_one_out(question: str, hop: PlanHop) -> bool:
    """Whether a description can fit one thing only (gates.identifies_one), people from the hop's graph."""
    return identifies_one(question, person_nodes(hop.triples), hop.answer)


def bridge_named_once(inner: PlanHop, outer: PlanHop) -> bool:
    """Whether the outer hop names the bridge once and nowhere else gives the inner answer away: the
    description replaces one mention, so a second ("the University of Alabama" beside "Alabama") leaks, and
    so does its people's name ("According to the Albanian Institute of Statistics" for Albania) or another
    name of it ("the UK" for the United Kingdom). A later
    possessive of a thing is no leak: the question says "its" there ("almost all of its revenue")."""
    bridge = outer.bridge or ""
    for text in outer.keypoints:
        spans = node_spans(text, bridge)
        if spans and node_spans(text, outer.answer):
            start, end = spans[0]
            rest = text[:start] + text[end:]
            later = later_possessives(rest, bridge, start) if inner.answer_type != "Person" else []
            for later_start, later_end in reversed(later):  # a later "Angola's revenue" is "its revenue"
                rest = rest[:later_start] + "its" + rest[later_end:]
            leaks = contains_answer(rest, inner.answer, inner.answer_type) or gives_country_away(
                inner.answer, rest
            )
            return len(spans) == 1 + len(later) and not leaks
    return False


def node_pages(fact: Fact, nodes: Iterable[str]) -> dict[str, str]:
    """normalised node -> the page it is: where a link with the node's text goes, or the fact's own page
    when the node is the page's title or the title's last word ("Agassi" on "Andre Agassi")."""
    linked = {normalize(anchor): page for anchor, page in fact.links.items()}
    name = subject_name(fact.title)
    own = {normalize(fact.title), normalize(name)}
    if len(name.split()) > 1 and name.split()[-1][:1].isupper():
        own.add(normalize(name.split()[-1]))  # "Agassi" on the page "Andre Agassi"
    found = {}
    for node in nodes:
        key = normalize(node)
        page = linked.get(key) or (fact.title if key in own else None)
        if page:
            found[key] = page
    return found

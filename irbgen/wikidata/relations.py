"""Which relations undo each other, and which items are classes: what a chain must not walk through.

- Inverse relations: "follows" and "followed by" (P155/P156), "replaces" and "replaced by"
  (P1365/P1366), "part of" and "has part" (P361/P527), capital and capital of, and the like, with the
  near-inverses follows/replaced by and replaces/followed by; a symmetric relation (shares border with,
  sibling, spouse, twinned administrative body, ...) is its own inverse. A chain never takes a relation
  right after its inverse ("the territory whose capital is the capital of X" walks back to X's side).
  Dumps drop property entities' own statements, so the table is ours (after Wikidata's P1696 "inverse
  property" and its "symmetric property" class).
- Successions: "followed by" and "replaced by" (P156/P1366) both name what came after, "follows" and
  "replaces" (P155/P1365) what came before. When the two of a head name different items (the German
  Empire is "followed by" the Second Polish Republic and "replaced by" the Weimar Republic), "the
  successor of" it fits several things, so neither is asked (`other_successions`).
- Classes: an item with a "subclass of" (P279) statement, or an instance of a metaclass or of a
  Wikimedia list, category, disambiguation or template page. A question about a class reads as if it
  were a thing ("In which country is constituency of the House of Commons located?"), so a class is
  never a chain's subject nor a bridge; it may still be an answer (an occupation, a genre).
"""

from __future__ import annotations

from collections.abc import Iterable

from irbgen.wikidata.knowledge import KnowledgeBase

INSTANCE_OF, SUBCLASS_OF = "P31", "P279"

_INVERSE_PAIRS: tuple[tuple[str, str], ...] = (
    ("P155", "P156"),  # follows / followed by
    ("P1365", "P1366"),  # replaces / replaced by
    ("P155", "P1366"),  # follows / replaced by: near-inverse
    ("P156", "P1365"),  # followed by / replaces: near-inverse
    ("P361", "P527"),  # part of / has part
    ("P36", "P1376"),  # capital / capital of
    ("P131", "P150"),  # located in / contains the administrative territorial entity
    ("P749", "P355"),  # parent organization / subsidiary
    ("P127", "P1830"),  # owned by / owner of
    ("P1344", "P710"),  # participant in / participant
    ("P39", "P1308"),  # position held / officeholder
    ("P40", "P22"),  # child / father
    ("P40", "P25"),  # child / mother
    ("P802", "P1066"),  # student / student of
    ("P185", "P184"),  # doctoral student / doctoral advisor
    ("P1542", "P828"),  # has effect / has cause
    ("P674", "P1441"),  # characters / present in work
)
SYMMETRIC: frozenset[str] = frozenset(
    {
        "P47",  # shares border with
        "P3373",  # sibling
        "P26",  # spouse
        "P451",  # unmarried partner
        "P1038",  # relative
        "P190",  # twinned administrative body
        "P530",  # diplomatic relation
        "P1327",  # partner in business or sport
        "P2789",  # connects with
        "P197",  # adjacent station
        "P461",  # opposite of
        "P1382",  # partially coincident with
        "P460",  # said to be the same as
        "P1889",  # different from
    }
)
CLASS_MARKERS: frozenset[str] = frozenset(
    {
        "Q13406463",  # Wikimedia list article
        "Q4167836",  # Wikimedia category
        "Q4167410",  # Wikimedia disambiguation page
        "Q22808320",  # Wikimedia human name disambiguation page
        "Q11266439",  # Wikimedia template
        "Q17442446",  # Wikimedia internal item
        "Q14204246",  # Wikimedia project page
        "Q15184295",  # Wikimedia module
        "Q4663903",  # Wikimedia portal
        "Q59541917",  # Wikimedia topic category
        "Q16889133",  # class
        "Q19478619",  # metaclass
        "Q24017414",  # first-order metaclass
        "Q24017465",  # second-order metaclass
        "Q23958852",  # variable-order class
        "Q21522864",  # class or metaclass of Wikidata ontology
    }
)


def _inverses() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {prop: {prop} for prop in SYMMETRIC}
    for first, second in _INVERSE_PAIRS:
        table.setdefault(first, set()).add(second)
        table.setdefault(second, set()).add(first)
    return {prop: frozenset(inverses) for prop, inverses in table.items()}


INVERSES: dict[str, frozenset[str]] = _inverses()

SUCCESSIONS: tuple[frozenset[str], ...] = (
    frozenset({"P156", "P1366"}),  # followed by, replaced by: what came after
    frozenset({"P155", "P1365"}),  # follows, replaces: what came before
)


def other_successions(kb: KnowledgeBase, head: str, property_id: str, value: str) -> list[str]:
    """Other items the head's successions of the same direction name: for "followed by" the values of
    "replaced by" that are not `value` (the item key the hop takes), and the reverse."""
    group = next((group for group in SUCCESSIONS if property_id in group), frozenset())
    found = {
        statement.tail.key
        for prop in sorted(group - {property_id})
        for statement in kb.tails(head, prop)
        if statement.tail.type == "entity"
    }
    return sorted(found - {value})


def is_inverse(first: str, second: str) -> bool:
    """Whether property `second` undoes `first` (an inverse, a near-inverse, or the same symmetric one)."""
    return second in INVERSES.get(first, ())


def inverse_step(properties: Iterable[str]) -> int | None:
    """The index of the first hop that takes the inverse of the hop before it, or None."""
    properties = list(properties)
    for index in range(1, len(properties)):
        if is_inverse(properties[index - 1], properties[index]):
            return index
    return None


def class_marker(kb: KnowledgeBase, entity_id: str) -> str | None:
    """Why the item is a class ("subclass of Q515", "instance of Q4167836"), or None."""
    subclass = kb.tails(entity_id, SUBCLASS_OF)
    if subclass:
        return f"subclass of {subclass[0].tail.id}"
    for statement in kb.tails(entity_id, INSTANCE_OF):
        if statement.tail.id in CLASS_MARKERS:
            return f"instance of {statement.tail.id}"
    return None


def is_class(kb: KnowledgeBase, entity_id: str) -> bool:
    """Whether the item is a class, a metaclass or a Wikimedia list, category or disambiguation page."""
    return class_marker(kb, entity_id) is not None

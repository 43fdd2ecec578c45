"""Node types for offline graphs, corrected with what the whole run knows.

The rules backend types a node from spaCy's entity label in one sentence, and the small English model
often calls a town or an observatory a person. Before planning, irbgen re-types the nodes of rules
graphs from evidence beyond that sentence, strongest first:
1. the node names an article of the run (its title, or a person's surname): the type its categories say;
2. the node's own words say what it is ("the River Vell", "Hollin Ridge Observatory");
3. a node with digits that is not a date is a quantity.
Graphs made by a model keep the model's types.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from irbgen.irb.records import Fact, KnowledgeGraph, Triple

# Words in a category name that say what its members are; checked type by type in this order.
_CATEGORY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Person", ("people", "births", "deaths", "engineers", "scientists", "writers", "politicians",
                "players", "artists", "musicians", "actors", "alumni", "astronomers", "architects")),
    ("Event", ("festivals", "events", "competitions", "elections", "wars", "battles", "tournaments",
               "disasters", "shows", "conferences")),
    ("Work", ("films", "albums", "books", "novels", "songs", "paintings", "games", "series", "operas")),
    ("Organization", ("companies", "organizations", "organisations", "societies", "universities", "clubs",
                      "railways", "museums", "agencies", "institutions", "manufacturers", "bands", "teams",
                      "councils", "schools", "colleges", "charities", "parties")),
    ("Country", ("countries",)),
    ("Location", ("towns", "cities", "villages", "lakes", "rivers", "bridges", "buildings", "observatories",
                  "places", "islands", "mountains", "hills", "parks", "ports", "stations", "districts",
                  "regions", "bays", "beaches", "valleys", "gardens", "farms", "streets", "roads",
                  "provinces", "territories", "counties", "prefectures", "municipalities")),
)  # fmt: skip

# Capitalised words inside a name that say what it names.
_NAME_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Event", ("Festival", "Championship", "Cup", "Games", "War", "Battle", "Election", "Show", "Fair",
               "Awards", "Prize")),
    ("Work", ("Report", "Factbook", "Yearbook")),
    ("Organization", ("University", "College", "School", "Society", "Institution", "Institute", "Museum",
                      "Company", "Council", "Club", "Association", "Ltd", "Inc", "Corp", "Corporation",
                      "Group", "Foundation", "Films", "Studios", "Pictures", "Records", "Airlines",
                      "Press", "Network", "Ministry", "Department", "Commission", "Committee", "Academy",
                      "Agency", "Robotics", "Party", "Bank")),
    ("Location", ("River", "Lake", "Bridge", "Observatory", "Harbour", "Harbor", "Gardens", "Park", "Farm",
                  "Hills", "Hill", "Ridge", "Mountain", "Valley", "Bay", "Island", "Street", "Road",
                  "Station", "Estuary", "Castle", "Tower", "Airport", "Port", "County", "District",
                  "Province", "Region", "Oblast", "Canton", "Prefecture", "Formation", "Basin", "Desert",
                  "Plateau", "Peninsula", "Sea", "Ocean", "Strait", "Canal", "Gulf", "Mountains")),
)  # fmt: skip

_YEAR = re.compile(r"^(?:in |the )?(1\d{3}|20\d{2})s?$")
_MONTHS = re.compile(
    r"\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:tember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b|\b(?:years?|months?|weeks?|days?|centur(?:y|ies))\b",
    re.IGNORECASE,
)
_NUMBER_LED = re.compile(r"^(?:about |around |over |nearly |some |almost )?[£$€]?\d", re.IGNORECASE)
_CODE = re.compile(r"\b(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,}\b")
_NOT_QUANTITY = {"Person", "Organization", "Location", "Country", "Work", "Product", "Event", "Other"}


def _normal(text: str) -> str:
    text = " ".join(text.split()).strip(" .,;:'\"")
    text = re.sub(r"^the\s+", "", text, flags=re.IGNORECASE)
    return re.sub(r"'s$", "", text).lower()


def normal_title(text: str) -> str:
    """The key `page_types` uses for a title or node: lower case, no leading "the", no possessive."""
    return _normal(text)


def category_type(categories: Iterable[str]) -> str | None:
    """The type most of a page's categories give its subject ("Towns in Vellshire" -> Location), if
    any; a tie goes to the type listed first. "Azerbaijan" is in "Ethnic Azerbaijani people" but in
    eight categories of countries: a country."""
    votes = {node_type: 0 for node_type, _ in _CATEGORY_WORDS}
    for name in categories:
        words = set(re.findall(r"[a-z]+", name.lower()))
        for node_type, keys in _CATEGORY_WORDS:
            if words & set(keys):
                votes[node_type] += 1
                break
    best = max(votes.values(), default=0)
    return next((node_type for node_type, count in votes.items() if count == best), None) if best else None


def name_type(node: str) -> str | None:
    """The type a name's own words give it ("the River Vell" -> Location), if any."""
    words = set(re.findall(r"[A-Z][A-Za-z]*", node))
    for node_type, keys in _NAME_WORDS:
        if words & set(keys):
            return node_type
    return None


# A name's head word that a question may ask with: "Chilton County" -> "which county".
_HEAD_NOUNS = frozenset(
    "University College School Museum Company Council Club Foundation Academy Agency Party Bank Ministry "
    "Commission Committee Court Hospital Award Prize Army Navy Church Cathedral Airline Newspaper Magazine "
    "River Lake Bridge Observatory Airport County District Province Region Sea Ocean Strait Canal Gulf "
    "Valley Island Peninsula Desert Castle Stadium Cinema Theatre Theater Hotel Tower Library Station Palace "
    "Mosque Temple Prison Hall Festival Park Arena Zoo Monument Harbour Forest".split()
)


def name_noun(node: str) -> str | None:
    """The kind of thing a name says it is by its head word, lower case: "Chilton County" -> "county",
    "the University of Alabama" -> "university", "the Academy Award" -> "award"; None when its head
    is no such word ("Meadows Bank Group", "NATO")."""
    words = re.sub(r"^the\s+", "", node.strip(), flags=re.IGNORECASE).split()
    head = words[: words.index("of")] if "of" in words else words
    if len(words) < 2 or not head or head[-1] not in _HEAD_NOUNS:
        return None
    return head[-1].lower()


def digit_type(node: str, current: str) -> str | None:
    """Date for a bare year; Quantity for a number-led node typed as something a number cannot be.

    A token that mixes capitals and digits ("QZ14", "A380") is a name, and keeps its type.
    """
    text = node.strip()
    if _YEAR.match(text):
        return "Date"
    if _CODE.search(text):
        return "Other" if current in ("Quantity", "Date") else None
    if current not in _NOT_QUANTITY or not _NUMBER_LED.match(text) or _CODE.search(text):
        return None
    return "Date" if _MONTHS.search(text) else "Quantity"


def page_types(facts: Iterable[Fact]) -> dict[str, str]:
    """Normalised page title (and a person's surname) -> the type its categories give."""
    types: dict[str, str] = {}
    for fact in facts:
        node_type = category_type(fact.categories)
        if node_type is None:
            continue
        types.setdefault(_normal(fact.title), node_type)
        bare = re.sub(r"\s*\([^()]*\)$", "", fact.title)  # "Animalia (book)" names "Animalia"
        types.setdefault(_normal(bare), node_type)
        if node_type == "Person" and " " in fact.title.strip():
            types.setdefault(_normal(fact.title.split()[-1]), node_type)
    return types


def resolve_type(node: str, current: str, pages: Mapping[str, str]) -> str:
    """The node's type after the three corrections (see the module docstring)."""
    return pages.get(_normal(node)) or name_type(node) or digit_type(node, current) or current


def retype_graphs(graphs: Iterable[KnowledgeGraph], facts: Iterable[Fact]) -> list[KnowledgeGraph]:
    """Rules graphs with corrected node types; model-made graphs unchanged."""
    pages = page_types(facts)
    fixed = []
    for graph in graphs:
        if graph.method != "rules":
            fixed.append(graph)
            continue
        triples = [
            Triple(
                head=t.head,
                head_type=resolve_type(t.head, t.head_type, pages),
                relation=t.relation,
                tail=t.tail,
                tail_type=resolve_type(t.tail, t.tail_type, pages),
            )
            for t in graph.triples
        ]
        fixed.append(graph.model_copy(update={"triples": triples}))
    return fixed

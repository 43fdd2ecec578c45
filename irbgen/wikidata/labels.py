"""Popularity and newness labels for Wikidata triples: popular or unpopular, new or old.

Popularity is pluggable by name (`POPULARITY_KINDS`):

- `sitelinks`: an entity's popularity is its sitelink count. A triple with a literal tail scores its
  head's count; a triple between two entities scores the smaller of the two counts, because a fact is
  only as well known as its less known end (MINTQA's long-tail facts are about obscure entities).
- `wikipedia-frequency`: how many times the triple was found in Wikipedia text (REBEL-style extraction,
  `irbgen.wikidata.rebel`); a triple never found scores 0.
- `counts-file`: a user file of counts (format in `read_counts_file`). A triple line scores that triple;
  otherwise entity lines score it as `sitelinks` does; otherwise 0.

A triple is popular when its score is at or above the threshold (`--popular-threshold`, default per kind
in `DEFAULT_THRESHOLDS`).

Newness compares with an old dump. The issue calls a triple new when its head, relation or tail is
absent from the old dump. We also call new a triple whose head, relation and tail all exist in the old
dump while the triple itself does not: a changed value (a new head of government) is new knowledge too,
and MINTQA's own definition is "in the new dump but not in the old one". `Newness.reason` tells the
cases apart ("new-head", "new-property", "new-tail", "changed"). A triple is old when the exact triple
is in both dumps.

Over a chain, the labels compose into a stratum such as "unpopular-new" (`stratum`); `parse_mix` reads
the `--mix` weights given to strata.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from irbgen.errors import BadInputError
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.records import Chain, ChainHop, Statement

DEFAULT_THRESHOLDS = {"sitelinks": 10.0, "wikipedia-frequency": 2.0, "counts-file": 10.0}


class Popularity(Protocol):
    """Scores triples; `threshold` is the kind's default popular/unpopular split."""

    kind: str
    threshold: float

    def score(self, statement: Statement) -> float: ...


def _pair_score(statement: Statement, entity_score: Callable[[str], float]) -> float:
    """The head's score for a literal tail, the smaller of head's and tail's for an entity tail."""
    head = entity_score(statement.head)
    if statement.tail.type == "entity" and statement.tail.id:
        return min(head, entity_score(statement.tail.id))
    return head


class SitelinkPopularity:
    """Triple popularity from the sitelink counts of its entities (unknown entities count 0)."""

    kind = "sitelinks"
    threshold = DEFAULT_THRESHOLDS["sitelinks"]

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def entity(self, entity_id: str) -> float:
        """An entity's sitelink count."""
        return float(self.kb.sitelinks(entity_id))

    def score(self, statement: Statement) -> float:
        """The sitelink count of the triple's less linked end (its head for a literal tail)."""
        return _pair_score(statement, self.entity)


def triple_key(key: str | tuple[str, str, str]) -> str:
    """A frequency key as a statement key: "Q1|P57|Q2" stays, ("Q1", "P57", "Q2") is joined."""
    if isinstance(key, str):
        return key
    if isinstance(key, tuple) and len(key) == 3 and all(isinstance(part, str) for part in key):
        return "|".join(key)
    raise BadInputError(f"triple frequency key {key!r}: expected 'head|property|tail' or a 3-tuple of str")


class FrequencyPopularity:
    """Triple popularity as the number of times the triple was found in Wikipedia text."""

    kind = "wikipedia-frequency"
    threshold = DEFAULT_THRESHOLDS["wikipedia-frequency"]

    def __init__(self, frequencies: Mapping[str | tuple[str, str, str], float]) -> None:
        self.counts: dict[str, float] = {}
        for key, count in frequencies.items():
            joined = triple_key(key)
            self.counts[joined] = self.counts.get(joined, 0.0) + float(count)

    def score(self, statement: Statement) -> float:
        """Times found; a triple keyed by its tail's Q-id or value key, 0 when never found."""
        return self.counts.get(statement.key, 0.0)


class CountsFilePopularity:
    """Triple popularity from a user counts file: triple counts first, else entity counts, else 0."""

    kind = "counts-file"
    threshold = DEFAULT_THRESHOLDS["counts-file"]

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.triples, self.entities = read_counts_file(self.path)

    def entity(self, entity_id: str) -> float:
        """An entity's count from the file (0 when not listed)."""
        return self.entities.get(entity_id, 0.0)

    def score(self, statement: Statement) -> float:
        """The triple's own count when listed, else the entity-pair score, else 0."""
        tail = statement.tail
        for form in (tail.key, tail.raw, tail.text):
            if form and (statement.head, statement.property, form) in self.triples:
                return self.triples[(statement.head, statement.property, form)]
        return _pair_score(statement, self.entity)


def _parse_count(text: str, where: str) -> float:
    try:
        count = float(text)
    except (TypeError, ValueError):
        raise BadInputError(f"{where}: count {text!r} is not a number") from None
    if not math.isfinite(count) or count < 0:
        raise BadInputError(f"{where}: count {text!r} must be a finite number >= 0")
    return count


def _fields(line: str, where: str, jsonl: bool) -> list[str]:
    """A line's fields: [entity, count] or [head, property, tail, count]."""
    if not jsonl:
        return [field.strip() for field in line.split("\t")]
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise BadInputError(f"{where}: not JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise BadInputError(f"{where}: expected a JSON object")
    names = ["entity", "count"] if "entity" in record else ["head", "property", "tail", "count"]
    if sorted(record) != sorted(names):
        raise BadInputError(f"{where}: expected keys {names} or ['entity', 'count'], got {sorted(record)}")
    return [str(record[name]) for name in names]


def read_counts_file(path: Path) -> tuple[dict[tuple[str, str, str], float], dict[str, float]]:
    """Read a counts file into (triple counts, entity counts); bad lines raise naming file and line.

    TSV (any name but *.jsonl), one count per line, blank lines and lines starting with # skipped:
    `entity<TAB>count` (e.g. `Q42<TAB>120`) or `head<TAB>property<TAB>tail<TAB>count` where tail is a
    Q-id or a literal as Wikidata writes it (`+1952-03-11T00:00:00Z`) or as its value key
    (`time:+1952-03-11T00:00:00Z`). JSONL (*.jsonl): `{"entity": "Q42", "count": 120}` or
    `{"head": "Q42", "property": "P19", "tail": "Q350", "count": 3}`. Counts are numbers >= 0;
    repeated keys add up.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BadInputError(f"{path}: counts file not found") from None
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: counts file is not UTF-8 text") from None
    jsonl = path.name.endswith(".jsonl")
    triples: dict[tuple[str, str, str], float] = {}
    entities: dict[str, float] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{number}"
        fields = _fields(line, where, jsonl)
        if len(fields) not in (2, 4) or not all(fields[:-1]):
            raise BadInputError(
                f"{where}: expected 'entity<TAB>count' or 'head<TAB>property<TAB>tail<TAB>count', "
                f"got {len(fields)} field(s)"
            )
        count = _parse_count(fields[-1], where)
        if len(fields) == 2:
            entities[fields[0]] = entities.get(fields[0], 0.0) + count
        else:
            key = (fields[0], fields[1], fields[2])
            triples[key] = triples.get(key, 0.0) + count
    return triples, entities


def _sitelinks(kb, frequencies, counts_file) -> Popularity:
    return SitelinkPopularity(kb)


def _frequency(kb, frequencies, counts_file) -> Popularity:
    if frequencies is None:
        raise BadInputError("popularity 'wikipedia-frequency' needs triple frequencies (--rebel-model)")
    return FrequencyPopularity(frequencies)


def _counts_file(kb, frequencies, counts_file) -> Popularity:
    if counts_file is None:
        raise BadInputError("popularity 'counts-file' needs --counts-file FILE")
    return CountsFilePopularity(counts_file)


POPULARITY_KINDS: dict[str, Callable[..., Popularity]] = {
    "sitelinks": _sitelinks,
    "wikipedia-frequency": _frequency,
    "counts-file": _counts_file,
}


def make_popularity(
    kind: str,
    kb: KnowledgeBase,
    *,
    frequencies: Mapping[str | tuple[str, str, str], float] | None = None,
    counts_file: Path | None = None,
) -> Popularity:
    """The popularity scorer of that kind; unknown kinds raise listing the known ones."""
    if kind not in POPULARITY_KINDS:
        raise BadInputError(
            f"unknown popularity {kind!r}; choose one of {', '.join(sorted(POPULARITY_KINDS))}"
        )
    return POPULARITY_KINDS[kind](kb, frequencies, counts_file)


def is_popular(score: float, threshold: float) -> bool:
    """Popular when the score is at or above the threshold."""
    return score >= threshold


class Newness:
    """Labels triples new or old against an old dump's knowledge base; None everywhere without one."""

    def __init__(self, old: KnowledgeBase | None) -> None:
        self.old = old
        self._properties = old.properties_used() if old is not None else set()

    def reason(self, statement: Statement) -> str | None:
        """Why the triple is new: "new-head", "new-property", "new-tail" or "changed"; None otherwise."""
        if self.old is None or self.old.has(statement):
            return None
        if statement.head not in self.old:
            return "new-head"
        if statement.property not in self._properties:
            return "new-property"
        tail = statement.tail
        if tail.type == "entity" and tail.id and tail.id not in self.old:
            return "new-tail"
        return "changed"

    def is_new(self, statement: Statement) -> bool | None:
        """True when the triple is not in the old dump, False when it is, None without an old dump."""
        if self.old is None:
            return None
        return not self.old.has(statement)


def label_hop(
    statement: Statement, popularity: Popularity, threshold: float, newness: Newness | None
) -> ChainHop:
    """The statement as a chain hop with its popularity score, popular flag and newness."""
    score = float(popularity.score(statement))
    new = newness.is_new(statement) if newness is not None else None
    return ChainHop(statement=statement, popularity=score, popular=is_popular(score, threshold), new=new)


# --- compositions over a chain: strata and --mix weights ------------------------------------------------

POPULARITY_COMPOSITIONS = ("popular", "unpopular", "mixed")
NEWNESS_COMPOSITIONS = ("new", "old", "mixed", "unknown")
STRATA = tuple(f"{p}-{n}" for p in POPULARITY_COMPOSITIONS for n in NEWNESS_COMPOSITIONS)


def _composition(flags: list[bool | None], yes: str, no: str) -> str:
    if any(flag is None for flag in flags):
        return "unknown"
    if all(flags):
        return yes
    return no if not any(flags) else "mixed"


def stratum(chain: Chain) -> str:
    """The chain's popularity and newness composition, e.g. "unpopular-new" or "mixed-unknown"."""
    popularity = _composition([hop.popular for hop in chain.hops], "popular", "unpopular")
    return f"{popularity}-{_composition([hop.new for hop in chain.hops], 'new', 'old')}"


def possible_strata(hops: int, has_old: bool) -> list[str]:
    """The strata a chain of that many hops can fall in (no "mixed" for one hop; "unknown" iff no old)."""
    popularity = ["popular", "unpopular"] + (["mixed"] if hops > 1 else [])
    newness = (["new", "old"] + (["mixed"] if hops > 1 else [])) if has_old else ["unknown"]
    return [f"{p}-{n}" for p in popularity for n in newness]


def mix_key(name: str) -> str:
    """A --mix name as a stratum pattern: "unpopular-new", "unpopular-*", "*-new" or "*"."""
    name = name.strip().lower()
    if name in ("*", "*-*"):
        return "*"
    if "-" in name:
        popularity, _, newness = name.partition("-")
    elif name in ("popular", "unpopular"):
        popularity, newness = name, "*"
    elif name in ("new", "old", "unknown"):
        popularity, newness = "*", name
    else:
        raise BadInputError(
            f"--mix: {name!r} is not a stratum; write popularity-newness with popularity one of "
            f"{', '.join(POPULARITY_COMPOSITIONS)} or * and newness one of {', '.join(NEWNESS_COMPOSITIONS)} "
            f"or * (a bare 'mixed' is ambiguous)"
        )
    if popularity not in (*POPULARITY_COMPOSITIONS, "*") or newness not in (*NEWNESS_COMPOSITIONS, "*"):
        raise BadInputError(
            f"--mix: {name!r}: popularity must be one of {', '.join(POPULARITY_COMPOSITIONS)} or *, "
            f"newness one of {', '.join(NEWNESS_COMPOSITIONS)} or *"
        )
    return f"{popularity}-{newness}"


def parse_mix(text: str) -> dict[str, float]:
    """Parse "unpopular-new=2,popular-old=1,*=1" into weights by stratum pattern; bad strings raise.

    A name is a stratum ("unpopular-new"), one side with the other any ("unpopular" = "unpopular-*",
    "new" = "*-new"), or "*" for every stratum not otherwise named. The most specific pattern decides a
    stratum's weight (exact, then popularity-*, then *-newness, then *); unnamed strata weigh 0.
    """
    if not text or not text.strip():
        raise BadInputError("--mix: empty; write e.g. 'unpopular-new=2,popular-old=1,*=1'")
    weights: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.partition("=")
        if not sep or not name.strip():
            raise BadInputError(f"--mix: {part.strip()!r} is not name=weight")
        key = mix_key(name)
        try:
            weight = float(value)
        except ValueError:
            raise BadInputError(
                f"--mix: weight {value.strip()!r} of {name.strip()!r} is not a number"
            ) from None
        if not math.isfinite(weight) or weight < 0:
            raise BadInputError(f"--mix: weight of {name.strip()!r} must be a finite number >= 0")
        if key in weights:
            raise BadInputError(f"--mix: {key!r} is given twice")
        weights[key] = weight
    if not any(weights.values()):
        raise BadInputError("--mix: every weight is 0")
    return weights


def stratum_weight(mix: Mapping[str, float] | None, name: str) -> float:
    """The weight a mix gives a stratum (1 for every stratum without a mix)."""
    if mix is None:
        return 1.0
    popularity, _, newness = name.partition("-")
    for key in (name, f"{popularity}-*", f"*-{newness}", "*"):
        if key in mix:
            return mix[key]
    return 0.0


def mix_weights(mix: str | Mapping[str, float] | None) -> dict[str, float] | None:
    """A --mix string or mapping as validated weights by pattern; None stays None (equal weights)."""
    if mix is None:
        return None
    return parse_mix(
        mix if isinstance(mix, str) else ",".join(f"{key}={value}" for key, value in mix.items())
    )

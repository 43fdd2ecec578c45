"""Triples from spaCy: the offline side of the knowledge-graph stage.

Reads (head, relation, tail) triples off the dependency parse of a keypoint, types nodes from spaCy's
entity labels, lists the named entities the masking step needs, and measures how much of the keypoints'
content words a graph covers (the acceptance test for either backend).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from irbgen.errors import MissingExtraError
from irbgen.irb.records import Entity, Triple
from irbgen.spacy_models import DEFAULT_MODEL, import_spacy, load_spacy

# Token.pos_ comes from attribute_ruler, the parser and ner read tok2vec: only lemmas are not needed.
_EXCLUDE = ("lemmatizer", "senter")

# fmt: off
_LABEL_TYPES = {
    "PERSON": "Person", "ORG": "Organization", "LOC": "Location", "FAC": "Location", "DATE": "Date",
    "TIME": "Date", "CARDINAL": "Quantity", "QUANTITY": "Quantity", "MONEY": "Quantity",
    "PERCENT": "Quantity", "EVENT": "Event", "WORK_OF_ART": "Work", "PRODUCT": "Product",
}
# Names pycountry does not know (it lists "Türkiye", "Russian Federation", ...); values are ISO alpha-2.
_COUNTRY_ALIASES = {
    "uk": "GB", "u.k.": "GB", "britain": "GB", "great britain": "GB", "us": "US", "u.s.": "US",
    "usa": "US", "u.s.a.": "US", "russia": "RU", "turkey": "TR", "ivory coast": "CI", "vatican city": "VA",
    "macedonia": "MK", "cape verde": "CV", "swaziland": "SZ", "burma": "MM", "east timor": "TL",
    "palestine": "PS", "micronesia": "FM", "brunei": "BN", "holland": "NL", "dr congo": "CD",
    "democratic republic of the congo": "CD", "republic of the congo": "CG",
}
# fmt: on
_YEAR = re.compile(r"1\d{3}|20\d{2}")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_EDGE_NONWORD = re.compile(r"^\W+|\W+$")

_SUBJECTS = {"nsubj", "nsubjpass"}
_OBJECTS = {"dobj", "attr", "oprd", "acomp", "dative", "npadvmod"}
_VERB_PARTS = {"aux", "auxpass", "neg", "prt"}
_PREPOSITIONS = {"prep", "agent"}
# Children that start a node of their own or a clause; kept only inside one named entity.
_NOT_IN_PHRASE = {"relcl", "acl", "appos", "prep", "conj", "cc", "advcl", "ccomp", "xcomp", "mark"}
_RELATIVE = {"which", "that", "who", "whom"}
_PERSONAL = {"it", "he", "she", "they"}
_NOUNS = {"NOUN", "PROPN", "NUM", "PRON"}


def load_graph_nlp(model: str = DEFAULT_MODEL) -> Any:
    """The spaCy pipeline `model` with tagger, parser and ner (no lemmatizer); loaded once per process."""
    return load_spacy(model, _EXCLUDE)


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    return import_spacy().blank("en").tokenizer


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """spaCy's English stop words, loaded once."""
    import_spacy()
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


# --- coverage ------------------------------------------------------------------------------------------


def content_words(text: str) -> list[str]:
    """Lowercased word tokens of `text` without stop words and punctuation, in order."""
    stop = stop_words()
    words = []
    for token in _tokenizer()(text):
        lower = token.text.lower()
        word = _EDGE_NONWORD.sub("", lower)
        if word and lower not in stop and word not in stop:
            words.append(word)
    return words


def covered_words(keypoints: list[str], triples: list[Triple]) -> tuple[set[str], set[str]]:
    """(the keypoints' content words, those of them the triples' heads, relations and tails hold)."""
    wanted = {word for text in keypoints for word in content_words(text)}
    parts = (part for t in triples for part in (t.head, t.relation, t.tail))
    found = {word for part in parts for word in content_words(part)}
    return wanted, wanted & found


def graph_coverage(keypoints: list[str], triples: list[Triple]) -> float:
    """Share of the keypoints' distinct content words (a set) found in heads, relations and tails."""
    wanted, covered = covered_words(keypoints, triples)
    return len(covered) / len(wanted) if wanted else 0.0


# --- node types ----------------------------------------------------------------------------------------


def country_code(name: str) -> str | None:
    """The ISO alpha-2 code of a country name ("Norway", "the United Kingdom", "UK"), or None."""
    text = re.sub(r"^the\s+", "", name.strip(), flags=re.IGNORECASE)
    text = re.sub(r"['’]s?$", "", text).strip()
    alias = _COUNTRY_ALIASES.get(text.lower())
    if alias is not None or len(text) <= 3:  # short strings would match ISO codes ("AND" is Andorra)
        return alias
    try:
        import pycountry
    except ImportError as exc:
        raise MissingExtraError("country names need pycountry: pip install 'irbgen[wikipedia]'") from exc
    try:
        return pycountry.countries.lookup(text).alpha_2
    except LookupError:
        return None


def node_type(label: str | None, text: str) -> str:
    """The NODE_TYPES name for a node of spaCy entity `label` (None when spaCy gave none) and `text`."""
    bare = text.strip()
    if label in (None, "", "CARDINAL") and _YEAR.fullmatch(bare):
        return "Date"
    if label == "GPE":
        return "Country" if country_code(bare) else "Location"
    if label:
        return _LABEL_TYPES.get(label, "Other")
    return "Quantity" if _NUMBER.fullmatch(bare) else "Other"


def _entity_of(token: Any) -> Any:
    for entity in token.doc.ents:
        if entity.start <= token.i < entity.end:
            return entity
    return None


def _span_type(span: Any) -> str:
    entity = _entity_of(span.root)
    if entity is not None:
        return node_type(entity.label_, entity.text)
    counts = [c for c in span.root.children if c.dep_ == "nummod" and not _YEAR.fullmatch(c.text)]
    return "Quantity" if counts else node_type(None, span.text)


# --- rules: triples from the dependency parse -----------------------------------------------------------


def rules_triples(doc: Any) -> list[Triple]:
    """Triples read off the dependency parse of one keypoint; nodes are exact substrings of its text."""
    return _Reader(doc).read()


def _runs_text(tokens: Iterable[Any]) -> str:
    """The tokens' text as written; a gap between two of them becomes one space."""
    ordered = sorted({token.i: token for token in tokens}.values(), key=lambda token: token.i)
    text = ordered[0].text if ordered else ""
    for before, token in zip(ordered, ordered[1:], strict=False):
        text += (before.whitespace_ if before.i + 1 == token.i else " ") + token.text
    return text


class _Reader:
    """Walks one parsed keypoint: predicates with their subjects, objects and prepositions, then nouns."""

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self.found: list[tuple[tuple[int, int], Triple]] = []
        self.nouns: list[Any] = []  # node roots whose own prepositions and appositions are still unread

    def read(self) -> list[Triple]:
        for token in self.doc:
            if token.pos_ in ("VERB", "AUX") and token.dep_ not in ("aux", "auxpass"):
                self._predicate(token)
        done: set[int] = set()
        while self.nouns:
            noun = self.nouns.pop(0)
            if noun.i not in done:
                done.add(noun.i)
                self._noun(noun)
        ordered = sorted(self.found, key=lambda item: item[0])
        return dedupe_triples(triple for _, triple in ordered)

    # -- predicates --

    def _predicate(self, verb: Any) -> None:
        resolved = self._subject(verb)
        if resolved is None:
            return
        subjects, relation_tokens = resolved
        heads = [root for subject in subjects for root in self._roots(subject)]
        relation = _runs_text(relation_tokens)
        for child in verb.children:
            dep = child.dep_
            is_object = dep in _OBJECTS or (dep == "advmod" and _has_children(child) and child.tag_ != "WRB")
            if is_object or (dep == "conj" and child.pos_ in _NOUNS):  # "handles X, mostly Y and Z"
                label = f"{relation} to" if dep == "dative" else relation
                self._edges(heads, label, child, anchor=verb)
            elif dep in _PREPOSITIONS:
                self._preposition(heads, relation, child, anchor=verb)
            elif dep == "ccomp":  # "X found that Y was unsafe": X -found that-> Y, and Y's own triples
                subject = next((c for c in child.children if c.dep_ in _SUBJECTS), None)
                if subject is not None and subject.lower_ not in _PERSONAL | _RELATIVE:
                    marks = [c for c in child.children if c.dep_ == "mark"]
                    self._edges(heads, _runs_text([*relation_tokens, *marks]), subject, anchor=verb)

    def _subject(self, verb: Any, depth: int = 0) -> tuple[list[Any], list[Any]] | None:
        """The subject tokens of `verb` and the tokens of its relation, or None when it has no subject."""
        own = [verb, *(c for c in verb.children if c.dep_ in _VERB_PARTS or _simple_adverb(c))]
        subject = next((c for c in verb.children if c.dep_ in _SUBJECTS), None)
        dep, head = verb.dep_, verb.head
        if depth > 8 or (subject is None and head is verb):
            return None
        if subject is not None:
            if dep == "relcl" and subject.lower_ in _RELATIVE:
                return [head], own
            if dep == "ccomp" and subject.lower_ in _PERSONAL:  # "X said it would open": X's claim
                outer = self._subject(head, depth + 1)
                if outer is not None:
                    marks = [c for c in verb.children if c.dep_ == "mark"]
                    return outer[0], [*outer[1], *marks, subject, *own]
            return [subject], own
        if dep in ("relcl", "acl"):
            return [head], own
        if dep == "pcomp" and head.dep_ in _PREPOSITIONS:  # "responded by raising the toll"
            outer = self._subject(head.head, depth + 1)
            return (outer[0], [*outer[1], head, *own]) if outer else None
        if dep in ("conj", "advcl", "xcomp"):
            outer = self._subject(head, depth + 1)
            if outer is None:
                return None
            return (outer[0], [*outer[1], *own]) if dep == "xcomp" else (outer[0], own)
        return None

    def _preposition(self, heads: list[Any], relation: str, prep: Any, anchor: Any) -> None:
        chain = [prep]
        objects = [c for c in prep.children if c.dep_ == "pobj"]
        while not objects:  # "from across the region"
            inner = next((c for c in chain[-1].children if c.dep_ == "prep"), None)
            if inner is None:
                break
            chain.append(inner)
            objects = [c for c in inner.children if c.dep_ == "pobj"]
        label = " ".join(part for part in (relation, *(p.lower_ for p in chain)) if part)
        for obj in objects:
            self._edges(heads, label, obj, anchor=anchor)
        for sibling in prep.children:  # "from April to October and at weekends"
            if (sibling.dep_ == "conj" and sibling.pos_ == "ADP") or (objects and sibling.dep_ == "prep"):
                self._preposition(heads, relation, sibling, anchor)

    # -- nouns --

    def _noun(self, noun: Any) -> None:
        for child in noun.children:
            if _owner(child) and not self._inside(noun, child):  # "Tak's husband": Tak -has-> husband
                self._edge(child, "has", noun, anchor=noun)
                self.nouns.append(child)
            elif child.dep_ == "appos" and not self._inside(noun, child):
                name, description = (child, noun) if _is_name(child) and not _is_name(noun) else (noun, child)
                self._edge(name, "is", description, anchor=noun)
                self.nouns.append(child)
        for i in sorted(self._tokens(noun)):  # also "more than X" inside "£30 million more than X"
            token = self.doc[i]
            for child in token.children:
                if child.dep_ == "prep" and not self._inside(token, child):
                    self._preposition([noun], "", child, anchor=noun)

    def _roots(self, token: Any) -> list[Any]:
        """The node roots `token` stands for: itself and its conjuncts, a named apposition or antecedent."""
        if token.lower_ in _RELATIVE and token.head.dep_ == "relcl":
            token = token.head.head
        roots = [token]
        for child in token.children:
            if child.dep_ == "conj" and child.pos_ in _NOUNS | {"ADJ"} and not self._inside(token, child):
                roots.extend(self._roots(child))
        named = []
        for root in roots:
            self.nouns.append(root)
            appos = next((c for c in root.children if c.dep_ == "appos"), None)
            if appos is not None and _is_name(appos) and not _is_name(root) and not self._inside(root, appos):
                self.nouns.append(appos)
                root = appos
            named.append(root)
        return named

    def _edges(self, heads: list[Any], relation: str, tail: Any, anchor: Any) -> None:
        tails = self._roots(tail)
        for head in heads:
            for node in tails:
                self._edge(head, relation, node, anchor)

    def _edge(self, head: Any, relation: str, tail: Any, anchor: Any) -> None:
        head_span, tail_span = self._span(head), self._span(tail)
        if head_span is None or tail_span is None or not relation:
            return
        head_text, tail_text = _node_text(head_span), _node_text(tail_span)
        if head_text.lower() == tail_text.lower():
            return
        triple = Triple(
            head=head_text,
            head_type=_span_type(head_span),
            relation=relation,
            tail=tail_text,
            tail_type=_span_type(tail_span),
        )
        self.found.append(((anchor.i, tail.i), triple))

    # -- phrases --

    def _inside(self, token: Any, child: Any) -> bool:
        """Whether `child` belongs in `token`'s phrase although its relation usually starts a new node."""
        entity = _entity_of(token)
        if entity is not None and entity.start <= child.i < entity.end:
            return True  # "the University of Northmere", "Halden & Rusk", "April to October"
        if child.dep_ != "prep" or child.lower_ != "of" or token.pos_ != "PROPN":
            return False
        obj = next((c for c in child.children if c.dep_ == "pobj"), None)
        other = _entity_of(obj) if obj is not None else None
        return obj is not None and obj.pos_ == "PROPN" and (other is None or entity is None)

    def _tokens(self, token: Any) -> set[int]:
        keep = {token.i}
        for child in token.children:
            if (child.dep_ not in _NOT_IN_PHRASE and not _owner(child)) or self._inside(token, child):
                keep |= self._tokens(child)
        return keep

    def _span(self, root: Any) -> Any:
        """The contiguous noun phrase around `root`, without edge punctuation; None if nothing is left."""
        keep = self._tokens(root)
        start = end = root.i
        while start - 1 in keep:
            start -= 1
        while end + 1 in keep:
            end += 1
        while start <= end and (self.doc[start].pos_ == "PUNCT" or self.doc[start].dep_ == "cc"):
            start += 1
        # not "%", which spaCy calls punctuation; a possessor node ends before its "'s"
        while end >= start and (self.doc[end].pos_ == "PUNCT" or self.doc[end].tag_ == "POS"):
            end -= 1
        if start <= end and _abbreviation_split(self.doc, end):
            end += 1  # "Clint Murchison Sr." keeps its full stop
        return self.doc[start : end + 1] if start <= end else None


_ABBREVIATIONS = frozenset("Sr Jr Inc Ltd Co Corp Bros".split())


def _abbreviation_split(doc: Any, index: int) -> bool:
    """The tokenizer split the full stop off an abbreviation that ends a name ("Sr", ".")."""
    token = doc[index]
    following = doc[index + 1] if index + 1 < len(doc) else None
    return (
        token.text in _ABBREVIATIONS
        and not token.whitespace_
        and following is not None
        and following.text == "."
        and following.i + 1 < len(doc)  # not the keypoint's own full stop
    )


def _has_children(token: Any) -> bool:
    return token.n_lefts + token.n_rights > 0


def _simple_adverb(token: Any) -> bool:
    """A one-word adverb that belongs to the verb phrase ("later raised", "drains south")."""
    return token.dep_ == "advmod" and token.pos_ == "ADV" and token.tag_ != "WRB" and not _has_children(token)


def _owner(token: Any) -> bool:
    """A possessor that is a node of its own: "the bridge's" and "Tak's", but not "its" or "her"."""
    return token.dep_ == "poss" and token.pos_ != "PRON"


def _is_name(token: Any) -> bool:
    return token.pos_ == "PROPN" or bool(token.ent_type_)


def _node_text(span: Any) -> str:
    text = span.text
    last = span[-1].text
    # spaCy leaves the full stop on a sentence-final abbreviation-like token ("61 m.")
    if span.end == len(span.doc) and last.endswith(".") and "." not in last[:-1] and len(last) > 1:
        return text[:-1]
    return text


def dedupe_triples(triples: Iterable[Triple]) -> list[Triple]:
    """Each (head, relation, tail) once, first occurrence kept."""
    unique: dict[tuple[str, str, str], Triple] = {}
    for t in triples:
        unique.setdefault((t.head, t.relation, t.tail), t)
    return list(unique.values())


def keypoint_entities(docs: Iterable[Any]) -> list[Entity]:
    """spaCy's named entities of the parsed keypoints, each (text, label) once, in order."""
    # without a possessive ending, so an entity reads like the node ("the bridge's" -> "the bridge")
    spans = (
        (e[:-1] if e[-1].tag_ == "POS" and len(e) > 1 else e, e.label_) for doc in docs for e in doc.ents
    )
    unique = {(span.text, label): None for span, label in spans}  # dicts keep the first order
    return [Entity(text=text, label=label) for text, label in unique]

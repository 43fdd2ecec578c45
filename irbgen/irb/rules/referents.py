"""Whom a leading "it", "they", "he" or "the company" means: the referent the page means, or nobody.

The rules look, in order, at the subject of the sentence before (its spaCy parse with named entities: the
nsubj/nsubjpass of its root, a named entity or a proper-noun chunk), at the section heading when it names
something the text around mentions, and at the page subject, which is taken only when the sentence before
is about it too, or when the segment opens the lead. A referent must agree with the reference: "he" and
"she" a person, "it" one thing, "they" a plural (a coordination "X and Y" or a plural noun phrase, never
one person), "the company" something that is a company. When nothing agrees, or two subjects of the
sentence before could be meant, there is no referent and the caller rejects the keypoint.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from irbgen.irb.places import known_place
from irbgen.irb.rules.graph import stop_words
from irbgen.irb.transforms import english_words, given_names, is_personal_name
from irbgen.text import clean, fold, words
from irbgen.wikipedia.leads import topic_of

PRONOUN_CLASSES = {
    "he": "m", "his": "m", "she": "f", "her": "f", "it": "n", "its": "n", "they": "p", "their": "p",
}  # fmt: skip
_NAME_TAGS = frozenset(("NNP", "NNPS"))
_PLURAL_TAGS = frozenset(("NNS", "NNPS"))
_NAME_LABELS = frozenset(
    "PERSON ORG GPE LOC FAC EVENT WORK_OF_ART NORP PRODUCT LAW LANGUAGE".split()
)  # fmt: skip
_PERSON_WORDS = frozenset(
    """father mother son daughter brother sister wife husband parent child friend teacher student pupil
    colleague partner uncle aunt cousin king queen prince princess emperor president minister leader
    player coach manager man woman boy girl author writer director officer soldier general""".split()
)
# Plural words that end the name of one organisation or place: "Samsung Heavy Industries", "United Nations"
_ONE_THING_PLURALS = frozenset(
    """industries airlines airways motors systems holdings networks communications studios records games
    pictures technologies electronics enterprises partners associates services solutions resources
    products foods labs laboratories nations states emirates islands netherlands philippines""".split()
)
_MAX_NAME_WORDS = 8
# What a named entity of each label may be called by "the <noun>".
_LABEL_NOUNS = {
    "ORG": """company firm corporation business group band team club school college university academy
        organisation organization party agency society institute association federation league union
        manufacturer airline bank publisher label network channel newspaper magazine council ministry
        department army navy government""",
    "GPE": """city town village country state nation island region province county territory
        municipality capital kingdom republic empire area district commune""",
    "LOC": "island region area river lake mountain range sea continent peninsula valley",
    "FAC": "building bridge airport stadium station church cathedral temple castle museum tower",
    "WORK_OF_ART": "film album song book novel series show game play poem opera painting single",
    "EVENT": "war battle festival tournament championship election games",
    "NORP": "people group",
}
LABEL_NOUNS = {label: frozenset(nouns.split()) for label, nouns in _LABEL_NOUNS.items()}
# Nouns that call one thing by another of its names: a "sovereign state" is "the country".
_SYNONYMS = tuple(
    frozenset(group.split())
    for group in (
        "country state nation kingdom republic principality microstate",
        "city town municipality",
        "company firm corporation business manufacturer",
        "film movie picture",
        "school college academy",
        "band group",
    )
)


def _same_kind(noun: str, nouns: frozenset[str]) -> bool:
    """`noun` names a thing of one of `nouns`' kinds; a page that is only a "state" (a U.S. state) is not
    "the country" or "the nation" (a sovereign state's page also has "country": see page_subject)."""
    return noun in nouns or any(noun in group and group & nouns - {"state"} for group in _SYNONYMS)


@dataclass(frozen=True)
class Reference:
    """A leading pronoun ("it", "their") or definite description ("the company") to replace."""

    text: str  # as written: "It", "the company"
    kind: str  # "m", "f", "n", "p" for a pronoun, "d" for a description
    noun: str = ""  # a description's noun, singular: "company"
    plural: bool = False  # a plural description: "the companies"

    def show(self) -> str:
        return repr(self.text)


@dataclass(frozen=True)
class Candidate:
    """Something a reference may stand for: a name, or a common noun phrase that has none."""

    phrase: str  # "The Syndicalist Workers' Federation", "The organisation"
    named: bool  # a named entity or a proper-noun chunk
    person: bool | None  # True, False, or None when the parse cannot tell
    plural: bool
    head: str  # the head noun, lower case
    label: str = ""  # the named entity label, if any
    page: bool = False  # the page subject itself
    attribute: str = ""  # the noun the sentence says it is ("X is a film" -> "film")


@dataclass(frozen=True)
class Page:
    """The page subject as the resolver needs it (from `keypoints.page_subject`)."""

    name: str
    nouns: frozenset[str]
    pronouns: frozenset[str]
    lead: str


@dataclass(frozen=True)
class Resolution:
    """The name to put in place of the reference, or why there is none."""

    name: str | None
    detail: str = ""


def _is_page_phrase(phrase: str, page: Page) -> bool:
    """ "Huxley" or "Aldous Huxley" on the page "Aldous Huxley": the phrase names the page subject."""
    phrase_words = [w for w in words(phrase) if w != "the"]
    page_words = [w for w in words(page.name) if w != "the"]
    return bool(phrase_words) and set(phrase_words) <= set(page_words)


def singular(noun: str) -> str:
    """ "companies" -> "company", "awards" -> "award"; "class" and "campus" stay."""
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith("s") and not noun.endswith(("ss", "us", "is")):
        return noun[:-1]
    return noun


def _attribute(subject: Any) -> str:
    """The noun a copular sentence says its subject is: "Actresses is a 1997 ... film" -> "film"."""
    root = subject.head
    if subject.dep_ != "nsubj" or root.lower_ not in ("is", "was", "are", "were"):
        return ""
    attr = next((child for child in root.children if child.dep_ == "attr"), None)
    return singular(attr.lower_) if attr is not None and attr.tag_ in ("NN", "NNS") else ""


def _entity(token: Any) -> Any | None:
    doc = token.doc
    return next((ent for ent in doc.ents if ent.start <= token.i < ent.end), None)


def _name_span(token: Any) -> tuple[int, int, str]:
    """(start, end, label) of the name `token` heads: its named entity, or its proper-noun chunk."""
    doc = token.doc
    entity = _entity(token)
    if entity is not None and entity.label_ in _NAME_LABELS:
        start, end = entity.start, entity.end
        if start > 0 and doc[start - 1].lower_ == "the" and doc[start - 1].head.i in range(start, end):
            start -= 1
        return start, end, entity.label_
    return token.left_edge.i, token.i + 1, ""


def _candidate(subject: Any, page: Page) -> Candidate | None:
    """The candidate a subject token stands for (pronouns are the caller's business)."""
    doc = subject.doc
    conjuncts = [t for t in subject.conjuncts if t.i > subject.i]
    named = subject.tag_ in _NAME_TAGS or subject.ent_type_ in _NAME_LABELS
    start, end, label = _name_span(subject) if named else (subject.left_edge.i, subject.i + 1, "")
    if conjuncts:
        last = conjuncts[-1]
        named = named and all(t.tag_ in _NAME_TAGS or t.ent_type_ in _NAME_LABELS for t in conjuncts)
        end = _name_span(last)[1] if named else last.i + 1
        label = ""
    phrase = doc[start:end].text.strip(" ,;:")
    if not phrase or len(phrase.split()) > _MAX_NAME_WORDS:
        return None
    if label == "PERSON" or not label and named and not conjuncts and is_personal_name(phrase):
        person: bool | None = True  # "Allan Dwan", which the small model may leave unlabelled
    elif label:
        person = False
    else:
        person = None
    # "Samsung Heavy Industries" is one company; "The Germanic Vandals of Geiseric" are many
    plural = bool(conjuncts) or subject.tag_ in _PLURAL_TAGS and subject.lower_ not in _ONE_THING_PLURALS
    return Candidate(
        phrase=phrase,
        named=named,
        person=person,
        plural=plural,
        head=subject.lower_,
        label=label,
        page=named and not conjuncts and _is_page_phrase(phrase, page),
        attribute=_attribute(subject),
    )


def _subjects(doc: Any) -> list[Any]:
    """The root's subject first, then the subjects of clauses the root reports ("X said that Y ...")."""
    found = []
    for root in (token for token in doc if token.dep_ == "ROOT"):
        found += [c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")]
        for clause in (c for c in root.children if c.dep_ == "ccomp"):
            found += [c for c in clause.children if c.dep_ in ("nsubj", "nsubjpass")]
    return found


def _rival_objects(doc: Any, page: Page) -> list[Candidate]:
    """Direct objects of the root a following pronoun may mean as well: a name, or something the
    sentence introduces ("drafted a memorandum. It was signed ...")."""
    rivals = []
    for root in (token for token in doc if token.dep_ == "ROOT"):
        for obj in (c for c in root.children if c.dep_ == "dobj"):
            candidate = _candidate(obj, page)
            introduced = any(c.dep_ == "det" and c.lower_ in ("a", "an") for c in obj.children)
            if candidate is not None and (candidate.named or introduced):
                rivals.append(candidate)
    return rivals


def _plural_name(page: Page) -> bool:
    """ "The Academy Awards are ...": the lead's first verb after the name is plural; without a lead,
    the name is an English plural (not "Texas", "Connes")."""
    if page.pronouns & {"m", "f"}:
        return False
    verb = re.search(r"\b(is|was|are|were|has|have)\b", clean(page.lead)[:300])
    if verb is not None:
        return verb.group(1) in ("are", "were", "have")
    from irbgen.irb.transforms import english_words

    last = page.name.split()[-1].lower()
    one = singular(last)
    return one != last and one in english_words()


def _title_head(reference: Reference, page: Page) -> bool:
    """ "The awards" on "Academy Awards", "the bridge" on "Golden Gate Bridge": the page's own name,
    shortened to its head word."""
    name = page.name.split()
    proper = len(name) > 1 and name[-1][:1].isupper()  # not "Alkali metal": "the metal" may be lithium
    return reference.kind == "d" and proper and reference.text.split()[-1].lower() == name[-1].lower()


def _page_candidate(page: Page) -> Candidate:
    return Candidate(page.name, True, None, False, "", page=True)


def agrees(reference: Reference, candidate: Candidate, page: Page) -> bool:
    """The candidate may be what the reference stands for (number and kind)."""
    if candidate.page:
        plural_name = _plural_name(page)
        if reference.kind == "d":
            written = reference.text.split()[-1].lower()
            if written == page.name.split()[-1].lower():
                return True  # "The awards" for "The Academy Awards", whatever number the lead uses
            same = _same_kind(reference.noun, page.nouns) or written in page.nouns
            return same and reference.plural == plural_name
        if reference.kind == "p":
            return plural_name
        return reference.kind in page.pronouns and not plural_name
    if reference.kind in ("m", "f"):
        return candidate.person is True and not candidate.plural
    if reference.kind == "n":
        return candidate.person is not True and not candidate.plural
    if reference.kind == "p":
        return candidate.plural
    if candidate.plural != reference.plural:
        return False
    noun = reference.noun
    return (
        singular(candidate.head) == noun
        or candidate.attribute == noun
        or noun in LABEL_NOUNS.get(candidate.label, frozenset())
    )


@dataclass
class Resolver:
    """Resolves the references of one segment; `parse` is a spaCy pipeline with a parser and NER.

    `opened` says the sentences before reach the start of the section; when they do not and a chain of
    one pronoun runs past them, the page subject is taken if it agrees and the heading names nothing.
    """

    page: Page
    section: Sequence[str]
    nearby: Sequence[str]  # the segment's sentence and the sentences around it
    parse: Callable[[str], Any]
    opened: bool = True

    def resolve(self, reference: Reference, before: Sequence[str]) -> Resolution:
        """The referent of `reference` in a sentence that follows `before` (its section's sentences)."""
        about, named = self._before(reference, before)
        if named:
            return Resolution(named)
        if named == "":
            detail = f"{reference.show()} could be {about}: both in the sentence before"
            return Resolution(None, detail)
        heading = self._heading()
        if heading is not None and agrees(reference, heading, self.page):
            return Resolution(self.page.name if heading.page else heading.phrase)
        page_ok = agrees(reference, _page_candidate(self.page), self.page)
        if before:
            start_ok = False
        elif self.opened:
            start_ok = not self.section
        else:
            start_ok = heading is None
        if page_ok and (about == "page" or start_ok or _title_head(reference, self.page)):
            return Resolution(self.page.name)
        if page_ok and heading is None and self._class_of_page(reference, before):
            return Resolution(self.page.name)
        if page_ok and heading is None and self._only_person_is_page(reference, before):
            return Resolution(self.page.name)
        told = {
            "page": f"the sentence before is about {self.page.name!r}",
            "none": "no sentence before it in the section",
        }.get(about, f"the sentence before is about {about}")
        where = " > ".join(self.section) or "the lead"
        heading_note = f"heading {heading.phrase!r} does not agree" if heading else f"{where!r} names nothing"
        page_note = f"page {self.page.name!r}" + (" not meant" if page_ok else " does not agree")
        return Resolution(None, f"{reference.show()}: {told}; {heading_note}; {page_note}")

    def _only_person_is_page(self, reference: Reference, before: Sequence[str]) -> bool:
        """ "He" on a person's page when the sentence before names no other person and is not about one
        ("The Times printed a banner headline ... | In 1920, he became ..."; not "His father ... | He")."""
        if reference.kind not in ("m", "f") or not before or not is_personal_name(self.page.name):
            return False
        doc = self.parse(clean(before[-1]))
        for entity in doc.ents:
            if entity.label_ == "PERSON" and not _is_page_phrase(entity.text, self.page):
                return False
        for subject in _subjects(doc):
            possessed = any(c.dep_ == "poss" for c in subject.children)
            if subject.tag_ in ("PRP", "NNP", "NNPS") and not subject.ent_type_ or possessed:
                return False  # a pronoun, an unlabelled name, or "His father"
            if singular(subject.lower_) in _PERSON_WORDS:
                return False
        return True

    def _class_of_page(self, reference: Reference, before: Sequence[str]) -> bool:
        """ "The company" on the page of one company ("Brightwater Robotics", not "Alkali metal"), when
        the sentence before names no other thing of that kind."""
        words_ = self.page.name.split()
        if reference.kind != "d" or not all(word[:1].isupper() or not word[:1].isalpha() for word in words_):
            return False
        if not before:
            return True
        for entity in self.parse(clean(before[-1])).ents:
            fits = _same_kind(reference.noun, LABEL_NOUNS.get(entity.label_, frozenset()))
            if fits and not _is_page_phrase(entity.text, self.page):
                return False  # "Samsung Heavy Industries is a shipbuilder. The company ..."
        return True

    def _before(self, reference: Reference, before: Sequence[str]) -> tuple[str, str | None]:
        """What the sentence before is about ("page", "none" or a phrase) and the name it gives the
        reference: None when it gives none, "" when two of its subjects could be meant."""
        if not before:
            return "none", None
        previous = clean(before[-1])
        if len(previous) > 20 and fold(clean(self.page.lead)).startswith(fold(previous)[:60]):
            return "page", self._page_if_agrees(reference)  # the lead's first sentence defines the page
        doc = self.parse(previous)
        subjects = _subjects(doc)
        if not subjects:
            # no subject parsed ("Andorra's tourism services ..."): the page, if the sentence opens with it
            opens = re.match(rf"{re.escape(self.page.name)}(?:['’]s)?\s+[a-z]", previous) is not None
            return (
                ("page", self._page_if_agrees(reference)) if opens else ("a clause without a subject", None)
            )
        first = subjects[0]
        if first.lower_ in PRONOUN_CLASSES and first.tag_ == "PRP":
            chained = Reference(first.text, PRONOUN_CLASSES[first.lower_])
            inner = self.resolve(chained, before[:-1])
            if inner.name is None:
                return f"{first.text!r}, itself unresolved", None
            same = chained.kind == reference.kind
            if inner.name == self.page.name:
                return "page", (self.page.name if same else self._page_if_agrees(reference))
            return repr(inner.name), (inner.name if same else None)
        candidates = [c for c in (_candidate(s, self.page) for s in subjects) if c is not None]
        if not candidates:
            return "a subject the rules cannot read", None
        head = candidates[0]
        page_name = self._page_if_agrees(reference)
        if head.page:
            return "page", page_name
        if head.named and agrees(reference, head, self.page):
            others = [c for c in candidates[1:] if c.named] + _rival_objects(doc, self.page)
            rivals = [c for c in others if c.phrase != head.phrase and agrees(reference, c, self.page)]
            if rivals:
                return f"{head.phrase!r} or {rivals[0].phrase!r}", ""
            return repr(head.phrase), head.phrase
        about_page = (
            re.search(rf"\b{re.escape(self.page.name)}['’]s\b", head.phrase) is not None
        )  # "Algeria's population"
        if about_page or (head.head in self.page.nouns and head.phrase.lower().startswith("the ")):
            return "page", page_name
        return repr(head.phrase), None

    def _page_if_agrees(self, reference: Reference) -> str | None:
        return self.page.name if agrees(reference, _page_candidate(self.page), self.page) else None

    def _heading(self) -> Candidate | None:
        """The section heading as a candidate, when it names something the text around mentions."""
        if not self.section:
            return None
        heading = clean(self.section[-1])
        if not heading[:1].isupper() or len(heading.split()) > _MAX_NAME_WORDS:
            return None
        # a whole name: not "Ancient Greece", not "the Department of Education"
        pattern = re.compile(rf"(?<=\S\s){re.escape(heading)}\b(?!\s+[A-Z])")
        if not any(pattern.search(clean(text)) and not _inside_name(text, heading) for text in self.nearby):
            return None
        last = heading.split()[-1].lower()
        plural = " and " in heading or singular(last) != last
        person = True if is_personal_name(heading) else None
        return Candidate(heading, True, person, plural, last, page=_is_page_phrase(heading, self.page))


def _inside_name(text: str, heading: str) -> bool:
    """ "Department of Education": the heading ends a longer name joined by "of", "and" or "for"."""
    return (
        re.search(rf"\b[A-Z]\w*\s+(?:of|and|for|de)\s+(?:the\s+)?{re.escape(heading)}\b", clean(text))
        is not None
    )


_ANAPHORIC_MODIFIERS = frozenset("remaining same aforementioned abovementioned above-mentioned".split())


def unresolved_description(doc: Any) -> str | None:
    """A definite description that only the text before can resolve: "the remaining stores", "the
    three films", "all three films", "the same location" (not "the same ... as ...", "the same time").

    `doc` is a spaCy parse with tags and dependencies; a description narrowed by an of-phrase, a clause,
    an apposition, a possessor or a name ("the three Baltic states") stands on its own.
    """
    for token in doc:
        if token.tag_ not in ("NN", "NNS") or not token.is_lower:
            continue
        children = list(token.children)
        definite = any(c.dep_ in ("det", "predet") and c.lower_ in ("the", "all") for c in children)
        if not definite or any(_narrows(c) for c in children):
            continue
        same = [c for c in children if c.dep_ == "amod" and c.lower_ == "same"]
        if same and (
            token.lower_ in ("time", "way", "period", "year")
            or any(t.lower_ == "as" for t in token.head.subtree if t.i > token.i)  # "the same role as X"
            or any(c.lower_ == "much" for c in children)  # "with much the same effect"
        ):
            continue
        anaphoric = any(c.dep_ == "amod" and c.lower_ in _ANAPHORIC_MODIFIERS for c in children)
        counted = token.tag_ == "NNS" and any(  # "the three films", not "the next 44 years", "group 1"
            c.dep_ == "nummod" and c.tag_ == "CD" and c.i > 0 and c.doc[c.i - 1].lower_ in ("the", "all")
            for c in children
        )
        if anaphoric or counted:
            start = min(c.i for c in children if c.dep_ in ("det", "predet", "amod", "nummod"))
            return f"{doc[start : token.i + 1].text!r} refers to something the text before named"
    return None


def _narrows(child: Any) -> bool:
    """A child that says which one: a clause, an apposition, a possessor, a name ("the three Baltic
    states") or a prepositional phrase that is not a date ("the two roads out of Andorra", not "in 1998")."""
    if child.dep_ in ("relcl", "acl", "appos", "poss", "compound") or child.tag_ in _NAME_TAGS:
        return True
    if child.dep_ == "amod" and child.text[:1].isupper():
        return True
    if child.dep_ == "prep":
        return any(t.tag_ != "CD" for t in child.children if t.dep_ == "pobj")
    return False


# --- round two: what a finished keypoint still leans on ------------------------------------------------

_SEQUENCE_ADVERBS = frozenset("subsequently eventually thereafter afterwards".split())
_PLURAL_PRONOUNS = frozenset("they them their theirs themselves".split())
# Nouns that may stand for a group of people ("the population declared ... their mother tongue").
_COLLECTIVE = frozenset(
    """population family government people public team group party majority minority person one anyone
    someone everyone everybody each community""".split()
)
_PLACE_KINDS = LABEL_NOUNS["GPE"] | LABEL_NOUNS["LOC"]
_MONTHS = frozenset(name.lower() for name in calendar.month_name if name)


@dataclass(frozen=True)
class Situated:
    """A keypoint rewritten to stand alone, or the reject reason and detail when it cannot."""

    text: str | None
    reason: str = ""
    detail: str = ""


def situate(doc: Any, page: Page, context: Sequence[str], person: str | None = None) -> Situated:
    """The keypoint `doc` (spaCy tags and dependencies) made to stand alone, or why it cannot.

    In order: "again" presupposes an earlier event (`presupposed_event`); a "they"/"them"/"their" with no
    plural before it in the keypoint (`unresolved_referent`); a bare description of the page's kind
    ("the state budget" on a country's page) or an unplaced superlative ("the largest lakes" on a
    place's page) takes the page's name when the keypoint does not name the page (other bare
    descriptions are left to the `unresolved_reference` gate); a lone surname is completed from
    `context` (the lead and the sentences around) when a full name there ends with it, or, on a page
    about one `person` (their name), from that name when it is theirs, and it is rejected when the
    sentences around name someone else with it (`unresolved_referent`); sequencing adverbs
    ("subsequently", "eventually") are dropped.
    """
    again = next((t for t in doc if t.lower_ == "again" and t.dep_ == "advmod"), None)
    if again is not None:
        return Situated(None, "presupposed_event", f"{_phrase(again)!r} presupposes an earlier event")
    dangling = _dangling_plural(doc)
    if dangling is not None:
        return Situated(
            None, "unresolved_referent", f"{dangling.text!r} has no plural before it in the keypoint"
        )
    edits: dict[int, str] = {}  # token index -> replacement text (with its trailing space)
    mentioned = _mentions_page(doc, page)
    place = place_of_page(page)
    unplaced = place is not None and place.lower() not in doc.text.lower()
    for token in doc:
        found = _page_named_again(token, page) if mentioned else _page_description(token, page)
        if found is None and not mentioned and unplaced:
            found = _unplaced_measure(token, place)
        if found is not None:
            edits.update(found)
            mentioned = True  # one name is enough: "the state budget of Azerbaijan"
    for token in doc:
        parts = _page_person_parts(token, person)  # a lone surname of the page's person
        other = None if parts is None else _namesake(token.text, parts, context)
        if other is not None:  # "Murchison served as ..." beside his mother "Clara Lee Murchison"
            detail = f"{token.text!r} alone beside {other!r}: which {token.text} is not sure"
            return Situated(None, "unresolved_referent", detail)
        if token.i not in edits:
            full = _full_name(token, page, context) or (person if parts is not None else None)
            if full is not None:
                edits[token.i] = full + token.whitespace_
            elif token.lower_ in _SEQUENCE_ADVERBS and token.dep_ == "advmod" and token.i > 0:
                edits[token.i] = ""
    if not edits:
        return Situated(doc.text)
    text = "".join(edits.get(t.i, t.text_with_ws) for t in doc)
    return Situated(re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\s{2,}", " ", text)).strip())


def _phrase(token: Any) -> str:
    """ "once again" for "again" after "once"."""
    doc = token.doc
    return f"once {token.text}" if token.i > 0 and doc[token.i - 1].lower_ == "once" else token.text


def _dangling_plural(doc: Any) -> Any | None:
    """The first "they", "them" or "their" with nothing plural before it in the keypoint."""
    for token in doc:
        if token.lower_ not in _PLURAL_PRONOUNS or token.tag_ not in ("PRP", "PRP$"):
            continue
        before = doc[: token.i]
        plural = any(
            t.tag_ in _PLURAL_TAGS
            or t.lower_ in _COLLECTIVE
            or (t.dep_ == "conj" and t.head.tag_.startswith("NN"))
            or t.tag_ == "CD"
            for t in before
        )
        return None if plural or _plural_subject_after(token) else token
    return None


def _plural_subject_after(pronoun: Any) -> bool:
    """ "Under ... their consul, the French invaded": the main clause's plural subject comes after."""
    for root in (t for t in pronoun.doc if t.dep_ == "ROOT"):
        for subject in (c for c in root.children if c.dep_ in ("nsubj", "nsubjpass") and c.i > pronoun.i):
            if subject.tag_ in _PLURAL_TAGS or subject.lower_ in _COLLECTIVE or subject.tag_ == "NNPS":
                return True
            if subject.tag_ == "NNP" and any(c.lower_ == "the" for c in subject.children):
                return True  # "the French"
    return False


def _mentions_page(doc: Any, page: Page) -> bool:
    name = {w for w in words(page.name) if w != "the"}
    return bool(name) and name <= set(words(doc.text))


def _bare(head: Any) -> bool:
    """A definite description nothing narrows: "the state budget", not "the state of Alaska"."""
    children = list(head.children)
    if not any(c.dep_ == "det" and c.lower_ == "the" for c in children):
        return False
    return not any(_narrows(c) and c.dep_ != "compound" for c in children)


def _described(token: Any) -> Any | None:
    """The head of the description `token` opens ("the state legislature": "legislature"), when the
    common noun `token` comes right after "the" (adjectives allowed) and heads it or modifies the head."""
    if token.tag_ not in ("NN", "NNS") or not token.is_lower:
        return None
    head = token.head if token.dep_ == "compound" and token.head.i == token.i + 1 else token
    det = next((c for c in head.children if c.dep_ == "det" and c.lower_ == "the"), None)
    if det is None or det.i > token.i or any(t.dep_ != "amod" for t in token.doc[det.i + 1 : token.i]):
        return None
    return head if _bare(head) else None


def _page_description(token: Any, page: Page) -> dict[int, str] | None:
    """Edits naming the page in a bare description of its kind, or in an unplaced superlative of a
    place's page: "the state budget" -> "the state budget of Azerbaijan", "the country's" ->
    "Algeria's", "the largest lakes" -> "the largest lakes in Albania"."""
    head = _described(token)
    name = _proper_name(page)
    if head is None or name is None:
        return None  # "Alkali metal": "the metal" may be lithium
    doc = token.doc
    det = next(c for c in head.children if c.dep_ == "det")
    if _same_kind(singular(token.lower_), page.nouns) and token.tag_ == "NN" and token.i == det.i + 1:
        if head is token:  # "the country" -> "Algeria", "the country's" -> "Algeria's"
            return {det.i: "", token.i: name + token.whitespace_}
        return {head.i: f"{head.text} of {name}{head.whitespace_}"}
    superlative = head is token and any(
        c.dep_ == "amod" and (c.tag_ == "JJS" or any(g.lower_ == "most" for g in c.children))
        for c in head.children
    )
    placed = any(t.lower_ == "in" and any(c.tag_ in _NAME_TAGS for c in t.children) for t in doc)
    if superlative and page.nouns & _PLACE_KINDS and not placed:
        return {head.i: f"{head.text} in {name}{head.whitespace_}"}
    return None


def _page_named_again(token: Any, page: Page) -> dict[int, str] | None:
    """ "Andorra was technically the longest combatant ..., as the country was ..." -> "as Andorra was":
    a bare description of a place's kind after the keypoint has named the place. (On a person's page
    "the writer" is as often someone else.)"""
    if singular(token.lower_) not in _PLACE_KINDS:
        return None
    if (
        _described(token) is not token
        or token.tag_ != "NN"
        or not _same_kind(singular(token.lower_), page.nouns)
    ):
        return None
    name = _proper_name(page)
    det = next(c for c in token.children if c.dep_ == "det")
    if name is None or det.i != token.i - 1 or not _mentions_page(token.doc[: det.i], page):
        return None
    return {det.i: "", token.i: name + token.whitespace_}


def _proper_name(page: Page) -> str | None:
    """The page's name as a text writes it mid-sentence ("the Atlantic Ocean"), or None when it is not a
    proper name ("Alkali metal": "the metal" may be lithium)."""
    if not all(w[:1].isupper() or not w[:1].isalpha() for w in page.name.split()):
        return None
    return page.name[0].lower() + page.name[1:] if page.name.startswith("The ") else page.name


# What a place has that its page names without saying whose: "the population", "Voter turnout".
_MEASURES_OF = frozenset("population economy budget debt workforce electorate".split())
_MEASURES_IN = frozenset("turnout inflation unemployment literacy".split())


def place_of_page(page: Page) -> str | None:
    """The place a page is about: its own name for a country's or a state's page, "Angola" for
    "Economy of Angola"; None for other pages."""
    topic = topic_of(page.name)
    if topic is not None:
        return topic
    if page.nouns & _PLACE_KINDS and all(w[:1].isupper() for w in page.name.split()):
        return page.name
    return None


def _names_a_place(doc: Any) -> bool:
    """A known place among the text's capitalised runs or proper nouns."""
    runs = re.findall(r"(?:[A-Z][\w'-]*\s?)+", doc.text)
    names = [t.text for t in doc if t.tag_ in _NAME_TAGS]
    return any(known_place(name.strip()) for name in (*runs, *names))


def _demonym_of(word: str, place: str) -> bool:
    """ "Afghan" for "Afghanistan", "Angolan" for "Angola" (not "Chinese": the Chinese population of
    Angola is in Angola)."""
    return word[:1].isupper() and len(word) >= 4 and word[:4].lower() == place[:4].lower()


def _unplaced_measure(token: Any, place: str) -> dict[int, str] | None:
    """ "the population" -> "the population of Algeria", "Voter turnout" -> "Voter turnout in Angola":
    a measure of a place, with no possessor, of- or in-phrase, in a keypoint that names no place."""
    lower = token.lower_
    if token.tag_ not in ("NN", "NNP") or lower not in _MEASURES_OF | _MEASURES_IN and lower != "rate":
        return None
    if token.dep_ in ("compound", "appos") or token.i > 0 and token.nbor(-1).text == "(":
        return None  # "population growth": the head decides
    if lower == "rate" and not any(c.dep_ == "compound" and c.lower_ in _MEASURES_IN for c in token.children):
        return None  # "the inflation rate", not "the rate"
    if any(c.dep_ in ("poss", "prep", "relcl", "acl", "appos") for c in token.children):
        return None
    first_word = {0} if token.doc[0].lower_ in english_words() else set()  # "Voter" opens the sentence
    named = (c for c in token.children if c.dep_ != "det" and c.i not in first_word)
    if any(c.tag_ in _NAME_TAGS or c.tag_ == "PRP$" or _demonym_of(c.text, place) for c in named):
        return None  # "Angola's population", "the Kabul population", "the Afghan population"
    if _names_a_place(token.doc):
        return None
    linker = "of" if lower in _MEASURES_OF else "in"
    return {token.i: f"{token.text} {linker} {place}{token.whitespace_}"}


def _full_name(token: Any, page: Page, context: Sequence[str]) -> str | None:
    """ "Neil Armstrong" for a lone "Armstrong" when the context names one person in full with that
    surname and the page is someone else's; None otherwise (and for "Aliyev" beside Heydar and Ilham)."""
    if not lone_name(token) or token.lower_ in words(page.name):
        return None
    pattern = _full_name_pattern(token.text)
    texts = (clean(text) for text in context if token.text in text or "[" in text)  # clean drops "[1]"
    names = {name for text in texts for match in pattern.finditer(text) if (name := _person(match))}
    names = {name for name in names if not any(other.endswith(" " + name) for other in names)}
    own = set(words(page.name))
    names = {name for name in names if not own & set(words(name.rsplit(" ", 1)[0]))}  # "Agassi Graf"
    return names.pop() if len(names) == 1 else None


@lru_cache(maxsize=1024)
def _full_name_pattern(surname: str) -> re.Pattern[str]:
    return re.compile(rf"((?:\b[A-Z][a-z]+\s+){{1,2}}){re.escape(surname)}\b")


_SUFFIXES = frozenset("sr sr. jr jr. ii iii iv".split())


def lone_name(token: Any) -> bool:
    """A one-word proper noun on its own: no name before it or in a compound with it, no determiner."""
    if token.tag_ != "NNP" or token.dep_ == "compound" or not token.text.isalpha():
        return False
    if any(c.dep_ in ("compound", "det", "poss") for c in token.children):
        return False
    return not (token.i > 0 and token.doc[token.i - 1].tag_ in _NAME_TAGS)


def _page_person_parts(token: Any, person: str | None) -> list[str] | None:
    """The page person's name without its suffix ("Clint Murchison" of "Clint Murchison Sr.") when the lone
    name `token` is their surname and the text does not name them in full already, else None. After the
    lead an article names its subject by surname, so a keypoint standing alone needs the whole name
    ("Elizabeth Gilbert" for a lone "Gilbert" on her page), unless the sentences around name someone
    else with it (`_namesake`)."""
    if person is None or not lone_name(token) or person in token.doc.text:
        return None
    parts = [word for word in person.split() if word.lower() not in _SUFFIXES]
    return parts if len(parts) >= 2 and token.text == parts[-1] else None


def _namesake(surname: str, parts: Sequence[str], context: Sequence[str]) -> str | None:
    """Someone else the sentences around name with the page person's surname ("Marc Emery" on Jodie
    Emery's page), or None."""
    pattern = re.compile(rf"\b((?:[A-Z][a-z]+ )+){re.escape(surname)}\b")
    for text in context:
        for match in pattern.finditer(clean(text)):
            named = match.group(1).split()
            if not set(named) & set(parts) and any(word.lower() in given_names() for word in named):
                return match.group(0)
    return None


def _person(match: re.Match[str]) -> str | None:
    """The longest personal name the match ends with: "Neil Armstrong" of "Americans Neil Armstrong"."""
    given = match.group(1).split()
    surname = match.group(0).split()[-1]
    for start in range(len(given)):
        first = [word.lower() for word in given[start:]]
        if any(word in stop_words() or word in _MONTHS for word in first):
            continue
        if len(first) > 1 and not all(word in given_names() for word in first):
            continue  # "Americans Neil Armstrong", but "Julius Lothar Meyer"
        name = " ".join([*given[start:], surname])
        if is_personal_name(name):
            return name
    return None

"""Quality gates shared by both backends: named checks a keypoint, a question or a plan must pass.

Each gate is a function that returns None when the text passes and a short detail when it fails; its
name is the reject reason. Keypoint gates run in the keypoint stage, question gates on every hop's
sub-question and on the final question, answer and bridge gates when plans are made. The rules
backend is built to pass them; the llm backend gets one refinement, then a reject.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from irbgen.irb.masking import normalize
from irbgen.irb.node_types import name_noun, name_type
from irbgen.irb.places import gives_country_away, known_place
from irbgen.irb.records import Entity
from irbgen.irb.rules.graph import node_type as label_type
from irbgen.irb.rules.questions import HONORIFICS
from irbgen.irb.rules.referents import lone_name
from irbgen.irb.transforms import english_words, given_names, is_personal_name, parse_date, surnames_known
from irbgen.wikipedia.leads import subject_name, topic_of

MAX_QUESTION_WORDS = 40
MAX_DESCRIBED_WORDS = 20  # a hop that becomes a description inside the next one
MAX_CLAUSES = 3  # relative or wh-clause words in one question
BRIDGE_LABELS = frozenset("PERSON ORG GPE LOC FAC EVENT WORK_OF_ART NORP".split())
VALUE_LABELS = frozenset("CARDINAL PERCENT MONEY QUANTITY".split())

# --- keypoints: standing alone ------------------------------------------------------------------------

_CONNECTIVES = (
    "however|therefore|thus|hence|also|additionally|furthermore|moreover|meanwhile|later|subsequently"
    "|afterwards?|then|instead|nevertheless|nonetheless|consequently|still|yet|besides|likewise|similarly"
    "|accordingly|indeed|otherwise|finally|eventually|again|so|and|but|or|nor|as such|in addition"
    "|as a result|in contrast|by contrast|in turn|in response|in particular|at first|at last|by then"
    "|since then|until then|after that|before that|soon after(?:wards)?|shortly after(?:wards)?"
    "|in the meantime|on the other hand|at the same time|for example|for instance|in fact|in total"
    "|overall|ultimately|initially|previously|earlier|recently|currently|today|now"
    "|(?:despite|in spite of) (?:that|this)(?=,)|even so"
)
_OTHER_LEAD = re.compile(  # "Other Christian denominations", "A sixth upgrader"
    r"^(?:Other|Another|Further|Similar)\s+\w|^An? (?:second|third|fourth|fifth|sixth|seventh|further)\b"
)
_ADJECTIVE_LEAD = re.compile(r"^(?:earlier|later|previous|initial|recent|current)\s+[a-z]+s\b", re.I)
_OWN_COMPARISON = re.compile(r"^(?:in contrast to|by contrast to|instead of|in addition to)\b", re.I)
_LEADING_CONNECTIVE = re.compile(rf"^(?:{_CONNECTIVES})\b(?!-)", re.IGNORECASE)
_UNIT = r"(?:days?|weeks?|months?|years?|decades?|centuries|century|seasons?|hours?|minutes?)"
_NUMBER_WORD = (
    r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several|few|many|some|\d+)"
)
_TIME_ANCHOR = re.compile(
    rf"\b(?:{_NUMBER_WORD}\s+(?:more\s+)?{_UNIT}\s+(?:later|earlier|after(?:wards)?|before|prior)\b(?!\s+(?:the|a|an|his|her|its|their|[A-Z\d]))"
    rf"|(?:the|that|this)\s+(?:following|next|previous|preceding|same|prior)\s+{_UNIT}"
    rf"|(?:later|earlier)\s+(?:that|this|the same)\s+{_UNIT}"
    rf"|(?:that|this)\s+{_UNIT}\b(?!\s+(?:of|in)\b)"
    r"|at\s+(?:the|that)\s+time\b(?!\s+of\b)|by\s+then|since\s+then|until\s+then"
    r"|the\s+(?:latter|former)(?=\s*[,.;)]|\s+(?:was|is|were|are|had|has|became|did)\b)"
    r"|(?:the\s+)?aforementioned)",
    re.IGNORECASE,
)


def leading_connective(text: str) -> str | None:
    """A connective or a time anchor that needs the sentence before ("However", "Two days later")."""
    stripped = text.strip().lstrip("\"'“‘(")
    match = _LEADING_CONNECTIVE.match(stripped)
    own_comparison = _OWN_COMPARISON.match(stripped)
    if match is not None and not _ADJECTIVE_LEAD.match(stripped) and not own_comparison:
        return f"starts with {match.group(0)!r}"
    other = _OTHER_LEAD.match(stripped)
    if other is not None:
        return f"starts with {other.group(0)!r}: other than what the text before named"
    anchor = _TIME_ANCHOR.search(text)
    if anchor is not None and re.search(r"\b(?:that|this|the same) year\b", anchor.group(0), re.I):
        if re.search(r"\b(?:1\d|20)\d\d\b", text[: anchor.start()]):
            anchor = None  # "... on 26 June 2011 that ... that year": the year is in the text
    if anchor is not None:
        return f"time anchor {anchor.group(0)!r}"
    return None


_PRONOUNS = frozenset("he she they them him his her hers its their theirs it".split())
_DEMONSTRATIVES = frozenset("this these those such".split())
# Nouns whose one referent every reader knows, so "the <noun>" needs no antecedent.
_UNIQUE_NOUNS = frozenset(
    """world sun moon earth universe internet web public past future present sea weather environment
    media press majority minority rest""".split()
)
_NOUN_TAGS = frozenset(("NN", "NNS"))
_NAME_TAGS = frozenset(("NNP", "NNPS"))
_WH_WORDS = frozenset("who whom whose which what".split())
_PERSONAL = frozenset("he she him his her hers".split())
_PERSONAL_GENDER = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f", "hers": "f"}


def _nounnormalize(token: Any) -> str:
    """A noun's comparable form without spaCy's lemmatizer: lower case, a plural -s dropped."""
    lower = token.lower_
    return lower[:-1] if token.tag_ == "NNS" and lower.endswith("s") else lower


_PLACE_PREPOSITIONS = frozenset("in at near throughout across".split())


def _name_top(token: Any) -> Any:
    """The head word of the name `token` is part of ("York" for "New" in "New York")."""
    while token.dep_ in ("compound", "flat") and token.head.tag_ in _NAME_TAGS and token.head is not token:
        token = token.head
    return token


def _in_fronted_phrase(token: Any, pronoun: Any) -> bool:
    """`token` sits in a prepositional phrase set off by a comma right before the subject `pronoun`:
    "Upon ratification, it became ...". A possessor there may be meant ("In Schopenhauer's 1851 essay,
    he ...")."""
    if pronoun.dep_ not in ("nsubj", "nsubjpass") or pronoun.i < 2 or pronoun.nbor(-1).text != ",":
        return False
    if token.dep_ == "poss" or _name_top(token).dep_ == "poss":
        return False
    fronted = (c for c in pronoun.head.children if c.dep_ == "prep" and c.i < pronoun.i)
    return any(phrase.left_edge.i <= token.i <= phrase.right_edge.i for phrase in fronted)


def _has_antecedent(doc: Any, index: int, person: tuple[str, str] | None = None) -> bool:
    """A noun (a name, for he and she) or a wh-word stands before token `index`; tags only, no NER.

    A noun in a phrase fronted before the pronoun ("Upon ratification, it") does not count, nor, for he
    and she, a place ("in New York, he") or the page's person (`person`: their name and "m" or "f") when
    the pronoun is of the other gender ("Schopenhauer told her ...").
    """
    pronoun = doc[index]
    personal = pronoun.lower_ in _PERSONAL
    tags = _NAME_TAGS if personal else _NAME_TAGS | _NOUN_TAGS
    other_gender = personal and person is not None and _PERSONAL_GENDER[pronoun.lower_] != person[1]
    page_words = set(person[0].lower().split()) if other_gender else set()  # type: ignore[index]

    def stands_for(token: Any) -> bool:
        if token.lower_ in _WH_WORDS:
            return not personal or token.lower_ in ("who", "whom", "whose")  # not "which place, he"
        if token.tag_ not in tags or _in_fronted_phrase(token, pronoun):
            return False
        if not personal:
            return True
        top = _name_top(token)
        if top.dep_ == "pobj" and top.head.lower_ in _PLACE_PREPOSITIONS:
            return False  # "While still in New York, in 1917 he ..."
        if token.lower_ in page_words:
            return False
        return not any(child.lower_ == "the" for child in token.head.children) and not any(
            child.lower_ == "the" for child in token.children
        )  # "the Suda" is no "he"

    return any(stands_for(token) for token in doc[:index])


def _means_the_page(doc: Any, index: int, person: tuple[str, str] | None) -> bool:
    """On a page about one person, a possessive "his" or "her", or the main clause's "he" or "she", of
    their gender means them when the text does not name them anywhere: "Tom Carson described her books"
    on Ayn Rand's page. (An object "him" may mean a name before it: "Booth stabbed him".)"""
    pronoun = doc[index]
    if person is None or _PERSONAL_GENDER.get(pronoun.lower_) != person[1]:
        return False
    if pronoun.dep_ != "poss" and not (
        pronoun.dep_ in ("nsubj", "nsubjpass") and pronoun.head.dep_ == "ROOT"
    ):
        return False
    page_words = set(person[0].lower().split())
    return not any(token.lower_ in page_words and token.text[:1].isupper() for token in doc)


_CLAUSE_PASSIVES = frozenset("proposed decided agreed suggested planned intended recommended".split())


def _dummy_it(token: Any) -> bool:
    """ "It" that stands for a clause: "It was reported in 2006 that ...", "It is hard to ..."."""
    if token.dep_ == "expl":
        return True
    if token.lower_ != "it" or token.dep_ not in ("nsubj", "nsubjpass"):
        return False
    head = token.head
    if any(child.dep_ in ("ccomp", "csubj") for child in head.children):
        return True
    # "It is hard to ...", "It seems to ...", but not "It was invited to join NATO"
    linking = head.lower_ in _BE_OR_HAVE | {"be", "been", "seems", "seemed", "appears", "appeared"}
    passive = token.dep_ == "nsubjpass" and head.lower_ in _CLAUSE_PASSIVES  # "it has been proposed to ..."
    return (linking or passive) and any(child.dep_ == "xcomp" for child in head.children)


_VAGUE_MODIFIERS = frozenset(
    "increased renewed continued ongoing new latest same above following main".split()
)


def _vague_modifier(token: Any) -> bool:
    """A modifier that does not say which one: "the increased attacks", "the same claim"."""
    return token.dep_ == "amod" and token.lower_ in _VAGUE_MODIFIERS


_RELATIVE_WORDS = frozenset(("whose", "that", "which", "who", "whom", "where"))


def _bare_description(token: Any) -> bool:
    """A common noun led by "the" with nothing that says which one (no modifier, clause or of-phrase)."""
    if token.tag_ not in _NOUN_TAGS or not (token.is_lower and token.is_alpha):
        return False
    if _nounnormalize(token) in _UNIQUE_NOUNS:
        return False
    children = list(token.children)
    if not children or children[0].dep_ != "det" or children[0].lower_ != "the":
        return False
    if any(child.dep_ not in ("det", "punct", "case") and not _vague_modifier(child) for child in children):
        return False  # an adjective, compound, of-phrase, relative clause or apposition narrows it
    if token.dep_ in ("compound", "appos") or token.head.tag_ in _NAME_TAGS:
        return False
    following = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if following is not None and following.lower_ in _RELATIVE_WORDS:
        return False  # "the country whose capital is Baku": a clause the parser hung elsewhere narrows it
    earlier = {_nounnormalize(t) for t in token.doc[: children[0].i] if t.tag_ in _NOUN_TAGS | _NAME_TAGS}
    return _nounnormalize(token) not in earlier


def _another_of_before(token: Any) -> bool:
    """ "Snooker is another of the UK's popular sporting exports", "another city": one more of something
    the text before named; not a count ("another 184 in Afghanistan") nor a kind the text names itself
    ("One theory ..., another theory ...")."""
    following = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else None
    if following is None or following.like_num:
        return False
    if following.lower_ == "of":
        return True
    if token.dep_ != "det" or token.head.tag_ not in _NOUN_TAGS:
        return False
    earlier = {_nounnormalize(t) for t in token.doc[: token.i] if t.tag_ in _NOUN_TAGS}
    return _nounnormalize(token.head) not in earlier


def unresolved_reference(doc: Any, person: tuple[str, str] | None = None) -> str | None:
    """A pronoun, demonstrative or bare definite description whose referent is not in the text.

    `doc` is a spaCy parse with tags and dependencies (the build's light parser: no NER needed);
    `person` the name and gender ("m" or "f") of the page's subject, when the text comes from a page
    about one person.
    """
    doing_so = re.search(r"\bdoing so\b", doc.text, re.IGNORECASE)
    if doing_so:
        return f"{doing_so.group(0)!r} refers outside the text"
    for token in doc:
        lower = token.lower_
        if lower in _PRONOUNS and token.tag_ in ("PRP", "PRP$") and not _dummy_it(token):
            if _means_the_page(doc, token.i, person):  # with or without a name before it to mean
                return f"pronoun {token.text!r} means {person[0]}, whom the text does not name"  # type: ignore[index]
            if not _has_antecedent(doc, token.i, person):
                return f"pronoun {token.text!r} refers outside the text"
        elif lower == "another" and _another_of_before(token):
            return f"'{doc[token.i : token.i + 2].text}' presupposes one named before"
        elif lower == "such" and token.dep_ in ("amod", "predet") and token.head.tag_ in _NOUN_TAGS:
            return f"'such {token.head.text}' points outside the text"
        elif (lower in _DEMONSTRATIVES and token.dep_ in ("det", "nsubj", "nsubjpass", "dobj", "pobj")) or (
            lower == "that" and token.dep_ == "det"
        ):
            return f"{token.text!r} points outside the text"
        elif _bare_description(token):
            return f"'the {token.text}' refers outside the text"
        elif _bare_count(token):
            return f"{token.text!r} counts something the text does not name"
    return None


_SMALL_COUNTS = frozenset(
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen twenty".split()
)


def _bare_count(token: Any) -> bool:
    """ "The Anchorage Daily News found ten set in Alaska": a spelled-out number standing alone as the
    subject or object, what it counts named in the sentence before. "two of them" is a pronoun's case;
    "ten films" and "$6 million" count what they name."""
    return (
        token.lower_ in _SMALL_COUNTS
        and token.tag_ == "CD"
        and token.dep_ in ("nsubj", "nsubjpass", "dobj")
        and not any(child.dep_ == "prep" for child in token.children)
    )


_BROKEN = re.compile(
    r"\(\s*[;,:.]?\s*\)|\(\s*[;,:]|[;,:]\s*\)|\s[,;:]\s*[,;:.]|(?<!\.)\.\s*\.(?!\.)"
    r"|\b(?:in|of|at|by|for|from|with) (?:in|of|at|by|for|from|with)\b(?! (?:which|whom|what)\b)"
    r"|['’]s -[a-z]"  # a number lost before "-gauge"
    r"|\d e\d+[a-z]"  # a unit template left as "3 e6carat"
)


# What many countries have, so "the civil war" or "the constitutional amendment" must say whose.
_EVERY_COUNTRY_HAS = frozenset(
    """war amendment constitution government parliament election referendum revolution census legislature
    monarchy regime independence""".split()
)


# Capitalised adjectives that many countries' institutions share: "the new Communist regime" says not whose.
_SHARED_BY_MANY = frozenset(
    "communist socialist fascist nazi marxist islamist nationalist royalist republican military".split()
)


def _says_not_whose(adjective: Any) -> bool:
    """A lowercase adjective ("civil", "new"), or a capitalised one that names a kind of rule many countries
    had ("Communist"), not a people or a place ("Soviet", "Algerian")."""
    return adjective.tag_ == "JJ" and (adjective.is_lower or adjective.lower_ in _SHARED_BY_MANY)


def unplaced_institution(doc: Any) -> str | None:
    """ "since the end of the civil war", "by the constitutional amendment of what date", "repressed by the
    new Communist regime": a definite description of what many countries have, with lowercase or shared
    adjectives only (no name, possessor or clause, a date or the question word at most), says neither
    whose nor which."""
    for token in doc:
        if token.tag_ not in _NOUN_TAGS or _nounnormalize(token) not in _EVERY_COUNTRY_HAS:
            continue
        children = list(token.children)
        if not children or children[0].dep_ != "det" or children[0].lower_ != "the":
            continue
        adjectives = [c for c in children if c.dep_ == "amod"]
        plain = all(_says_not_whose(c) and not list(c.children) for c in adjectives)
        others = [c for c in children if c.dep_ not in ("det", "punct", "amod")]
        dated = all(
            c.dep_ == "prep"
            and all(
                t.like_num or t.lower_ in _WH_WORDS | {"date", "year"}
                for t in c.subtree
                if t != c and t.dep_ != "det"
            )
            for c in others
        )
        if adjectives and plain and dated:
            return f"'{doc[children[0].i : token.i + 1].text}' of which country is not said"
    return None


# Offices and bodies every country has: "the President" alone says not whose.
_STATE_OFFICES = frozenset(
    """president government parliament king queen emperor cabinet senate congress chancellor premier
    governor legislature constitution monarch minister""".split()
)
_PLACE_WH = re.compile(r"\b(?:which|what) (?:country|state|place|province|city|nation)\b|\bwhere\b", re.I)


def unplaced_office(doc: Any) -> str | None:
    """ "... an agency subordinate to the President?": a capitalised office or body every country has
    ("the President", "the Prime Minister", "the Government"), led by "the", owned by no name or
    of-phrase, in a question that names no place, nationality or abbreviation and does not ask for a
    place (whose office it could be)."""
    if _PLACE_WH.search(doc.text) or any(_says_where(token) for token in doc):
        return None
    for token in doc:
        if token.lower_ not in _STATE_OFFICES or not token.text[:1].isupper() or token.is_sent_start:
            continue
        first = token.left_edge
        if first.lower_ != "the" or first.head.i != token.i:
            continue
        titled = [child for child in token.children if child.i < token.i and child.dep_ != "det"]
        if any(child.text[:1].islower() or child.lower_ not in ("prime", "vice") for child in titled):
            continue  # "the Azerbaijani President", "the state Government"
        if any(child.dep_ in ("prep", "poss", "appos", "relcl", "acl") for child in token.children):
            continue
        if token.dep_ == "compound" or token.head.tag_ in _NAME_TAGS and token.head.i > token.i:
            continue  # part of a longer name ("the Senate Armed Services Committee")
        return f"'{doc[first.i : token.i + 1].text}' of which country is not said"
    return None


_OPEN_PREPOSITIONS = frozenset(("including", "like", "such"))  # "the mission including ...": still which?


def _common_compound(token: Any) -> bool:
    """A lowercase common noun in a compound, itself made of such nouns only ("state", "series season")."""
    return (
        token.dep_ == "compound"
        and token.tag_ in _NOUN_TAGS
        and token.is_lower
        and token.is_alpha
        and all(_common_compound(child) for child in token.children)
    )


def compound_description(doc: Any) -> str | None:
    """ "the state legislature", "the video footage", "the mission including ...": a common noun led by
    "the" whose only modifiers are lowercase common nouns or a list it includes. Such a compound says what
    kind, not which one; the text it came from said which. (A bare "the mission" is
    `unresolved_reference`'s.)"""
    for token in doc:
        if token.tag_ not in _NOUN_TAGS or not (token.is_lower and token.is_alpha):
            continue
        if _nounnormalize(token) in _UNIQUE_NOUNS or token.dep_ in ("compound", "appos"):
            continue
        children = list(token.children)
        if not children or children[0].dep_ != "det" or children[0].lower_ != "the":
            continue
        compounds = [c for c in children if _common_compound(c)]
        listed = [c for c in children if c.dep_ == "prep" and c.lower_ in _OPEN_PREPOSITIONS]
        loose = [c for c in children[1:] if c.dep_ in ("punct", "case") or _vague_modifier(c)]
        if not (compounds or listed) or len(compounds) + len(listed) + len(loose) != len(children) - 1:
            continue
        if token.head.tag_ in _NAME_TAGS:
            continue
        named = {_nounnormalize(t) for t in doc[: children[0].i] if t.tag_ in _NOUN_TAGS | _NAME_TAGS}
        if _nounnormalize(token) in named:
            continue
        phrase = doc[children[0].i : token.i + 1].text
        return f"{phrase!r} says what kind, not which one"
    return None


def broken_text(text: str) -> str | None:
    """Leftovers of removed markup: empty brackets, "(;", doubled punctuation, unbalanced brackets."""
    match = _BROKEN.search(text)
    if match is not None:
        return f"markup leftover {match.group(0)!r}"
    return unbalanced(text)


_GENERIC_NAMES = frozenset(
    """republic government parliament congress council assembly state kingdom empire army court party
    senate ministry commission committee constitution department office bureau agency""".split()
)


def _anchor(token: Any) -> bool:
    """A word that pins a noun phrase down: a name, a nationality ("Afghan") or a question word. A
    capitalised institution word alone ("The modern Republic", "the Parliament") is no name."""
    capital_adjective = token.tag_ == "JJ" and token.text[:1].isupper() and token.i > 0
    generic = token.lower_ in _GENERIC_NAMES and not any(c.tag_ in _NAME_TAGS for c in token.children)
    name = token.tag_ in _NAME_TAGS and not generic
    return name or capital_adjective or token.lower_ in _WH_WORDS


def _says_where(token: Any) -> bool:
    """A place name, a nationality or an abbreviation ("U.S.", "UN") inside an institution's name."""
    if (
        token.tag_ not in _NAME_TAGS | {"JJ"}
        or not token.text[:1].isupper()
        or token.lower_ in _GENERIC_NAMES
    ):
        return False
    nationality = token.tag_ == "JJ" or re.search(r"(?:an|ese|ish)$", token.text) is not None  # "Angolan"
    abbreviation = re.fullmatch(r"(?:[A-Z]\.?){2,}", token.text) is not None
    return nationality or abbreviation or known_place(token.text)


def unanchored_subject(doc: Any, title: str = "") -> str | None:
    """The sentence's subject is common nouns only ("The state government", "The military expenditure",
    "Growing oil revenues") and the page's name is not in the text: its page said whose, the keypoint
    does not. A subject introduced with "a" or "an" stands alone."""
    name = subject_name(title)
    if name and name.lower() in doc.text.lower():
        return None
    for root in (token for token in doc if token.dep_ == "ROOT"):
        for subject in (child for child in root.children if child.dep_ in ("nsubj", "nsubjpass")):
            determiner = next((c for c in subject.children if c.dep_ == "det"), None)
            if (
                subject.tag_ not in _NOUN_TAGS | _NAME_TAGS
                or determiner is not None
                and determiner.lower_ in ("a", "an")
            ):
                continue  # "A hybrid named ..." introduces its subject
            if _nounnormalize(subject) in _UNIQUE_NOUNS:
                continue
            if subject.lower_ in _GENERIC_NAMES:  # "The Ministry of Public Health": of which country?
                if any(_says_where(t) for t in subject.subtree):
                    continue
            elif any(_anchor(t) for t in subject.subtree):
                continue
            phrase = doc[subject.left_edge.i : subject.i + 1].text
            return f"the subject {phrase!r} needs its page ({name or 'unknown'}) to say whose"
    return None


_FAITHS = frozenset(("islam", "christianity", "judaism", "buddhism", "hinduism", "sikhism"))


def lone_surname(doc: Any, title: str = "") -> str | None:
    """ "Morgan was the founder of the Houston Holocaust Museum." on Allen R. Morris's page: the main
    clause's subject (or one of its conjuncts) is a surname alone, not the page's, and the keypoint names
    nobody in full with it; the article said which Morgan earlier (the page's own person is completed by
    `situate`)."""
    for token in doc:
        subject = token.head if token.dep_ == "conj" else token  # "Agassi and Graf developed ..."
        if subject.dep_ not in ("nsubj", "nsubjpass") or subject.head.dep_ != "ROOT" or not lone_name(token):
            continue
        if token.text in title or token.lower_ in _FAITHS:
            continue
        if any(c.dep_ in ("amod", "appos") for c in token.children):  # "Morgan, a banker," says which
            continue
        if (
            token.lower_ in surnames_known()
            and token.lower_ not in given_names()
            and not known_place(token.text)
        ):
            return f"{token.text!r} alone: which {token.text} is not said"
    return None


_CONDITIONAL_OPENERS = frozenset(("should", "were", "had"))
_FORECAST_MODALS = frozenset(("would", "could", "might", "should", "will", "may"))


def conditional_claim(doc: Any) -> str | None:
    """A claim under a condition is no fact to ask about: "Should the GDP remain at an average of 2.2%
    ..., Alberta's GDP should exceed $430 Billion"; "If the trend continues, X will ...": an inverted
    "Should/Were/Had" or an "if"/"unless" clause on a main verb with a modal."""
    opener = doc[0] if len(doc) else None
    inverted = opener is not None and opener.dep_ in ("aux", "auxpass")
    if inverted and opener.lower_ in _CONDITIONAL_OPENERS and opener.head.dep_ == "advcl":
        return f"a condition, not a fact: {doc[: opener.head.i + 1].text!r} ..."
    for token in doc:
        if token.lower_ in ("if", "unless") and token.dep_ == "mark" and token.head.dep_ == "advcl":
            main = token.head.head  # the sentence's own verb: not "predicted that, if ..., X would"
            if main.dep_ == "ROOT" and any(
                c.dep_ == "aux" and c.lower_ in _FORECAST_MODALS for c in main.children
            ):
                return f"a claim under a condition ({token.text!r} ...), not a fact"
    return None


def keypoint_failure(
    text: str, doc: Any, title: str = "", person: tuple[str, str] | None = None
) -> tuple[str, str] | None:
    """(gate name, detail) of the first keypoint gate that fails, or None; `doc` is spaCy's parse,
    `title` the page the keypoint comes from and `person` its subject's name and gender ("m" or "f")
    when the page is about one person."""
    for name, detail in (
        ("broken_text", broken_text(text)),
        ("leading_connective", leading_connective(text)),
        ("unresolved_reference", unresolved_reference(doc, person)),
        ("unresolved_reference", unanchored_subject(doc, title)),
        ("unresolved_reference", lone_surname(doc, title)),
        ("conditional_claim", conditional_claim(doc)),
    ):
        if detail is not None:
            return name, detail
    return None


# --- questions: shape ---------------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’.-][^\W_]+)*")
_CLAUSE_WORDS = re.compile(r"\b(?:who|whom|whose|which|that|where|when|whereby)\b", re.IGNORECASE)
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"), ("“", "”"))
_FLAG = re.compile("[\U0001f1e6-\U0001f1ff]")
_RELATIVE_DATE = re.compile(
    r"\b(?:\d+|an?|one)\s+(?:days?|weeks?|months?|years?)\s+ago\b|\bin\s+\d+\s+(?:days?|weeks?|months?|years?)\b"
    r"|\b(?:today|this month|this year)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = (
    r"(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
    r"|thousand|million|billion)"
)
_GLUED = re.compile(
    rf"\b{_NUMBER_WORDS}(?:%|\s*(?::|[.,]\d|[–-]\d|\s+point\s+{_NUMBER_WORDS}|\s+(?:percent|per cent)\b))"
    rf"|(?<![A-Za-z])[-−–]{_NUMBER_WORDS}\b|\d\s*(?:–|-|to)\s*{_NUMBER_WORDS}\b|\b{_NUMBER_WORDS}\s+(?:–|to)\s+\d",
    re.IGNORECASE,
)


def _over(question: str, limit: int, what: str = "") -> str | None:
    """ "N words (at most LIMIT ...)" when the question has more than LIMIT words, else None."""
    count = len(_WORD.findall(question))
    return f"{count} words (at most {limit}{what})" if count > limit else None


def too_long(question: str) -> str | None:
    """More than MAX_QUESTION_WORDS words."""
    return _over(question, MAX_QUESTION_WORDS)


_WH_IN_CLAUSE = re.compile(
    r"(?<!^)(?<![.?!]\s)\b(?:whom|what)\s+(?:had|has|have|was|were|is|are|did|does|do|\w+ed)\b"
    r"|(?<!^)\b(?:who|whom|what)\s*,|['’]s\s+(?:who|whom|what)\b|\b(?:were|was|is|are)\s+whom\b"
    r"|(?<!^)\bwhen\s*,|,\s*(?:who|whom|what)\?$|\bsuch as (?:who|whom|what|which)\b",
    re.IGNORECASE,
)
_GARBLED = re.compile(
    r"\bwhat what\b|\bduring which place\b|\bwhich \w+ which\b"
    r"|\b(?:since|from|through|until|till|to|by|of) when\b|\b(?:from|until) what amount\b"
    r"|\b(?:in|by|of) what\?$|^What (?:were|are)\b|\bwhat amount of the\b|(?<!^)\b(?-i:As of)\b"
    r"|\bwhich place's (?:arrival|death|birth|wife|husband|son|daughter|army|forces?|troops|career|life)\b"
    r"|\b(?:whose|['’]s) \d+ (?:years?|months?) ago\b|\b(?:for|of|from) \d+ (?:years?|months?) ago\b"
    r"|\b(?:in|by) (?:what year|(?:1\d|20)\d\d),? (?:in|by|on) (?:what (?:year|date)|(?:1\d|20)\d\d)\b"
    r"|\b(?:in|by) (?:1\d|20)\d\d,? (?:on (?:\d{1,2} [A-Z][a-z]+ \d|[A-Z][a-z]+ \d)"
    r"|\d+ (?:years?|months?) ago)"  # "by R. Nissen in 1948 on 17 April 1955"
    r"|\b\d+ (?:years?|months?) ago,? (?:on|in) (?:\d|[A-Z][a-z]+ \d)",  # "68 years ago on 17 April 1955"
    re.IGNORECASE,
)


def wh_in_clause(question: str) -> str | None:
    """A question word left inside a clause as its subject or object ("recalls that whom had", "such as
    whom", "Azerbaijan's who")."""
    match = _WH_IN_CLAUSE.search(question)
    return f"question word inside a clause: {match.group(0)!r}" if match else None


def garbled(question: str) -> str | None:
    """Words the rewriting left out of order or doubled: "what what", "since when", two years side by
    side ("in 1990, in 1991"), a dangling "in what?", "which place's death", "As of" inside a question."""
    match = _GARBLED.search(question)
    return f"garbled wording: {match.group(0)!r}" if match else None


_BAD_OPENING = re.compile(
    r"^(?:(?:Who|Whom|What|Which)\s*,|(?:What|Who|Whom) of\b|What amount of\b|What with\b"
    r"|(?:One|Two|Three|Other|Some) examples?\b)"
)
_CUT_ENDING = re.compile(r"\b(?:were|was|is|are|has|have|had|the|a|an|of|to|and|or|in)\s*\?$", re.IGNORECASE)


def bad_start(question: str) -> str | None:
    """A question that starts with a number or a lowercase word (a sentence cut in the middle), with a
    question word in apposition ("Who, the ambassador, ..."), "What of the ...", or "Two examples are"."""
    first = question.lstrip("\"'“‘(")[:1]
    if first.isdigit() or first.islower():
        return f"starts with {question.split()[0]!r}"
    opening = _BAD_OPENING.match(question)
    return f"starts with {opening.group(0)!r}" if opening else None


def cut_ending(question: str) -> str | None:
    """A question that ends on a verb, an article or a preposition: "... in what month and year were?"."""
    match = _CUT_ENDING.search(question)
    return f"ends with {match.group(0)!r}" if match else None


MAX_MULTI_HOP_WORDS = 35
_DESCRIBABLE = re.compile(
    r"^(?:Who|Which (?!year|date|month)\w+|What (?!year|date|month|amount|percentage)\w+)\b"
)


_IDENTIFYING = re.compile(
    r"\b(?:1\d|20)\d\d\b|\b\d+ (?:years?|months?|days?) ago\b|\b\d[\d,.]*\b|\b\d+(?:st|nd|rd|th)\b"
    r"|\b(?:first|only|last|largest|"
    r"highest|lowest|biggest|smallest|oldest|youngest|longest|tallest|most|least)\b"
    r"|\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b"
)
_INITIALLED = re.compile(r"\b[A-Z]\. (?:[A-Z]\. )*[A-Z][a-z]+")


def _names_a_person(text: str) -> bool:
    """An initialled name ("M. Chang") or a name led by a given name irbgen's lists know."""
    if _INITIALLED.search(text):
        return True
    names = re.findall(r"\b([A-Z][a-z]+)(?: [A-Z][a-z]+)+", text)
    return any(first.lower() in given_names() for first in names)


_SECOND_CLAUSE = re.compile(r"\band\b[^?]*?\b(?:he|she|they|it)\s+[a-z]+(?:ed|s)\b|, [a-z]+ing\b")
_ONE_OF_A_KIND = re.compile(r"'s capital(?: city)? is [A-Z]")  # a capital is one country's or state's
_SHARED_STATE = re.compile(r"\b(?:is|was|are|were) (?:classified|considered|regarded|rated|listed) as\b")


def second_clause(question: str) -> str | None:
    """A hop with a second clause of its own ("... and in November 2003, he signed ...", ", becoming an
    American citizen"): inside a multi-hop question it cannot be told from the description."""
    match = _SECOND_CLAUSE.search(question)
    return f"a second clause with its own subject: {match.group(0)!r}" if match else None


_RANK = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|only|sole|main|largest|highest|"
    r"lowest|biggest|smallest|oldest|youngest|longest|tallest|most|least|best|worst|earliest|greatest|"
    r"richest|poorest|fastest|busiest|deepest|number \d+"
    r"|\d+(?:st|nd|rd|th)(?! (?!(?:President|Prime|Governor|Chancellor|Secretary|Mayor|Premier|King|Queen|"
    r"Emperor|Pope|Speaker|Chairman|Chief|Vice)\b)(?-i:[A-Z])))\b"  # "16th President", not "13th Amendment"
    r"(?! (?:round|quarter|half|time|day|week|season|stage|leg|phase)\b)",  # "the first round" ranks nothing
    re.I,
)
_SHARED_RANK = re.compile(r"\b(?:among|one of) the (?:\w+ )?$", re.I)  # "among the highest": many are
_FIGURE = re.compile(r"[$£€¥]\s?\d|\d%|\d[\d,]*\.\d|\d{1,3}(?:,\d{3})+|\b(?!(?:1[5-9]|20)\d\d\b)\d{3,}\b")
_HEDGE = re.compile(
    r"\b(?:about|around|approximately|roughly|nearly|almost|some|over|under|more than|less than|fewer than|"
    r"at least|at most|up to)\s*[$£€¥]?\s*$",
    re.IGNORECASE,
)
_MONTH_NAMES = "January|February|March|April|May|June|July|August|September|October|November|December"
_FULL_DATE = re.compile(
    rf"\b\d{{1,2}} (?:{_MONTH_NAMES}) \d{{4}}\b|\b(?:{_MONTH_NAMES}) \d{{1,2}}, \d{{4}}\b"
)
_SPAN = re.compile(
    r"\b(?:from|between) (?:\w+ ){0,2}(?:1\d|20)\d\d (?:to|and|until) (?:\w+ ){0,2}(?:1\d|20)\d\d\b"
    r"|\b(?:1\d|20)\d\d ?[–-] ?(?:1\d|20)\d\d\b"
)
_NAME_LIST = re.compile(r"\b[A-Z][\w.&-]*(?: [A-Z][\w.&-]*)*, [A-Z][\w.&-]*(?: [A-Z][\w.&-]*)*,? and [A-Z]")


def person_nodes(triples: Iterable[Any]) -> list[str]:
    """The graph's Person nodes (heads and tails), in order."""
    return [
        node
        for triple in triples
        for node, kind in ((triple.head, triple.head_type), (triple.tail, triple.tail_type))
        if kind == "Person"
    ]


def exact_figure(text: str) -> bool:
    """`text` gives a figure exactly ("1.2 people per square mile", "$22,984"), not hedged ("about 2%")."""
    return any(_HEDGE.search(text[: match.start()]) is None for match in _FIGURE.finditer(text))


def identifies_one(text: str, people: Iterable[str] = (), answer: str = "") -> bool:
    """Whether what `text` says can fit one thing only: a rank (not "among the highest", not "the first
    round"), an exact figure (not "about 2% of GDP", which many share), a full date, a span of years
    ("from 1971 to 2001"), a list of three names, or a person of `people` other than `answer`. A year
    alone does not: many people "became a Foreign Member of the Royal Netherlands Academy in 1920"."""
    if any(_SHARED_RANK.search(text[: match.start()]) is None for match in _RANK.finditer(text)):
        return True
    if exact_figure(text):
        return True
    if any(pattern.search(text) for pattern in (_FULL_DATE, _SPAN, _NAME_LIST, _ONE_OF_A_KIND)):
        return True
    return any(normalize(person) != normalize(answer) and person in text for person in people)


def described_badly(question: str) -> str | None:
    """An inner hop that cannot be described inside the next one.

    Its answer must be its subject: "Which country has ..." becomes "the country that has ...", while
    "X visited which place in 2007" would become "the place that X visited in 2007", which the rules
    cannot write reliably. It must be one clause, short, and pick one thing out: a date, a number, a
    rank or a person ("the person who beat M. Chang"), not a state many things share ("the place that
    is classified as humid subtropical", "the country that maintains good relations with the EU").
    """
    if _DESCRIBABLE.match(question) is None:
        return f"the inner hop does not ask for its subject: {question[:60]!r}"
    second = second_clause(question)
    if second is not None:
        return second
    shared = _SHARED_STATE.search(question)
    if shared is not None:
        return f"the description names a class many things are in: {shared.group(0)!r}"
    picked = _IDENTIFYING.search(question) or _ONE_OF_A_KIND.search(question) or _names_a_person(question)
    if not picked:
        return f"the description names no date, number, rank or person to pick one out: {question[:60]!r}"
    return _over(question, MAX_DESCRIBED_WORDS, " for a hop described in the next")


def multi_hop_too_long(question: str) -> str | None:
    """A multi-hop question over MAX_MULTI_HOP_WORDS words, or with a second clause of its own."""
    return second_clause(question) or _over(question, MAX_MULTI_HOP_WORDS, " for a multi-hop question")


def unbalanced(question: str) -> str | None:
    """An opening bracket or quote without its closing one, or the reverse."""
    for opening, closing in _PAIRS:
        depth = 0
        for char in question:
            depth += (char == opening) - (char == closing)
            if depth < 0:
                return f"{closing!r} without {opening!r}"
        if depth:
            return f"{opening!r} without {closing!r}"
    if question.count('"') % 2:
        return 'an unclosed "'
    return None


def _inside_quotes_or_brackets(question: str) -> list[str]:
    """The quoted and bracketed passages of the question."""
    return re.findall(r'"[^"]*"|“[^”]*”|\([^()]*\)|(?<!\w)[\'‘][^\'‘’]+[\'’](?!\w)', question)


def too_nested(question: str) -> str | None:
    """More than MAX_CLAUSES clause words, or a clause or the asked-for slot inside quotes or brackets."""
    count = len(_CLAUSE_WORDS.findall(question))
    if count > MAX_CLAUSES:
        return f"{count} clause words (at most {MAX_CLAUSES})"
    for passage in _inside_quotes_or_brackets(question):
        if re.search(r"\b(?:what|which|who|whom|whose|when|how many|how much)\b", passage, re.IGNORECASE):
            return f"a question word inside {passage[:60]!r}"
    return None


def flag_emoji(question: str) -> str | None:
    """A flag emoji: a careful writer names the country."""
    return "a flag emoji" if _FLAG.search(question) else None


def relative_dates(question: str) -> str | None:
    """More than one relative date ("61 years ago"), or two side by side."""
    found = _RELATIVE_DATE.findall(question)
    return f"{len(found)} relative dates: {', '.join(found)}" if len(found) > 1 else None


def glued_number_words(question: str) -> str | None:
    """A number in words next to a symbol, a decimal, a time or a range ("fifty four%", "sixteen:51")."""
    match = _GLUED.search(question)
    return f"number words glued: {match.group(0)!r}" if match else None


# --- questions: the question word agrees with the answer ---------------------------------------------

_WH_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:who|whom|whose)\b", re.IGNORECASE), "person"),
    (re.compile(r"\bwhich (?:country|nation|state)\b", re.IGNORECASE), "place"),
    (re.compile(r"\b(?:which|what) (?:place|city|town|region|area)\b|\bwhere\b", re.IGNORECASE), "place"),
    (re.compile(r"\b(?:which|what) organi[sz]ation\b", re.IGNORECASE), "organization"),
    (re.compile(r"\bwhen\b|\b(?:what|which) (?:year|date|month|day|decade|century)\b", re.I), "time"),
    (re.compile(r"\bhow (?:many|much)\b|\bwhat (?:amount|number|percentage|share)\b", re.I), "amount"),
)
_KINDS_OF_LABEL = {
    "PERSON": {"person"},
    "GPE": {"place"},
    "LOC": {"place"},
    "FAC": {"place"},
    "ORG": {"organization"},
    "DATE": {"time"},
    "TIME": {"time"},
    "CARDINAL": {"amount"},
    "PERCENT": {"amount"},
    "MONEY": {"amount"},
    "QUANTITY": {"amount"},
}


def question_kinds(question: str, skip: Iterable[int] = ()) -> list[str]:
    """The answer kinds the question's wh-phrases ask for, in the order of the patterns; wh-words
    starting at a character offset in `skip` (relative and subordinating words) are left out."""
    skipped = set(skip)
    return [
        kind
        for pattern, kind in _WH_KINDS
        if any(match.start() not in skipped for match in pattern.finditer(question))
    ]


def clause_word_offsets(doc: Any) -> set[int]:
    """Character offsets of wh-words that open a relative or subordinate clause, not a question:
    "Pied-Noirs who fled", "Arizona, where he reached", "the person whose book"."""
    offsets = set()
    for token in doc:
        if token.tag_ not in ("WP", "WDT", "WRB", "WP$"):
            continue
        verb = token.head.head if token.tag_ == "WP$" else token.head
        if verb.dep_ in ("relcl", "advcl", "acl") and token.i < verb.i and token.dep_ != "det":
            offsets.add(token.idx)
    return offsets


def wh_mismatch(
    question: str, answer_label: str | None, *, nested: bool = False, doc: Any | None = None
) -> str | None:
    """A wh-phrase that asks for another kind of thing than spaCy's label of the answer says.

    A question with no specific wh-phrase ("what", "which river") always passes. With spaCy's parse
    (`doc`), relative and subordinating wh-words are not question words. Without it, `nested`
    questions carry relative clauses ("the person who"), so only their first wh-phrase is held.
    """
    skip = clause_word_offsets(doc) if doc is not None else set()
    asked = question_kinds(question, skip)
    if not asked:
        return None
    allowed = _KINDS_OF_LABEL.get(answer_label or "", set())
    if nested and doc is None:
        asked = asked[:1]
    wrong = [kind for kind in asked if kind not in allowed]
    if wrong and not (set(asked) & allowed and nested and doc is None):
        label = answer_label or "no entity label"
        return f"asks for a {wrong[0]} but the answer is {label}"
    return None


def question_failure(
    question: str,
    answer_label: str | None,
    doc: Any | None = None,
    *,
    nested: bool = False,
    answer: str = "",
    answer_type: str = "",
    keypoints: Sequence[str] = (),
    described: bool = False,
) -> tuple[str, str] | None:
    """(gate name, detail) of the first question gate that fails, or None; `doc` parses the question,
    `answer`, `answer_type` and `keypoints` are the hop's (the gates that need them are skipped without).
    A `described` question (an inner hop, written as a description inside the next one) needs no proper
    name: `described_badly` asks it for a date, number, rank or person instead."""
    checks: list[tuple[str, Callable[[], str | None]]] = [
        ("question_too_long", lambda: too_long(question)),
        ("question_bad_start", lambda: bad_start(question)),
        ("question_cut", lambda: cut_ending(question)),
        ("wh_in_clause", lambda: wh_in_clause(question)),
        ("question_garbled", lambda: garbled(question)),
        ("question_not_unique", lambda: wh_in_list(question)),
        ("question_unbalanced", lambda: broken_text(question)),
        ("question_too_nested", lambda: too_nested(question)),
        ("flag_emoji", lambda: flag_emoji(question)),
        ("relative_dates", lambda: relative_dates(question)),
        ("glued_number_words", lambda: glued_number_words(question)),
        ("wh_mismatch", lambda: wh_mismatch(question, answer_label, nested=nested, doc=doc)),
    ]
    if doc is not None:
        checks.append(("question_unresolved_reference", lambda: unresolved_reference(doc)))
        checks.append(("question_unresolved_reference", lambda: unplaced_institution(doc)))
        checks.append(("question_unresolved_reference", lambda: unplaced_office(doc)))
        checks.append(("question_unresolved_reference", lambda: compound_description(doc)))
        if not described:
            checks.append(("question_unanchored", lambda: unanchored(doc)))
        checks.append(("wh_in_clause", lambda: in_situ_what(doc)))
        checks.append(("wh_in_clause", lambda: wh_after_noun(doc)))
        checks.append(("question_not_unique", lambda: class_membership(doc)))
        checks.append(("question_not_unique", lambda: one_of_many_members(doc)))
        checks.append(("question_not_unique", lambda: part_of_many(doc)))
        checks.append(("question_not_unique", lambda: included_member(doc)))
        checks.append(("question_no_inversion", lambda: no_inversion(doc)))
        checks.append(("question_no_inversion", lambda: wh_adverb_left_in_place(doc)))
        checks.append(("question_two_sentences", lambda: two_sentences(doc)))
        checks.append(("question_garbled", lambda: participle_without_verb(doc)))
        checks.append(("question_not_self_contained", lambda: not_self_contained(doc)))
        checks.append(("question_many_answers", lambda: many_answers(doc)))
        checks.append(("question_many_answers", lambda: unspecified_group_subject(doc)))
        checks.append(("question_not_unique", lambda: person_by_common_deed(doc)))
        checks.append(("question_wrong_wh", lambda: wrong_question_word(doc, answer_label, answer_type)))
        checks.append(("question_wrong_wh", lambda: organization_by_kind(doc)))
        if answer:
            checks.append(("question_answer_in_name", lambda: answer_in_name(doc, answer, keypoints)))
            checks.append(("answer_leak", lambda: answer_by_its_people(question, answer, answer_type)))
        checks.append(("question_wh_outside_main_clause", lambda: wh_outside_main_clause(doc)))
        checks.append(("question_wh_outside_main_clause", lambda: wh_in_participle(doc)))
        checks.append(("question_wh_outside_main_clause", lambda: wh_on_a_name(doc)))
        checks.append(("question_not_unique", lambda: year_of_a_lasting_state(doc)))
        if answer:
            checks.append(
                ("question_garbled_wh", lambda: garbled_amount(doc, answer, answer_label, answer_type))
            )
            checks.append(
                ("question_not_unique", lambda: undated_figure(doc, answer, answer_label, answer_type))
            )
            checks.append(
                (
                    "question_wrong_wh",
                    lambda: person_word_for_thing(doc, answer, answer_type, answer_label, keypoints),
                )
            )
            checks.append(("question_wrong_wh", lambda: thing_word_for_person(doc, answer, answer_type)))
    for name, check in checks:
        detail = check()
        if detail is not None:
            return name, detail
    return None


def answer_by_its_people(question: str, answer: str, answer_type: str) -> str | None:
    """ "A. Einstein settled in which country, becoming an American citizen ...?" (the U.S.): a word for
    the answer place's people or things, or another name of it ("the United Kingdom" for "the UK"),
    gives the answer away."""
    if answer_type not in ("Country", "Location"):
        return None
    word = gives_country_away(answer, question)
    return None if word is None else f"{word!r} gives the answer {answer!r} away"


_SUBJECTS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
_SUBORDINATORS = frozenset("whilst while although though whereas because unless if".split())


def _main_clauses_joined(doc: Any) -> str | None:
    """Two main clauses joined by ", but", ", and", "; ...": the root has a coordinated verb with a
    subject of its own, after a comma or semicolon."""
    for sentence in doc.sents:
        root = sentence.root
        for verb in root.children:
            if verb.dep_ != "conj" or not (verb.tag_.startswith("VB") or verb.tag_ == "MD"):
                continue
            if not any(child.dep_ in _SUBJECTS for child in verb.children):
                continue
            between = doc[root.i + 1 : verb.i]
            joints = [t for t in between if t.dep_ == "cc" and t.head == root and t.i > 0]
            if any(doc[t.i - 1].text in (",", ";") for t in joints) or any(t.text == ";" for t in between):
                return f"two coordinated main clauses: {root.text} ... {verb.text}"
    return None


def in_situ_what(doc: Any) -> str | None:
    """A bare "what" left inside the sentence ("leased a satellite from what, called ..."): it reads
    as an echo of a statement, not a question. At the start, before a noun, or last, it is fine."""
    words = [token for token in doc if not token.is_punct]
    for position, token in enumerate(words):
        if token.lower_ != "what" or position == 0 or position == len(words) - 1:
            continue
        if token.dep_ == "det" or words[position + 1].tag_ in _NOUN_TAGS:
            continue  # "what year", "what amount"
        return f"'what' inside the sentence: {token.sent.text[:80]!r}"
    return None


def wh_after_noun(doc: Any) -> str | None:
    """A question word right after a common noun that is not a relative pronoun: the name it replaced
    stood in apposition ("by the Brazilian chemist whom in a mine"); "which chemist" would be right."""
    relative = clause_word_offsets(doc)
    for token in doc[1:]:
        previous = doc[token.i - 1]
        if previous.text == "," and token.i > 1 and doc[token.i - 2].tag_ in _NAME_TAGS:
            previous = doc[token.i - 2]  # "the former leader of Soviet Azerbaijan, whom 23 years ago"
        clause = token.idx in relative and any(t.tag_.startswith("VB") for t in doc[token.i + 1 :])
        asked = token.lower_ in ("who", "whom", "what") and not clause  # "..., whom in 1993?": no clause
        if asked and previous.tag_ in _NOUN_TAGS | _NAME_TAGS:
            return f"question word after a noun: {previous.text} {token.text}"
    return None


def wh_on_a_name(doc: Any) -> str | None:
    """ "P. Tuan of which country became the first Asian in space?", "Forces of whom held Kabul?": the
    question word in an of-phrase after a name, or "of whom" after any noun. English asks "Which
    country's P. Tuan" or "Whose forces"; "the population of which country" (a common noun led by "the")
    is fine."""
    for token in doc[2:]:
        of = doc[token.i - 1]
        if of.lower_ != "of" or token.lower_ not in ("which", "whom", "what"):
            continue
        before = doc[of.i - 1]
        if token.lower_ == "whom" and before.tag_ in _NOUN_TAGS | _NAME_TAGS:
            return f"'of whom' after a noun: {before.text} of whom"
        start = before.i
        while start > 0 and (
            doc[start - 1].tag_ in _NAME_TAGS
            or start > 1
            and doc[start - 1].lower_ == "of"
            and doc[start - 2].tag_ in _NAME_TAGS
        ):
            start -= 1  # "the Ministry of Health": the whole name
        lead = start - 1
        while lead > 0 and doc[lead].tag_ in ("JJ", "VBN"):
            lead -= 1  # "A new Supreme Court of which country"
        led = lead >= 0 and doc[lead].lower_ in ("the", "a", "an")
        office = before.lower_ in _STATE_OFFICES  # "future President of which country" asks well
        if before.tag_ in _NAME_TAGS and not led and not office and doc[start].ent_type_ in ("PERSON", ""):
            return f"question word in an of-phrase after the name {doc[start : before.i + 1].text!r}"
    return None


def wh_in_participle(doc: Any) -> str | None:
    """ "The decimal number system invented in which country replaced use of abacus in Western Europe?",
    "The Edmonton Clinic complex, completed in what year, provides ...": the question word sits in a
    participle phrase on a noun, a clause of its own, with more of the question after it. At the very end
    ("... the technology called Autonomatronics in what year?") a reader takes it with the main verb."""
    for word in question_words(doc):
        token = word
        while token.head.i != token.i:
            if token.dep_ == "acl" and token.tag_ in ("VBN", "VBG"):
                phrase = doc[token.i : token.right_edge.i + 1]
                if any(not t.is_punct for t in doc[token.right_edge.i + 1 :]):
                    return f"question word inside the participle phrase {phrase.text!r}"
                break
            token = token.head
    return None


_BE_OR_HAVE = frozenset("is are was were has have had".split())


_WH_PHRASE = r"\b(?:who|whom|what|which (?:place|country|organization))\b"
_WH_LISTED = re.compile(
    rf"{_WH_PHRASE}\s*,?\s+(?:and|or)\b(?! (?:when|where|how|what|who|which)\b)"
    rf"|\b(?:and|or)\s+{_WH_PHRASE}|[A-Z]\w*,\s+{_WH_PHRASE}\s*,",
    re.IGNORECASE,
)


def wh_in_list(question: str) -> str | None:
    """The question word is one item of a list ("for whom and, later, astronaut Russell Schweickart",
    "Paris, which place, Vienna"): the other items answer it as well."""
    match = _WH_LISTED.search(question)
    return f"the question word is one item of a list: {match.group(0)!r}" if match else None


def class_membership(doc: Any) -> str | None:
    """ "Who was an important American anarchist ...?", "Which country has a tropical climate?", "What
    is an association of clubs ...?": the asked role's partner names a class ("a", "an"), which many
    things belong to."""
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None or root.lower_ not in _BE_OR_HAVE:
        return None
    roles = [child for child in root.children if child.dep_ in ("nsubj", "nsubjpass", "attr", "dobj")]
    asked = [role for role in roles if any(word.lower_ in _WH_WORDS for word in (role, *role.children))]
    if not asked or asked[0].dep_ not in ("nsubj", "nsubjpass", "attr"):
        return None
    for role in roles:
        if role is not asked[0] and any(d.dep_ == "det" and d.lower_ in ("a", "an") for d in role.children):
            return f"asks for one member of a class: {root.text} {role.text!r}"
    return None


_INCLUDING = frozenset("include includes included comprise comprises comprised".split())


def included_member(doc: Any) -> str | None:
    """ "Festivals in Odanad include what?": the question word is what a whole includes, one of its
    members, which the others would answer as well."""
    for token in doc:
        if token.lower_ not in _INCLUDING or not token.tag_.startswith("VB"):
            continue
        for obj in (c for c in token.children if c.dep_ in ("dobj", "attr")):
            if obj.lower_ in _WH_WORDS or any(
                c.dep_ == "det" and c.lower_ in _WH_WORDS for c in obj.children
            ):
                return f"one member of what '{token.text}' lists: {doc[token.i : obj.i + 1].text!r}"
    return None


_STAYING = frozenset("is was are were remain remains remained become becomes became".split())


def part_of_many(doc: Any) -> str | None:
    """ "Which place remained part of the United Kingdom?": the asked subject is only said to be part of
    something, which many parts are; a rank of the part ("the largest part"), a date or any other word of
    the clause may pick one out."""
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None or root.lower_ not in _STAYING:
        return None
    subject = next((c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")), None)
    part = next(
        (c for c in root.children if c.lower_ == "part" and c.dep_ in ("attr", "acomp", "oprd")), None
    )
    if subject is None or part is None or not any(t.lower_ in _WH_WORDS for t in subject.subtree):
        return None
    others = [c for c in root.children if c.i not in (subject.i, part.i) and c.dep_ != "punct"]
    ranked = any(_rank_word(child) for child in part.children)  # "the largest part of ..."
    if others or ranked or any(c.dep_ != "prep" or c.lower_ != "of" for c in part.children):
        return None
    return f"many things are {doc[part.i : part.right_edge.i + 1].text!r}"


def _rank_word(token: Any) -> bool:
    """A superlative or "first", "last", "only", "sole": a word that picks one out."""
    return token.tag_ in ("JJS", "RBS") or token.lower_ in ("first", "last", "only", "sole")


_BECOME = frozenset("become became becomes becoming".split())
_MEMBER_NOUNS = frozenset("member citizen fellow resident".split())


def one_of_many_members(doc: Any) -> str | None:
    """ "Who became Foreign Member of the Royal Netherlands Academy ... 96 years ago?", "Who settled in the
    U.S., becoming an American citizen 76 years ago?": a person asked by what they became, a member or
    a citizen, that many others became too (a rank such as "the first" would pick one out); "Who ran as a
    candidate for the BC Green Party in the May 2009 election?": one of a party's candidates."""
    if not doc or doc[0].lower_ not in ("who", "whom"):
        return None
    for verb in (token for token in doc if token.lower_ in _BECOME):
        for role in (c for c in verb.children if c.dep_ in ("attr", "oprd", "acomp", "dobj")):
            ranked = any(_rank_word(c) for c in role.subtree)
            if role.lower_ in _MEMBER_NOUNS and not ranked:
                return f"many became a {role.lower_}: {doc[verb.i : role.i + 1].text!r}"
    for candidate in (token for token in doc if token.lower_ == "candidate"):
        article = next((c for c in candidate.children if c.dep_ == "det"), None)
        if article is None or article.lower_ in ("a", "an"):  # "ran as a candidate", not "the candidate"
            return f"a party has many candidates: {doc[candidate.left_edge.i : candidate.i + 1].text!r}"
    return None


_MAKING = frozenset(
    """write wrote written writes draft drafted drafts compose composed composes found founded founds
    co-founded cofounded establish established establishes invent invented invents design designed designs
    predict predicted predicts propose proposed proposes sign signed signs
    create created creates coin coined build built builds direct directed directs paint painted paints
    author authored sculpted pioneer pioneered pioneers devise devised formulate formulated patent patented
    discover discovered discovers""".split()
)
_MARRYING = frozenset("marry married marries wed wedded".split())
_OFFICES = frozenset(
    """president mayor governor chairman chairwoman chair chancellor ceo director head leader captain coach
    manager minister premier king queen emperor empress pope editor founder dean rector principal
    commander commissioner speaker""".split()
)
_AWARDING = frozenset("receive received receives win won wins award awarded".split())
_ABOUT = frozenset("more over around about nearly almost than least".split())


def _verb_chain(verb: Any) -> list[Any]:
    """The verb and the verbs coordinated with it or completing it ("became ... and was appointed")."""
    verbs = [verb]
    for child in verb.children:
        if child.dep_ in ("conj", "xcomp") and child.tag_.startswith("VB"):
            verbs.extend(_verb_chain(child))
    return verbs


def _ranked(doc: Any) -> str | None:
    """The first word of `doc` that ranks: a superlative, "first", "only", ... or an ordinal ("12th")."""
    for token in doc:
        if _rank_word(token) or re.fullmatch(r"\d+(st|nd|rd|th)", token.lower_):
            return token.text
    return None


def _single_office(verb: Any) -> Any | None:
    """An office one person holds at a time, said of the verb's subject: "was mayor of Dijon", "served as
    president of ...", "was appointed president of ..." (not "a U.S. Magistrate Judge")."""
    roles = [c for c in verb.children if c.dep_ in ("attr", "oprd", "dobj")]
    as_phrases = [c for c in verb.children if c.dep_ == "prep" and c.lower_ == "as"]
    roles += [g for c in as_phrases for g in c.children if g.dep_ == "pobj"]
    for role in roles:
        article = next((c.lower_ for c in role.children if c.dep_ == "det"), "")
        if role.lower_ in _OFFICES and article not in ("a", "an"):
            return role
    return None


def _dated_award(verb: Any) -> bool:
    """ "received the 1921 Nobel Prize in Physics": an award of one year, named with "the"."""
    if verb.lower_ not in _AWARDING:
        return False
    for role in (c for c in verb.children if c.dep_ in ("dobj", "nsubjpass")):
        article = next((c.lower_ for c in role.children if c.dep_ == "det"), "")
        year = any(re.fullmatch(r"1\d{3}|20\d{2}", w.text) for w in role.subtree)
        if article == "the" and year:
            return True
    return False


def _exact_amount(doc: Any) -> bool:
    """A money figure given exactly ("a $7 million endorsement contract"), not "more than $100,000"."""
    for token in doc:
        if token.tag_ == "$" and token.i + 1 < len(doc) and doc[token.i + 1].tag_ == "CD":
            before = {w.lower_ for w in doc[max(0, token.i - 2) : token.i]}
            if not before & _ABOUT:
                return True
    return False


def what_picks_the_person(doc: Any, verb: Any) -> str | None:
    """What in a "Who ...?" question can fit one person only, or None: a rank ("the first", "the 12th",
    a superlative), words quoted, a work made ("wrote", "founded", "designed"), a marriage, an office held
    alone ("mayor of Dijon"), an award of a given year, a birth on a given day, or an exact sum."""
    rank = _ranked(doc)
    if rank is not None:
        return f"rank {rank!r}"
    if sum(1 for token in doc if token.text in ('"', "\u201c", "\u201d")) >= 2:
        return "a quotation"
    if any(token.lower_ in _MARRYING for token in doc):  # "... Irma Raush, whom he married 59 years ago"
        return "a marriage"
    for each in _verb_chain(verb):
        if each.lower_ in _MAKING:
            return f"a work made: {each.text!r}"
        office = _single_office(each)
        if office is not None:
            return f"an office: {office.text!r}"
        if _dated_award(each):
            return "an award of one year"
    if any(token.lower_ == "born" for token in doc) and _FULL_DATE.search(doc.text):
        return "a birth on a given day"
    return "an exact sum" if _exact_amount(doc) else None


def person_by_common_deed(doc: Any) -> str | None:
    """ "Who was born in Ulm, in the Kingdom of Württemberg in the German Empire 137 years ago?", "Who
    settled in the U.S., becoming an American citizen 76 years ago?": a person asked by something many
    people did (were born somewhere, settled, played for a team, sat on a board, were sponsored by a
    firm). Such a "Who" question needs something that fits one person (`what_picks_the_person`)."""
    words = question_words(doc)
    if not words or words[0].lower_ != "who" or words[0].dep_ not in ("nsubj", "nsubjpass"):
        return None
    verb = words[0].head
    if what_picks_the_person(doc, verb) is not None:
        return None
    return f"a person asked by what many people do: {doc[words[0].i : min(verb.i + 4, len(doc))].text!r}"


def unanchored(doc: Any) -> str | None:
    """No name in the question to pin its answer down ("Who saw that the goal of education ...?")."""
    wh = {"Who", "Whom", "Whose", "What", "Which", "When", "Where", "How"}
    for token in doc:
        if token.text in wh:
            continue
        if token.tag_ in _NAME_TAGS or (token.tag_ == "JJ" and token.text[:1].isupper() and token.i > 0):
            return None
        if token.tag_ == "JJ" and token.i == 0 and token.text[:1].isupper() and token.ent_type_ == "":
            if token.text.endswith(("an", "ese", "ish", "ic", "i")):  # a nationality: "Korean anarchists"
                return None
    return "no proper name besides the question word"


_SOURCE_VERBS = frozenset(
    """estimate estimates estimated report reports reported rank ranks ranked classify classifies classified
    rate rates rated list lists listed name names named designate designates designated cite cites
    cited""".split()
)


_SOURCE_PARTICIPLES = "|".join(sorted(word for word in _SOURCE_VERBS if word.endswith("ed")))
_PASSIVE_SOURCE = re.compile(
    rf"\b(?:is|are|was|were|been|being) (?:{_SOURCE_PARTICIPLES})\b"
    r"[^?,;]*\b(?:by|under) (?:which|what|whom)\b"
)


def answer_is_a_source(doc: Any) -> str | None:
    """The question asks who estimated, reported, ranked, classified or named something: "Which organization
    estimates that the population of the state whose capital is Juneau was 738,432 ...?", "... is classified
    as an upper middle income country by which organization?". The source (a census bureau, the World
    Bank) does the same for every state or country, so the last hop of a chain is answered without its
    bridge."""
    for token in question_words(doc):
        top = wh_phrase_top(token)
        verb = top.head if top.dep_ != "ROOT" else top
        if verb.lower_ not in _SOURCE_VERBS:
            continue
        if top.dep_ in ("nsubj", "agent") or (top.dep_ == "prep" and top.lower_ == "by"):
            return f"the answer is who {verb.lower_} it, for any subject: {doc[top.i : verb.i + 1].text!r}"
    passive = _PASSIVE_SOURCE.search(doc.text)  # the parser often hangs "by which ..." on a noun
    return f"the answer is who did it, for any subject: {passive.group(0)!r}" if passive else None


def false_premise_lost(question: str, replacement: str) -> str | None:
    """A false-premise question that no longer carries its false detail."""
    if re.search(rf"(?<!\w){re.escape(replacement)}(?!\w)", question, re.IGNORECASE):
        return None
    return f"the false detail {replacement!r} is not in the question"


# --- questions: form, read from the parse of the question -------------------------------------------

_WH_TAGS = frozenset(("WP", "WDT", "WRB", "WP$"))


def question_words(doc: Any) -> list[Any]:
    """The tokens that ask (who, which, what, when, how), not those that open a relative clause."""
    relative = clause_word_offsets(doc)
    return [token for token in doc if token.tag_ in _WH_TAGS and token.idx not in relative]


def _is_verb(token: Any) -> bool:
    return token.tag_.startswith("VB") or token.tag_ == "MD"


def wh_phrase_top(token: Any) -> Any:
    """The word that attaches a question word's phrase to its verb: "Since" in "Since what year ...",
    "debt" in "Which country's debt ..."; a verb used as a preposition ("According to") is climbed."""
    top = token
    while top.dep_ != "ROOT" and not (_is_verb(top.head) and top.head.dep_ not in ("prep", "pcomp")):
        top = top.head
    return top


def no_inversion(doc: Any) -> str | None:
    """A wh-phrase moved to the front that is not the subject, with the subject still before every
    auxiliary and the verb: "Since what year each Crown dependency has had ...?" ("has each ... had")."""
    first = next((token for token in doc if not token.is_punct), None)
    for token in question_words(doc):
        top = wh_phrase_top(token)
        if top.left_edge != first or top.dep_ in _SUBJECTS or top.dep_ == "ROOT":
            continue
        verb = top.head
        subject = next((c for c in verb.children if c.dep_ in _SUBJECTS and c.i > top.i), None)
        if subject is None or token.head == subject or subject.i == token.i + 1:
            continue  # "In which town is ...": a parse that makes the wh-phrase's own noun the subject
        auxiliaries = [c for c in verb.children if c.dep_ in ("aux", "auxpass")] + [verb]
        if all(word.i > subject.i for word in auxiliaries):
            fronted = doc[top.left_edge.i : top.right_edge.i + 1].text
            return f"{fronted!r} comes first but {subject.text!r} still comes before {verb.text!r}"
    return None


def wh_adverb_left_in_place(doc: Any) -> str | None:
    """ "When", "where" or "how" left at the end of a statement ("Many Russians and Armenians left
    Azerbaijan when?"): an echo of a sentence, not a question a reader would ask."""
    words = [token for token in doc if not token.is_punct]
    last = words[-1] if words else None
    if last is not None and last.i > words[0].i and last.tag_ == "WRB" and last in question_words(doc):
        return f"{last.text!r} left at the end instead of asked first"
    return None


_UNSPECIFIED = frozenset("many some several few various numerous".split())


def unspecified_group_subject(doc: Any) -> str | None:
    """The main clause's subject is an unspecified part of a group ("Many Russians and Armenians left
    which country ...?", "Some citizens of Vlorë had business associates in which place?") and the
    question word is outside it: what some of a group did fits many answers."""
    asking = {token.i for token in question_words(doc)}
    for root in (token for token in doc if token.dep_ == "ROOT"):
        for subject in (c for c in root.children if c.dep_ in ("nsubj", "nsubjpass")):
            if asking & {t.i for t in subject.subtree}:
                continue
            vague = [c for c in subject.children if c.dep_ in ("det", "amod") and c.lower_ in _UNSPECIFIED]
            if vague or subject.lower_ in _UNSPECIFIED:
                phrase = doc[subject.left_edge.i : subject.i + 1].text
                return f"the subject {phrase!r} is an unspecified part of a group"
    return None


def _clause_of_its_own(tokens: Any) -> bool:
    """A verb among `tokens` with a subject among them: a clause that could stand as a sentence."""
    inside = {token.i for token in tokens}
    return any(
        _is_verb(token) and any(c.dep_ in _SUBJECTS and c.i in inside for c in token.children)
        for token in tokens
    )


def two_sentences(doc: Any) -> str | None:
    """Two sentences glued into one question: the parse splits it, or a colon or semicolon is followed by
    a clause of its own ("... coast: the Albanian side was completed 6 years ago?")."""
    sentences = list(doc.sents)
    if len(sentences) > 1 and sum(_clause_of_its_own(s) for s in sentences) > 1:
        return f"{len(sentences)} sentences: {sentences[1].text[:60]!r}"
    for token in doc:
        if token.text in (":", ";") and 0 < token.i < len(doc) - 1:
            before, after = doc[: token.i], doc[token.i + 1 :]
            if _clause_of_its_own(before) and _clause_of_its_own(after):
                return f"two clauses joined by {token.text!r}: {after.text[:60]!r}"
    semicolon = next((t for t in doc if t.text == ";" and not _in_brackets(doc, t.i)), None)
    if semicolon is not None:  # "... $28,924 in what year; among the highest in the Caribbean ...?"
        return f"a fragment glued on by ';': {doc[semicolon.i + 1 :].text[:60]!r}"
    return _clause_glued_by_and(doc)


def _in_brackets(doc: Any, index: int) -> bool:
    """Token `index` sits inside round brackets or double quotes."""
    before = doc[:index].text
    return before.count("(") > before.count(")") or (before.count('"') + before.count("“")) % 2 == 1


def participle_without_verb(doc: Any) -> str | None:
    """The question's only verb is a passive participle with no auxiliary: "In May and June 1914 the
    International Gendarmerie joined by I. Boletini and his men, mostly from which place?" says nothing."""
    for sentence in doc.sents:
        root = sentence.root
        auxiliary = any(c.dep_ in ("aux", "auxpass") for c in root.children)
        agent = any(c.dep_ == "agent" for c in root.children)
        has_object = any(c.dep_ in ("dobj", "attr", "ccomp", "xcomp") for c in root.children)
        if root.tag_ == "VBN" and agent and not auxiliary and not has_object:
            return f"{root.text!r} by ... has no auxiliary: no finite verb"
    return None


_JOINERS = frozenset(("and", "but", "or"))
_CLAUSE_PRONOUNS = frozenset("he she they it we".split())


def _clause_glued_by_and(doc: Any) -> str | None:
    """A second clause with a subject of its own after "and" or "but", opened by an adverbial and a
    comma ("... in 1999 and in November 2003, he signed ...") or led by a pronoun ("and he signed"):
    the parse attaches its verb anywhere, so the words between "and" and the subject are read."""
    for subject in doc:
        if subject.dep_ not in ("nsubj", "nsubjpass") or subject.lower_ in _WH_WORDS:
            continue
        verb = subject.head
        if verb.dep_ not in ("conj", "ROOT") or not _is_verb(verb):
            continue
        start = subject.left_edge.i
        joiner = next((t for t in reversed(doc[:start]) if t.lower_ in _JOINERS and t.dep_ == "cc"), None)
        if joiner is None or not any(_is_verb(t) for t in doc[: joiner.i]):
            continue
        between = doc[joiner.i + 1 : start]
        adverbial = len(between) > 1 and between[-1].text == "," and between[0].tag_ in ("IN", "RB")
        pronoun = not len(between) and subject.lower_ in _CLAUSE_PRONOUNS
        if adverbial or pronoun:
            return f"a second clause glued with {joiner.text!r}: {doc[joiner.i : verb.i + 1].text!r}"
    return None


_ANAPHORIC_MODIFIERS = frozenset("remaining aforementioned said".split())  # "the remaining stores"
_ANAPHORIC = _ANAPHORIC_MODIFIERS | {"latter", "former"}  # "the latter", not "the former leader"
_ROLES = frozenset(("nsubj", "nsubjpass", "dobj", "pobj", "attr"))
_ANAPHORIC_ADVERBS = frozenset(("also", "then", "similarly", "likewise"))  # "similarly uses the term"
_COUNT_DETERMINERS = frozenset(("the", "all", "both"))


def _counted_description(token: Any) -> bool:
    """ "the three films", "all three films", "both countries": a count of things named elsewhere, with
    nothing that says which (no name, adjective, of-phrase or clause)."""
    if token.tag_ != "NNS" or not (token.is_lower and token.is_alpha):
        return False
    children = list(token.children)
    determiners = [c for c in children if c.dep_ in ("det", "predet") and c.lower_ in _COUNT_DETERMINERS]
    counted = any(c.dep_ == "nummod" and c.i < token.i for c in children)
    if not determiners or not (counted or any(c.lower_ == "both" for c in determiners)):
        return False
    loose = ("det", "predet", "nummod", "punct")
    if any(c.dep_ not in loose and not _vague_modifier(c) for c in children):
        return False
    earlier = {_nounnormalize(t) for t in token.doc[: token.left_edge.i] if t.tag_ in _NOUN_TAGS}
    return _nounnormalize(token) not in earlier


def not_self_contained(doc: Any) -> str | None:
    """Words that lean on a text the reader does not have: "also", "then", "similarly" or "likewise" on
    a verb, "the remaining stores", "the latter", "the three films" (which?). Pronouns and "the
    company" are unresolved_reference's."""
    for token in doc:
        if token.lower_ in _ANAPHORIC_ADVERBS and token.dep_ == "advmod" and _is_verb(token.head):
            if any(verb.dep_ == "conj" for verb in (token.head, *token.head.ancestors)):
                continue  # "... exist and there are also ...": the first clause is the one meant
            if token.lower_ == "also" and token.i > 0 and doc[token.i - 1].lower_ == "but":
                continue  # "not only ... but also"
            return f"{token.text!r} refers to something said before"
        pointing = token.dep_ == "amod" if token.lower_ in _ANAPHORIC_MODIFIERS else token.dep_ in _ROLES
        if token.lower_ in _ANAPHORIC and pointing:
            if any(c.lower_ == "the" for c in (*token.children, *token.head.children)):
                return f"'the {token.text}' refers to something said before"
        if _counted_description(token):
            phrase = doc[token.left_edge.i : token.i + 1].text
            return f"{phrase!r}: which ones is not said"
    return None


def answer_in_name(doc: Any, answer: str, keypoints: Sequence[str]) -> str | None:
    """The question word replaces the end of a longer name: "the Arts Club of which place" where the
    keypoint says "the Arts Club of Chicago" (the answer is a piece of the club's name). A title ("the
    Prime Minister of which country") is no name of its own and passes."""
    for token in question_words(doc):
        start = token.i
        if start < 2 or doc[start - 1].lower_ != "of" or re.search(r"\d", answer):
            continue
        run = start - 1
        while run > 0 and doc[run - 1].tag_ in _NAME_TAGS:
            run -= 1
        name = doc[run : start - 1].text
        if not name or name_type(name) not in ("Organization", "Location"):
            continue
        written = re.compile(
            rf"(?<!\w){re.escape(name)} {re.escape(doc[start - 1].text)} {re.escape(answer)}(?!\w)"
        )
        if any(written.search(text) for text in keypoints):
            return f"{answer!r} is the end of the name {name} {doc[start - 1].text} {answer}"
    return None


_PLURAL_NAMES = frozenset("olympics games means series species headquarters".split())
_OPEN_LISTS = frozenset(("including", "like", "among", "amongst", "besides"))
_PARTS = frozenset("one some many several most all each any either both none".split())
_PARTNERS = frozenset(("attr", "dobj", "oprd", "nsubj", "nsubjpass"))
_OPEN_ENDS = re.compile(r"\b(?:among(?:st)? others|and (?:many )?others|etc)\b", re.IGNORECASE)


def many_answers(doc: Any) -> str | None:
    """A question that many answers fit: a plural question word ("which companies"), the question word
    inside "including", "such as" or "one of", or a list left open ("among others")."""
    for token in question_words(doc):
        noun = token.head if token.dep_ == "det" else None
        if noun is not None and noun.tag_ in ("NNS", "NNPS") and noun.lower_ not in _PLURAL_NAMES:
            return f"a plural question word: {token.text} {noun.text}"
        phrase = token.head if token.dep_ in ("det", "poss") else token
        prep = phrase.head if phrase.dep_ in ("pobj", "pcomp") else None
        if prep is not None and prep.lower_ in _OPEN_LISTS:
            return f"the question word is one of a list: {prep.text} {token.text}"
        if prep is not None and prep.lower_ == "as" and prep.i > 0 and doc[prep.i - 1].lower_ == "such":
            return f"the question word is one of a list: such as {token.text}"
        if prep is not None and prep.lower_ == "of" and prep.head.lower_ in _PARTS:
            return f"the question word is inside '{prep.head.text} of'"
        top = wh_phrase_top(token)
        if top.dep_ in _SUBJECTS or top.dep_ == "attr":
            verbs = [top.head, *(c for c in top.head.subtree if c.dep_ == "xcomp")]  # "considered to be"
            roles = [c for verb in verbs for c in verb.children if c is not top and c.dep_ in _PARTNERS]
            if any(c.lower_ == "one" and any(g.lower_ == "of" for g in c.children) for c in roles):
                return f"asks for one of many: {top.head.text} ... one of"
    match = _OPEN_ENDS.search(doc.text)
    return f"the list is left open: {match.group(0)!r}" if match else None


_PERSON_WORDS = frozenset(("who", "whom", "whose"))


def wrong_question_word(doc: Any, answer_label: str | None, answer_type: str = "") -> str | None:
    """The question word does not fit the answer's type: a bare "what" for a person or a country ("What
    once demanded ...?"), or as the subject of a verb for a name spaCy calls an organization, which is
    as often a person or a town ("What captured the island of Ischia ...?" for Hayreddin); "who" for
    anything but a person ("Who will become a part of ...?" for a company). `answer_type` is the graph's
    type of the answer, `answer_label` spaCy's label."""
    person = answer_type == "Person" or answer_label == "PERSON"
    for token in question_words(doc):
        if token.lower_ in _PERSON_WORDS and not person:
            what = answer_label or answer_type or "not a person"
            return f"{token.text!r} for an answer that is {what}"
        bare = token.lower_ == "what" and token.dep_ != "det"
        organization_subject = answer_label == "ORG" and token.dep_ in ("nsubj", "nsubjpass")
        if bare and (person or answer_label in ("GPE", "NORP") or organization_subject):
            return f"a bare {token.text!r} for an answer that is {answer_label or answer_type}"
    return None


_ORGANIZATION_NOUNS = frozenset(
    """organization organisation company corporation firm agency institution institute university college
    school academy church party club team band group association society union council committee
    commission board bank airline network newspaper magazine publisher label foundation charity trust
    federation league army navy force government ministry department body authority court parliament
    assembly museum hospital library broadcaster channel station studio manufacturer retailer chain
    operator carrier producer developer maker provider supplier employer sponsor owner brand business
    enterprise conglomerate subsidiary venture cooperative order movement denomination""".split()
)
_COPULAS = frozenset("is are was were remains remained became becomes".split())


def organization_by_kind(doc: Any) -> str | None:
    """ "Which organization is Toronto's most popular tourist attraction ...?": the question asks what an
    organization is, and the noun it is said to be names another kind of thing (an attraction, a
    building, a prize), so "organization" is the wrong question word."""
    for token in question_words(doc):
        noun = token.head
        if token.dep_ != "det" or noun.lower_ not in ("organization", "organisation"):
            continue
        verb = noun.head
        if noun.dep_ not in ("nsubj", "nsubjpass") or verb.lower_ not in _COPULAS:
            continue
        kind = next((c for c in verb.children if c.dep_ == "attr"), None)
        if kind is not None and kind.tag_ in _NOUN_TAGS and kind.lower_ not in _ORGANIZATION_NOUNS:
            return f"'{token.text} {noun.text}' for what the question calls '{kind.lower_}'"
    return None


_EXCLUDING = frozenset(("outside", "except", "excluding", "besides", "beyond", "without", "apart"))
_NEGATIONS = frozenset(("not", "n't", "never", "no", "nor"))
LOWER_BOUND = re.compile(  # the words before a lower bound, in lower case (also irb/premises.py)
    r"\b(?:at least|more than|over|above|exceeding|exceeded|upwards of|in excess of|greater than)\s*\W?$"
)
UPPER_BOUND = re.compile(r"\b(?:at most|less than|fewer than|under|below|up to|no more than)\s*\W?$")
_RANGE = re.compile(r"(?P<low>\d[\d,.]*)\s*(?:and|to|[-–])\s*(?P<high>\d[\d,.]*)")


def _numbers(text: str) -> list[float]:
    return [float(n.replace(",", "")) for n in re.findall(r"\d+(?:,\d{3})*(?:\.\d+)?", text)]


def _still_true_value(node: str, replacement: str, before: str) -> str | None:
    """A perturbed value that a bound or a range keeps true: "at least 10" for at least 20, "between
    22,832 and 165,000" for between 90,000 and 165,000."""
    old, new = _numbers(node), _numbers(replacement)
    if not old or not new:
        return None
    old_range, new_range = _RANGE.search(node), _RANGE.search(replacement)
    if old_range is not None and new_range is not None:
        low, high = _numbers(old_range.group(0))[:2]
        new_low, new_high = _numbers(new_range.group(0))[:2]
        if new_low <= low and high <= new_high:
            return f"the range {replacement!r} holds {node!r}"
        return None
    digit = re.search(r"\d", replacement)
    lead = f"{before} {replacement[: digit.start() if digit else 0]}".lower().strip()
    if LOWER_BOUND.search(lead) and new[0] < old[0]:
        return f"a lower bound moved down stays true: {replacement!r} for {node!r}"
    if UPPER_BOUND.search(lead) and new[0] > old[0]:
        return f"an upper bound moved up stays true: {replacement!r} for {node!r}"
    return None


def _replaced_tokens(doc: Any, replacement: str) -> list[Any]:
    """The tokens of the first place `replacement` is written in `doc` (whole words), or []."""
    found = re.search(rf"(?<!\w){re.escape(replacement)}(?!\w)", doc.text, re.IGNORECASE)
    if found is None:
        return []
    return [t for t in doc if found.start() <= t.idx < found.end()]


def false_premise_still_true(doc: Any, node: str, replacement: str, rule: str = "") -> str | None:
    """A false premise whose change leaves the claim true: the changed node sits after "outside",
    "except", "other than" or under a negation ("based outside Singapore" stays true for most other
    countries), or a bound or range still holds the true value ("at least 10%" for at least 20%).
    `doc` parses the question that carries `replacement` in place of `node`."""
    tokens = _replaced_tokens(doc, replacement)
    if not tokens:
        return None
    for ancestor in (tokens[0], *tokens[0].ancestors):
        if ancestor.lower_ in _EXCLUDING and ancestor.dep_ in ("prep", "advmod", "mark"):
            return f"{replacement!r} sits after {ancestor.text!r}: other values keep the claim true"
        if ancestor.lower_ == "than" and ancestor.i > 0 and doc[ancestor.i - 1].lower_ in ("other", "rather"):
            return f"{replacement!r} sits after 'other than': other values keep the claim true"
        negation = next(
            (c for c in ancestor.children if c.lower_ in _NEGATIONS and c.dep_ in ("neg", "det")), None
        )
        if negation is not None:
            return f"{replacement!r} sits under {negation.text!r}: other values keep the claim true"
    if rule == "perturbed_value":
        return _still_true_value(node, replacement, doc.text[: tokens[0].idx][-20:])
    return None


# --- answers and bridges ------------------------------------------------------------------------------


def entity_label(node: str, entities: Iterable[Entity]) -> str | None:
    """spaCy's label of the entity spelled like `node` (case-insensitive, no leading "the"), or None."""
    key = normalize(node)
    for entity in entities:
        if normalize(entity.text) == key:
            return entity.label
    return None


def agreed_type(
    node: str, node_type: str, label: str | None, page_type: str | None = None, *, subject: bool = False
) -> str | None:
    """The type to ask a node with, or None when the question word would be a guess.

    None when the graph's type and spaCy's label disagree. "Other" (asked with "what") without a label,
    and when the small model's label has no support: an organization needs its page's categories or
    an organization word in its name ("Bank", "University"); a place needs its page, a place word
    ("River", "Province") or a known place name (irb/places.py), or, for the `subject` of its sentence,
    a definite name ("The United States Census Bureau estimates ...": "Which organization estimates
    ...?"). Otherwise the label's type.
    """
    if label is None:
        return "Other"
    from_label = label_type(label, node)
    if node_type not in (from_label, "Other"):
        return None
    named = name_type(node)
    if named is not None and named != from_label and page_type != from_label:
        return None  # "Spacecraft Films" labelled PERSON: its own words say otherwise
    if from_label == "Person" and page_type != "Person" and known_place(node):
        return None  # "Azerbaijan" labelled PERSON: "Who was cited as one of the top reformers"
    if from_label == "Person" and page_type != "Person" and _common_words(node):
        return None  # "Lonely Planet", "Space Shuttle Challenger" labelled PERSON
    if from_label == "Location" and page_type not in ("Location", "Country") and _given_name_only(node):
        return None  # "Washington" the general labelled GPE: "Which place escaped across the Delaware"
    if from_label == "Person" and page_type != "Person" and _club_like(node):
        return None  # "Neftchi Baku": "Who became the first Azerbaijani team ..."
    if from_label == "Person" and page_type != "Person" and _given_name_only(node):
        return None  # "Laura" for Laura Huxley: the answer is not the whole name
    if from_label == "Person" and page_type != "Person" and re.search(r"\d", node):
        return "Other"  # "Apollo 8" labelled PERSON
    supported = page_type == from_label or named == from_label
    if from_label == "Organization" and not supported:
        return "Organization" if subject and _definite_name(node) else "Other"
    if from_label == "Location" and not (supported or known_place(node)):
        return "Other"
    return from_label


def _definite_name(name: str) -> bool:
    """ "the" and at least two capitalised words: "the United States Census Bureau", "The Angolan
    Army". A person's name never takes "the"; a bare "Hayreddin" or "Huntsville" labelled ORG may be
    either."""
    words = name.split()
    return len(words) >= 3 and words[0].lower() == "the" and sum(w[:1].isupper() for w in words[1:]) >= 2


def _club_like(name: str) -> bool:
    """A name whose last word is a known place and whose first is no given name ("Neftchi Baku")."""
    words = name.split()
    return len(words) > 1 and known_place(words[-1]) and words[0].lower() not in given_names()


def _given_name_only(name: str) -> bool:
    """A one-word name that irbgen's lists know as a given name and not as a surname ("Laura",
    "Washington")."""
    word = name.strip().lower()
    return " " not in word and word in given_names() and word not in surnames_known()


def _common_words(name: str) -> bool:
    """A name of two or more words that are all English words ("Lonely Planet"): not a person's."""
    words = re.findall(r"[^\W\d_]+", name.lower())
    if len(words) < 2 or words[0] in given_names():
        return False  # "George Washington"
    return all(word in english_words() for word in words)


def answer_fragment(answer: str, keypoints: Sequence[str], entities: Iterable[Entity]) -> str | None:
    """The answer is not a whole name: unbalanced, part of a longer entity, or glued to a capitalised word."""
    if unbalanced(answer) is not None:
        return f"{answer!r} is cut inside brackets or quotes"
    key = normalize(answer)
    for entity in entities:
        other = normalize(entity.text)
        if other != key and re.search(rf"(?<!\w){re.escape(key)}(?!\w)", other):
            return f"{answer!r} is part of the entity {entity.text!r}"
    pattern = re.compile(rf"(?<![\w.])({re.escape(answer.strip())})(?!\w)", re.IGNORECASE)
    for text in keypoints:
        for match in pattern.finditer(text):
            before, after = text[: match.start()], text[match.end() :]
            previous = re.search(r"(?:^|\s)(\S+) $", before)
            name_before = previous is not None and previous.start(1) > 0 and _is_name_word(previous.group(1))
            name_after = re.match(r" (\S+)", after) is not None and _is_name_word(after.split()[0])
            figure = answer.strip()[:1].isdigit()
            if figure and re.search(r"\b(?:in|on|by|since|during|from|until|after|before) $", before, re.I):
                name_after = False  # "In 2011 Azerbaijan saw ...": a fronted date, then the subject
            name_after = name_after or re.match(r", (?:[A-Z]\.){2}", after) is not None  # "Washington, D.C."
            name_after = (  # "America the Beautiful"; not "70% of Portuguese Angola's exports"
                name_after or not figure and re.match(r" (?:the|of) [A-Z]", after) is not None
            )
            if not figure:  # "On 8 December 2012, Baku was ...": a date is no place
                place_after = re.match(r", ([A-Z][\w.]*(?: [A-Z][\w.]*)*)", after)
                name_after = name_after or (place_after is not None and known_place(place_after.group(1)))
                place_before = re.search(r"([A-Z][\w.]*(?: [A-Z][\w.]*)*), $", before)
                name_before = name_before or (place_before is not None and known_place(place_before.group(1)))
            open_quote = re.search(r'["“][^"”]*$', before) is not None and re.match(r'[^"”]*["”]', after)
            quoted = open_quote and (before[-1:] not in '"“' or after[:1] not in '"”')  # more words inside
            if before.endswith("-") or name_before or name_after or quoted:
                return f"{answer!r} is part of a longer name in {text[:80]!r}"
    return None


def _is_name_word(word: str) -> bool:
    """A capitalised word that could continue a name ("Rudolph", "Jr", "I" of "Darius I")."""
    return bool(re.fullmatch(r"[A-Z][a-z][\w'’-]*|[A-Z]\.|(?:I|II|III|IV|V|VI|VII|VIII|IX|X)[,.]?", word))


def answer_vague(answer: str, label: str | None) -> str | None:
    """An answer a reader cannot check: "the Foundation", "the last decade", "the 20th century"."""
    words = answer.split()
    decade = re.fullmatch(r"(?:the\s+)?\d{3,4}s", answer.strip(), re.I) is not None
    if len(words) == 2 and words[0].lower() == "the" and not words[1].isupper() and not decade:
        return f"{answer!r} names no one thing"
    if label in ("DATE", "TIME") and not decade and parse_date(answer) is None:
        return f"{answer!r} is not a year, a month or a date"
    return None


def answer_explained(answer: str, keypoints: Sequence[str]) -> str | None:
    """The keypoint explains the answer in brackets right after it ("the IMF (International ...)")."""
    pattern = re.compile(rf"(?<!\w){re.escape(answer.strip())}\s*\(", re.IGNORECASE)
    for text in keypoints:
        if pattern.search(text):
            return f"{answer!r} is followed by a bracket that would give it away"
    return None


def answer_among_values(answer: str, label: str | None, entities: Iterable[Entity]) -> str | None:
    """A value answer (a number, share, sum or measure) beside another value of its kind in the keypoint."""
    if label not in VALUE_LABELS:
        return None
    key = normalize(answer)
    others = sorted({e.text for e in entities if e.label in VALUE_LABELS and normalize(e.text) != key})
    return f"{answer!r} sits among other values: {', '.join(others[:3])}" if others else None


def bridge_not_entity(label: str | None, answer_type: str = "") -> str | None:
    """A bridge between hops must be a named entity of a known type, never a year, a number, a common
    noun or a "thing" (the type a description of it would need: "the thing that ...")."""
    if label not in BRIDGE_LABELS:
        return f"the bridge is {label or 'not a named entity'}"
    if answer_type == "Other":
        return f"the bridge is {label} but its type is not known well enough to describe it"
    return None


_OPENING_PHRASE = re.compile(  # "After gaining independence in 1991, ", "According to the 2011 census, "
    r"^(?:(?:In|On|At|By|Since|During|As of|According to|After|Before|Following|Under|With|Despite|Upon|"
    r"Between|From|Until|Through|Throughout|Within|Although|While|When|Once|Unlike|Prior to)\b"
    r"[^,]{0,60},\s+)?"
)


def _after_opening(text: str) -> str:
    """`text` without an opening phrase ("In 2012, ", "After gaining independence in 1991, ")."""
    return text[_OPENING_PHRASE.match(text).end() :]


def opens_sentence(node: str, keypoints: Sequence[str]) -> bool:
    """The node is the first thing a keypoint says, after an opening phrase ("In 2012, the NHS ...")."""
    return any(_after_opening(text).lower().startswith(node.lower()) for text in keypoints)


def shared_with_others(answer: str, answer_type: str, keypoints: Sequence[str], title: str) -> str | None:
    """A country or place that is its own page's subject, asked for by what the sentence says of it
    ("Which country is classified as an upper middle income country by the World Bank?", "Which
    place has numerous place names of Native American origin?"): a page tells what its subject is like,
    and other countries and places are often alike, unless the sentence names a rank, an exact figure, a
    full date, a span of years or a person (gates.identifies_one). A page "Economy of Angola" or
    "Foreign relations of Angola" has Angola for its subject; an opening phrase before the subject
    ("After gaining independence in 1991, ...") is read past."""
    bare = subject_name(title)
    own = {normalize(title), normalize(bare)}
    topic = topic_of(title)  # "Foreign relations of Angola"
    if topic is not None:
        own.add(normalize(topic))
    if answer_type not in ("Country", "Location") or normalize(answer) not in own:
        return None
    for text in keypoints:
        rest = _after_opening(text)
        if rest.lower().startswith(answer.lower()) and not identifies_one(rest[len(answer) :]):
            return f"what the page says of its subject {answer!r} may fit other places too: {text[:80]!r}"
    return None


_BEFORE_SURNAMES = HONORIFICS | frozenset(
    "general admiral captain colonel major governor president senator king queen prince princess emperor "
    "sultan shah".split()
)


def surname_alone(node: str, node_type: str, page_text: Sequence[str], linked: str | None) -> str | None:
    """A person asked for by one word that the article writes in full elsewhere: "Howe" where the page
    also says "Sir William Howe" or "General Howe", "Durrani" linked to the page "Durrani dynasty". The
    answer would be a piece of a name; a one-word name the page keeps ("Plato", linked to "Plato") stays."""
    word = node.strip()
    if node_type != "Person" or " " in word or not word[:1].isupper():
        return None
    page = normalize(re.sub(r"\s*\([^)]*\)$", "", linked or ""))
    if page != normalize(word) and re.search(rf"\b{re.escape(normalize(word))}\b", page):
        return f"{word!r} alone links to the page {linked!r}"  # not "Zhuangzi" for "Zhuang Zhou"
    fuller = re.compile(rf"\b([A-Z][\w'’-]*)\.?\s+{re.escape(word)}\b")
    for text in page_text:
        for match in fuller.finditer(text):
            before = match.group(1).lower()
            if before in _BEFORE_SURNAMES or (before in given_names() and before != word.lower()):
                return f"{word!r} alone: the page writes {match.group(0)!r}"
    return None


def answer_failure(
    answer: str, keypoints: Sequence[str], entities: Sequence[Entity]
) -> tuple[str, str] | None:
    """(gate name, detail) of the first answer gate that fails, or None."""
    label = entity_label(answer, entities)
    for name, detail in (
        ("answer_fragment", answer_fragment(answer, keypoints, entities)),
        ("answer_vague", answer_vague(answer, label)),
        ("answer_explained", answer_explained(answer, keypoints)),
        ("answer_among_values", answer_among_values(answer, label, entities)),
    ):
        if detail is not None:
            return name, detail
    return None


# --- questions: the question word in the main clause, the right phrase, one clause (round 2) ---------

_PARTICIPLES = frozenset(("VBG", "VBN"))
_BREAKS = frozenset((",", "(", "—", "–", ";"))


def _set_off(token: Any) -> bool:
    """The phrase of `token` follows a comma, a bracket or a dash: a non-restrictive modifier."""
    start = token.left_edge.i
    return start > 0 and token.doc[start - 1].text in _BREAKS


def _absolute_with(token: Any) -> bool:
    """ "with which river cutting a valley": "with" whose object carries a participle of its own."""
    if token.lower_ != "with":
        return False
    objects = [c for c in token.children if c.dep_ in ("pobj", "pcomp")]
    return any(c.tag_ in _PARTICIPLES for c in objects) or any(
        g.tag_ in _PARTICIPLES and g.dep_ in ("acl", "pcomp") for c in objects for g in c.children
    )


def _parenthetical_participle(doc: Any, token: Any) -> str | None:
    """The comma-delimited passage holding `token` opens with a participle right after a noun ("The
    Academy Awards, first presented in what year at ..., are overseen ...") and the sentence goes on
    after it: read from the tags, as the parser often makes such a passage the root."""
    commas = [t.i for t in doc if t.text == ","]
    before = max((i for i in commas if i < token.i), default=None)
    after = min((i for i in commas if i > token.i), default=None)
    if before is None or after is None or before == 0:
        return None
    words = [t for t in doc[before + 1 : after] if t.tag_ not in ("RB",)]
    noun_before = doc[before - 1].tag_ in _NOUN_TAGS | _NAME_TAGS or doc[before - 1].text == ")"
    if words and words[0].tag_ in _PARTICIPLES and noun_before and after < len(doc) - 2:
        return doc[before + 1 : after].text
    return None


def _fronted_adverbial(doc: Any, token: Any) -> str | None:
    """The question word deep inside an adverbial phrase put before the subject ("After the 2011 death
    of the founder in which country, the firm ..."): the sentence opens with a preposition, the question
    word comes before the first comma but is not that preposition's own object ("In which year, ...").
    A "When" followed by a subject opens such a clause too ("When Azerbaijan gained independence after
    the dissolution of what, the Armed Forces ..."), whatever the parser attached the question word to."""
    first = doc[0]
    clause_when = first.lower_ == "when" and len(doc) > 1 and doc[1].tag_ in ("DT", "NNP", "NNPS", "PRP")
    two_words = first.lower_ in ("prior", "due", "owing") and len(doc) > 1 and doc[1].lower_ == "to"
    opens = first.tag_ == "IN" or clause_when or two_words  # "Prior to independence in what year, ..."
    if not opens or first.lower_ in _WH_WORDS or first.lower_ == "of":
        return None
    comma = next((t.i for t in doc if t.text == ","), None)
    if comma is None or not 2 < token.i < comma:
        return None
    if not _clause_of_its_own(doc[comma + 1 :]):
        return None
    return doc[:comma].text


def _relative_after_preposition(token: Any) -> bool:
    """ ", on which he worked": a relative clause's own word, not a question word."""
    doc = token.doc
    return (
        token.lower_ in ("which", "whom")
        and token.dep_ == "pobj"
        and token.i > 1
        and doc[token.i - 1].tag_ == "IN"
        and doc[token.i - 2].text == ","
    )


_AMOUNT_NOUNS = frozenset(
    """amount number percentage percent share proportion sum figure total value rate price cost size
    population count quantity fraction ratio level length distance height area weight capacity""".split()
)
_TIME_NOUNS = frozenset("year years month date day decade century time".split())
_MEASURE_VERBS = frozenset(
    """is are was were be been has have had totaled totalled totals total exceeded exceeds exceed reached
    reaches rose rises fell falls grew grows increased decreased dropped amounted amounts stood stands
    remained remains represented represents accounted accounts equalled equaled equals cost costs""".split()
)
_NOT_AMOUNTS = frozenset("Date Person Organization Location Country Work Event".split())
_COUNT_ANSWER = re.compile(
    rf"^(?:(?:about|around|approximately|over|more than|less than|fewer than|some|nearly|almost|up to"
    rf"|at least|roughly|only|just)\s+)*(?:[$€£¥]?\d(?![\d,.]*(?:st|nd|rd|th)\b)|{_NUMBER_WORDS}\b"
    rf"|(?:dozens|hundreds|thousands|millions|billions|scores)\b)",
    re.IGNORECASE,
)


def _counted_answer(answer: str, answer_label: str | None, answer_type: str) -> bool:
    """The answer is an amount: a value label or type, or a number, "dozens", "over 200,000"."""
    if answer_type in _NOT_AMOUNTS or answer_label in ("DATE", "TIME", "ORDINAL"):
        return False
    return answer_label in VALUE_LABELS or answer_type == "Quantity" or bool(_COUNT_ANSWER.match(answer))


_DATED = re.compile(  # a year, a relative date, or an event or report that says when
    r"\b(?:1\d{3}|20\d{2})s?\b|\b(?:years?|months?|decades?) ago\b|\blast year\b"
    r"|\b(?:what|which) (?:year|date)\b|\b(?:as of|during|when)\b"
    r"|\b(?:century|era|period|war|reign|census|survey|study|report)\b",
    re.I,
)


def undated_figure(doc: Any, answer: str, answer_label: str | None, answer_type: str = "") -> str | None:
    """ "Hispanics or Latinos of any race made up what percentage of the population of Alaska?": a figure
    asked in the past tense with no date, census or report to say when; the page gave the year before. (A
    year in a bridge's description counts: the parse cannot tell "in 2011" there from the clause's.)"""
    if not answer or not _counted_answer(answer, answer_label, answer_type) or _DATED.search(doc.text):
        return None
    root = next((token for token in doc if token.dep_ == "ROOT"), None)
    if root is None or root.tag_ != "VBD" or any(c.dep_ in ("aux", "auxpass") for c in root.children):
        return None
    return f"a past figure with no date: {doc[root.i].text!r} when is not said"


_LASTING_VERBS = frozenset(
    """is are was were has have had produced produces exceeded exceeds remained remains stayed stays held
    holds""".split()
)
_YEAR_ASKED = re.compile(r"\b(?:in|during) (?:what|which) year\b|^(?:what|which) year\b", re.I)
_BY_YEAR = re.compile(r"\bby (?:what|which) year\b", re.I)
_POSSESSION = frozenset(("has", "have", "had"))
_LASTING = re.compile(
    r"\b(?:over|more than|above|at least|less than|under|per year|a year|annually|exceed(?:ed|s))\b", re.I
)


def year_of_a_lasting_state(doc: Any) -> str | None:
    """ "Alaska had the highest number of pilots per capita of any U.S. state in what year?", "Angola
    produced over three million carats of diamonds per year in what year?": a year asked of a state
    ("had", "produced", "exceeded") that a superlative or a threshold describes, which may hold for many
    years. An exact figure ("saw migration of -1.14/1,000"), a report that dates it ("according to"), a
    passive or a boundary ("until what year", "since what year") picks one year. "By what year" asked of
    what a place had ("had air links ... but no regular domestic air service by what year?") fits every
    later year as well."""
    by_year = _by_year_of_a_possession(doc)
    if by_year is not None:
        return by_year
    asked = _YEAR_ASKED.search(doc.text)
    if asked is None or "according to" in doc.text.lower():
        return None
    verb = _verb_of_question_word(doc, asked.start())
    if verb is None or verb.lower_ not in _LASTING_VERBS or any(c.dep_ == "auxpass" for c in verb.children):
        return None
    if exact_figure(doc.text):
        return None
    superlative = any(t.tag_ in ("JJS", "RBS") for t in doc)
    if superlative or _LASTING.search(doc.text):
        return f"a year asked of a state ({verb.text!r}) that may hold for many years"
    return None


def _verb_of_question_word(doc: Any, start: int) -> Any | None:
    """The verb that the first "what" or "which" at or after character `start` hangs on, or None."""
    verb = next((t for t in doc if t.idx >= start and t.lower_ in ("what", "which")), None)
    while verb is not None and verb.head.i != verb.i and not verb.tag_.startswith("VB"):
        verb = verb.head
    return verb


def _by_year_of_a_possession(doc: Any) -> str | None:
    asked = _BY_YEAR.search(doc.text)
    if asked is None:
        return None
    verb = _verb_of_question_word(doc, asked.start())
    if verb is None or verb.lower_ not in _POSSESSION or verb.dep_ == "aux":
        return None
    return f"'by what year' asked of what something {verb.text!r}, which every later year may fit too"


def garbled_amount(doc: Any, answer: str, answer_label: str | None, answer_type: str = "") -> str | None:
    """An amount asked with a garbled wh-phrase: "what" before a noun the number counted ("forced what
    surrender of local leaders?" for "dozens"), a bare "what" as the subject, or "what amount" made the
    doer of a verb ("What amount ordered in 1975 ...?"). "How many N", "what amount", "what number",
    "what percentage" in an argument position are the ways to ask."""
    if not answer or not _counted_answer(answer, answer_label, answer_type):
        return None
    for token in question_words(doc):
        if token.lower_ not in ("what", "which"):
            continue
        if token.dep_ != "det":
            if token.dep_ in _SUBJECTS and token.head.lower_ not in _MEASURE_VERBS:
                return f"a bare {token.text!r} as the doer of {token.head.text!r} for the amount {answer!r}"
            continue
        noun = token.head
        if noun.lower_ in _TIME_NOUNS:
            continue
        if noun.lower_ not in _AMOUNT_NOUNS:
            return f"'{token.text} {noun.text}' for the amount {answer!r}: 'how many' or 'what number of'"
        if noun.dep_ == "ROOT":
            return f"'{token.text} {noun.text}' heads a question with no verb of its own"
        verb = noun.head
        active = _is_verb(verb) and not any(c.dep_ == "auxpass" for c in verb.children)
        if noun.dep_ == "nsubj" and active and verb.lower_ not in _MEASURE_VERBS:
            return f"'{token.text} {noun.text}' is the doer of {verb.text!r}"
    return None


_WORK_NOUNS = (
    "novel|book|film|movie|album|song|single|play|poem|opera|series|show|game|magazine|newspaper"
    "|painting|documentary|musical|novella|comic|manga|anime|sitcom|symphony|record"
)
_WHERE_PREPOSITIONS = frozenset(("at", "near", "inside", "outside", "across", "beneath"))


def _written_as_work(answer: str, keypoints: Sequence[str]) -> str | None:
    """How a keypoint marks `answer` as a work: in quotes, or next to a work noun ("the novel X", "X, a
    novel", "X (film)")."""
    name = re.escape(answer.strip())
    marks = (
        rf"[\"“]{name}[\"”]",
        rf"\b(?:{_WORK_NOUNS})s?,?\s+(?:called\s+|titled\s+|entitled\s+)?{name}(?!\w)",
        rf"(?<!\w){name}\s*(?:\(|,\s+(?:a|an|the)\s+(?:\w+\s+){{0,2}})(?:{_WORK_NOUNS})\b",
    )
    for text in keypoints:
        for mark in marks:
            found = re.search(mark, text, re.IGNORECASE)
            if found is not None:
                return found.group(0)
    return None


def person_word_for_thing(
    doc: Any,
    answer: str,
    answer_type: str = "",
    answer_label: str | None = None,
    keypoints: Sequence[str] = (),
) -> str | None:
    """ "who" or "whom" for a work or a place that spaCy took for a person: the answer's type is Work,
    the keypoint writes it as a work ("the novel X", in quotes), or the question word is the object of
    a place preposition ("found at whom in Montenegro")."""
    for token in doc:  # "Festivals in whom include ...?": the parse may not take it for a question word
        before = doc[token.i - 1].lower_ if token.i > 0 else ""
        if token.lower_ in ("who", "whom") and before in _WHERE_PREPOSITIONS | {"in"}:
            return f"'{doc[token.i - 1].text} {token.text}': a person is not a place"
    for token in question_words(doc):
        if token.lower_ not in ("who", "whom"):
            continue
        if answer_type == "Work" or answer_label == "WORK_OF_ART":
            return f"{token.text!r} for the work {answer!r}"
        work = _written_as_work(answer, keypoints) if answer else None
        if work is not None:
            return f"{token.text!r} for {answer!r}, written as a work: {work!r}"
        if token.dep_ == "pobj" and token.head.lower_ in _WHERE_PREPOSITIONS:
            return f"'{token.head.text} {token.text}': a person is not a place"
    return None


def thing_word_for_person(doc: Any, answer: str, answer_type: str = "") -> str | None:
    """ "In Europe the main propagandist of free love ... was what?" for Emile Armand: a bare "what" asks
    for an answer typed as no kind of thing whose name is a person's (a given name and a surname)."""
    if answer_type != "Other" or not answer or name_noun(answer) or not is_personal_name(answer):
        return None  # "Bryant-Denny Stadium" says it is a stadium
    for token in question_words(doc):
        if token.lower_ == "what" and token.dep_ != "det":
            return f"'what' for {answer!r}, a person's name"
    return None


# --- false premises that are nonsense rather than false -------------------------------------------------

_STATE_VERBS = frozenset(
    """is are was were be been being has have had remains remained stood stands totaled totalled totals
    numbered numbers""".split()
)
_STATE_PASSIVES = frozenset(("ranked", "rated", "estimated", "valued", "listed", "classified"))


def _replaced_top(doc: Any, replacement: str) -> Any | None:
    """The token of the replacement in `doc` whose head lies outside it, or None when it is not there."""
    tokens = _replaced_tokens(doc, replacement)
    inside = {t.i for t in tokens}
    return next((t for t in tokens if t.head.i not in inside or t.dep_ == "ROOT"), None)


def date_of_a_state(doc: Any, replacement: str) -> str | None:
    """A date moved on a state or a measure, not on an event: "The value of assessed property was what
    amount 2 years ago?", "Which place had the highest number of pilots ... 5 years ago?" ask about
    another year, which is no false premise. The date's verb is "be", "have", "total", a passive
    "ranked" or "estimated", "ranked as" without an object ("ranked as the 47th state"), or the date
    follows "as of"."""
    top = _replaced_top(doc, replacement)
    if top is None:
        return None
    for ancestor in top.ancestors:
        if ancestor.lower_ == "as" and ancestor.i + 1 < len(doc) and doc[ancestor.i + 1].lower_ == "of":
            return f"{replacement!r} dates a state ('as of')"
        if not _is_verb(ancestor):
            continue
        passive = any(c.dep_ == "auxpass" for c in ancestor.children)
        if _subject_tells_event(ancestor):
            return None  # "The most recent country to recognize X was Bahrain, 16 years ago"
        ranked_as = ancestor.lower_ in _RANKING_VERBS and not any(c.dep_ == "dobj" for c in ancestor.children)
        if ancestor.lower_ in _STATE_VERBS or passive and ancestor.lower_ in _STATE_PASSIVES or ranked_as:
            return f"{replacement!r} dates a state or a measure ({ancestor.text!r}), not an event"
        return None
    return None


def _subject_tells_event(verb: Any) -> bool:
    """The subject of `verb` carries a verb of its own ("the most recent country to recognize X")."""
    subjects = [c for c in verb.children if c.dep_ in _SUBJECTS]
    return any(
        t.dep_ in ("acl", "relcl") and _is_verb(t) and t.lower_ not in _STATE_VERBS
        for subject in subjects
        for t in subject.subtree
    )


_RANKING_VERBS = frozenset("ranked ranks rank rated rates".split())


def false_premise_nonsense(doc: Any, replacement: str, rule: str) -> tuple[str, str] | None:
    """(gate name, detail) when a false-premise change makes the claim nonsense rather than false: a
    date moved on a state (false_premise_state_date). The other nonsense changes are never made (see
    irb/premises.py)."""
    if rule == "wrong_relative_date":
        detail = date_of_a_state(doc, replacement)
        return ("false_premise_state_date", detail) if detail else None
    return None


# --- questions: where the question word may attach (a whitelist read from the parse) -------------------

_ARGUMENTS = frozenset(("nsubj", "nsubjpass", "dobj", "attr", "dative", "oprd", "npadvmod", "advmod"))
_PREPOSITIONS = frozenset(("prep", "agent", "dative"))
_OBJECTS = frozenset(("pobj", "pcomp"))
_OFF_MAIN = {
    "appos": "the appositive",
    "relcl": "the relative clause",
    "acl": "the modifier",
    "advcl": "the adverbial clause",
    "ccomp": "the complement clause",
    "csubj": "the clause",
    "parataxis": "the parenthetical",
    "conj": "the conjunct",
}


def _finite(verb: Any) -> bool:
    """A verb that can head a clause: a tensed form or one with an auxiliary."""
    tensed = verb.tag_ in ("VBD", "VBZ", "VBP", "MD")
    return tensed or any(c.dep_ in ("aux", "auxpass") for c in verb.children)


def _main_verbs(doc: Any) -> set[int]:
    """The main clause's verbs: the root, a verb coordinated right after it that shares its object
    ("invaded and captured which place"), and the verbs joined to these by xcomp ("is considered to
    be"). When the parser made a noun the root ("The Paleolithic finds of which country show"), the
    first tensed verb with a subject of its own outside a relative clause stands in for it; when it
    made "According" or a fronted subordinate clause the root, the first tensed verb with a subject of
    its own after the comma does ("According to a 2013 study by X, which place had ...", "While ferries
    were run by the state, which company began ...", both read as a relative clause on the noun before
    the comma)."""
    root = next(token for token in doc if token.dep_ == "ROOT")
    if root.lower_ == "according" or any(c.dep_ == "mark" for c in root.children):
        comma = next((t.i for t in doc[root.i :] if t.text == ","), len(doc))
        root = next((t for t in doc[comma:] if _finite(t) and _own_subject(t)), root)
    elif not _is_verb(root):
        clause = (t for t in doc if _finite(t) and _own_subject(t) and "relcl" not in _deps_up(t))
        root = next(clause, root)
    verbs = [root, *_reduced_relative_main(root)]
    if not any(c.dep_ in ("dobj", "attr") for c in root.children):
        verbs += [c for c in root.children if c.dep_ == "conj" and c.i == root.i + 2 and _is_verb(c)]
    found: set[int] = set()
    while verbs:
        verb = verbs.pop()
        found.add(verb.i)
        verbs.extend(child for child in verb.children if child.dep_ == "xcomp")
    return found


def _reduced_relative_main(root: Any) -> list[Any]:
    """ "Operation Edelweiss carried out by the German Wehrmacht targeted which place ...": a past
    participle with an agent but no passive auxiliary, taken for the root; the tensed verb after it
    with no subject or opener of its own is the main verb."""
    if not any(c.dep_ == "agent" for c in root.children) or any(c.dep_ == "auxpass" for c in root.children):
        return []
    return [
        c
        for c in root.children
        if c.dep_ == "advcl"
        and c.tag_ in ("VBD", "VBZ", "VBP")
        and not any(g.dep_ in _SUBJECTS or g.dep_ == "mark" for g in c.children)
    ]


def _own_subject(verb: Any) -> bool:
    """A subject that is no relative word ("that", "who")."""
    return any(c.dep_ in _SUBJECTS and c.tag_ not in ("WDT", "WP") for c in verb.children)


def _deps_up(token: Any) -> set[str]:
    """The dependency labels of `token` and its ancestors."""
    return {node.dep_ for node in (token, *token.ancestors)}


_DETERMINED = _NOUN_TAGS | {"JJ", "CD"}  # "which country", "how many", "how many acres"
_SHARES = _PARTS | {"part", "half", "much", "majority", "bulk"}
_HOLDERS = _NOUN_TAGS | _NAME_TAGS | {"CD", "PRP", "JJS", "DT"}  # what an of-phrase can hang on


def _wh_phrase(token: Any) -> Any:
    """The noun a question word determines ("which country", "how many acres"), or the word itself."""
    phrase = token
    while phrase.dep_ in ("det", "advmod", "amod", "nummod") and phrase.head.tag_ in _DETERMINED:
        phrase = phrase.head
        if phrase.tag_ in _NOUN_TAGS:
            break
    return phrase


def _of_head(phrase: Any) -> Any | None:
    """The word `phrase` is the of-object of ("the population of which country"), or None."""
    prep = phrase.head
    noun = prep.head
    if phrase.dep_ in _OBJECTS and prep.lower_ == "of" and prep.dep_ == "prep" and noun.tag_ in _HOLDERS:
        return noun
    return None


def _argument(phrase: Any) -> Any:
    """The phrase that carries the wh-phrase into its clause: the wh-phrase itself, or the noun it is
    the possessor ("which country's debt") or the of-object ("the population of which country") of;
    a share ("most of which country's gold") adds no level."""
    argument = phrase.head if phrase.dep_ == "poss" else _of_head(phrase) or phrase
    share = _of_head(argument)
    return share if share is not None and share.lower_ in _SHARES else argument


_ASKED_NOUNS = frozenset("place country organization nation city state region person year month date".split())


def _opens_relative(token: Any) -> bool:
    """ "the only state in which possession ... was legal": a relative "which" after its preposition, its
    clause's verb after it; "which place", "which country" ask."""
    prep = token.head
    following = token.doc[token.i + 1] if token.i + 1 < len(token.doc) else token
    return (
        token.lower_ in ("which", "whom")
        and token.dep_ == "pobj"
        and prep.i == token.i - 1
        and prep.head.dep_ in ("relcl", "acl")
        and _is_verb(prep.head)
        and prep.head.i > token.i
        and following.lower_ not in _ASKED_NOUNS
    )


def _fronted(phrase: Any) -> bool:
    """The wh-phrase opens the question ("Who describes how, ...", "In which year ..."): the main
    clause's by its place, whatever the parser made of the rest."""
    start = phrase.left_edge.i
    if phrase.dep_ in _OBJECTS and phrase.head.i == start - 1:
        start -= 1
    return start == 0


def _agent(argument: Any, main: set[int]) -> bool:
    """ "is classified as an upper middle income country by which organization": "by" in a passive
    main clause, hung on a noun by the parser but read as the agent (no verb in between)."""
    prep = argument.head
    if argument.dep_ not in _OBJECTS or prep.lower_ != "by":
        return False
    passive = any(c.dep_ == "auxpass" for i in main for c in argument.doc[i].children)
    between = list(prep.ancestors)
    top = next((n for n in between if n.i in main), None)
    return passive and top is not None and not any(_is_verb(n) for n in between[: between.index(top)])


def _read_with_the_verb(phrase: Any, main: set[int]) -> bool:
    """A prepositional wh-phrase the parser hangs elsewhere that a reader takes with the main verb: one
    that closes the question after a comma (", with which organization?"), or a time or a phrase on a
    number ("in space in what month and year?", "and another 184 in which country") with no clause of
    its own in between, save a participle or an infinitive on the main verb ("..., spending nine days
    aboard the Mir space station in what year?", "applied the theory to model ... in what year?")."""
    prep = phrase.head
    if phrase.dep_ not in _OBJECTS or prep.dep_ not in _PREPOSITIONS:
        return False
    doc = phrase.doc
    if all(t.is_punct for t in doc[phrase.right_edge.i + 1 :]) and doc[prep.i - 1].text == ",":
        return True
    if phrase.lower_ not in _TIME_NOUNS and prep.head.tag_ != "CD":
        return False
    for node in prep.ancestors:
        if node.i in main:
            return True
        if node.dep_ == "appos" or _is_verb(node) and not _open_verb_phrase(node):
            return False  # "... whom he married in what month and year?", "when he flew ... on what date?"
    return False


def _open_verb_phrase(verb: Any) -> bool:
    """A participle or infinitive that adds to the main verb ("..., spending", "to model"), or a verb
    used as a preposition ("according to"); not a clause with its own opener or a noun's modifier."""
    if verb.dep_ in ("prep", "pcomp"):
        return True
    infinitive = any(c.dep_ == "aux" and c.lower_ == "to" for c in verb.children)
    opened = any(c.dep_ == "mark" for c in verb.children)
    return verb.dep_ in ("advcl", "xcomp") and not opened and (verb.tag_ == "VBG" or infinitive)


def _on_main(argument: Any, main: set[int]) -> bool:
    """`argument` is an argument of a main verb, or the object of a preposition on one (also "out of",
    "because of")."""
    if argument.dep_ in _ARGUMENTS or argument.dep_ in ("ccomp", "xcomp") and not _is_verb(argument):
        return argument.head.i in main  # "was what amount", parsed as a complement
    prep = argument.head
    if argument.dep_ not in _OBJECTS or prep.dep_ not in _PREPOSITIONS | {"pcomp"}:
        return False
    if prep.head.i in main:
        return True
    return prep.lower_ == "of" and prep.head.dep_ in ("prt", "advmod", "prep") and prep.head.head.i in main


def _orphan_preposition(phrase: Any) -> Any | None:
    """The preposition right before the wh-phrase when the parser left it without an object and made the
    wh-phrase the subject of a relative clause ("consumption in which country is ..." read as "in which
    the country is ..."): the wh-phrase is its object, and it modifies the noun before it."""
    start = phrase.left_edge.i
    prep = phrase.doc[start - 1] if start > 1 else None
    if prep is None or prep.dep_ != "prep" or any(c.dep_ in _OBJECTS for c in prep.children):
        return None
    return prep


def _attached(phrase: Any, main: set[int]) -> bool:
    """Whether the wh-phrase hangs on a main verb, as an argument or a preposition's object, directly or
    through one possessor or of-phrase."""
    orphan = _orphan_preposition(phrase)
    if orphan is not None:  # "The Paleolithic finds of which country show ...": the subject's of-phrase
        noun = phrase.doc[orphan.i - 1]
        held = noun.tag_ in _HOLDERS and (noun.dep_ == "ROOT" or _on_main(noun, main))
        return orphan.lower_ == "of" and held
    argument = _argument(phrase)
    if argument.dep_ == "ROOT" or _fronted(phrase) or _on_main(argument, main) or _agent(argument, main):
        return True
    return argument is phrase and _read_with_the_verb(phrase, main)


def _span(token: Any) -> str:
    return token.doc[token.left_edge.i : token.right_edge.i + 1].text


def _where(phrase: Any, main: set[int]) -> str:
    """Names what the wh-phrase sits in: the outermost clause, appositive or list item below the main
    verb, else the noun its preposition modifies."""
    orphan = _orphan_preposition(phrase)
    if orphan is not None:
        inside = phrase.doc[orphan.i : _argument(phrase).right_edge.i + 1].text
        return f"the modifier {inside!r} after {phrase.doc[orphan.i - 1].text!r}"
    path = [phrase, *phrase.ancestors]
    for node in reversed(path):
        if node.i in main:
            continue
        what = _OFF_MAIN.get(node.dep_)
        if what == "the conjunct" and not _is_verb(node):
            what = "the list item"
        if what is not None:
            return f"{what} {_span(node)!r}"
    modifier = next((n for n in path if n.dep_ in _PREPOSITIONS and not _is_verb(n.head)), None)
    if modifier is not None:
        return f"the modifier {_span(modifier)!r} of {modifier.head.text!r}"
    return f"{_span(path[-2] if len(path) > 1 else phrase)!r}, away from the main verb"


def _set_off_stretch(doc: Any, token: Any) -> Any | None:
    """The appositive, parenthetical or clause set off by a comma or bracket whose stretch (from its
    start to the next comma or closing bracket) holds `token`, though the parser hangs `token` elsewhere
    ("..., professor of anatomy at which organization, is considered ...")."""
    for node in doc:
        if node.dep_ not in _OFF_MAIN or node.dep_ == "conj" or node.i in (token.i, token.head.i):
            continue
        if not _set_off(node) or token in node.subtree:
            continue
        end = next((t.i for t in doc[node.right_edge.i + 1 :] if t.text in (",", ")", ";", "—")), None)
        if end is not None and node.left_edge.i < token.i < end and token.i > node.right_edge.i:
            return node
    return None


def _in_a_name(phrase: Any) -> str | None:
    """ "at the German Charles-Ferdinand University in which place": a place asked right after an
    organization's name, which it reads as a piece of (the parser may hang it on the verb)."""
    prep = phrase.head
    if phrase.dep_ not in _OBJECTS or prep.lower_ not in ("in", "at") or prep.i < 1:
        return None
    doc = phrase.doc
    run = prep.i
    while run > 0 and (doc[run - 1].tag_ in _NAME_TAGS or doc[run - 1].tag_ == "HYPH" and run > 1):
        run -= 1
    name = doc[run : prep.i].text
    if name and name_type(name) == "Organization" and phrase.lower_ not in _TIME_NOUNS:
        return doc[run : phrase.right_edge.i + 1].text
    return None


def wh_outside_main_clause(doc: Any) -> str | None:
    """The wh-phrase does not attach to the main clause. It may be an argument of the main verb (the
    root, or a verb joined to it by xcomp): subject, object, attribute, dative, oprd, npadvmod or an
    adverb (when, where, how); the object of a preposition on that verb; or the possessor ("which
    country's X") or of-object ("the population of which country") of either, one level only. Anything
    else fails: inside a relative, adverbial, participial or complement clause, a second conjunct verb,
    an appositive, a preposition on a noun other than "of", a list item, or a place asked right after an
    organization's name."""
    joined = _main_clauses_joined(doc)
    if joined:
        return joined
    main = _main_verbs(doc)
    asked = question_words(doc)
    fronted = any(_fronted(_wh_phrase(token)) for token in asked)
    for token in asked:
        if _relative_after_preposition(token) or _opens_relative(token):
            continue
        if fronted and token.tag_ == "WRB" and not _fronted(token):
            continue  # "Who describes how ...": after a fronted question word, "how" opens a clause
        phrase = _wh_phrase(token)
        if not _attached(phrase, main):
            return f"question word inside {_where(phrase, main)}"
        stretch = _set_off_stretch(doc, token)
        if stretch is not None:
            end = next(t.i for t in doc[token.i :] if t.text in (",", ")", ";", "—"))
            what = _OFF_MAIN[stretch.dep_]
            return f"question word inside {what} {doc[stretch.left_edge.i : end].text!r}"
        name = _in_a_name(phrase)
        if name is not None:
            return f"question word inside the name {name!r}"
        passage = _read_from_the_tags(doc, token, phrase)
        if passage is not None:
            return f"question word inside {passage}"
    return None


def _read_from_the_tags(doc: Any, token: Any, phrase: Any) -> str | None:
    """What the parser may hang on the main verb though the words set it apart: a clause opened by
    "whilst" or "although" read as a preposition, an absolute "with" ("with which river cutting a
    valley"), a participle set off by commas ("The Academy Awards, first presented in what year at
    ..., are overseen"), or an adverbial put before the subject ("After the death of the founder in
    which country, the firm ...")."""
    opener = next((a for a in token.ancestors if a.lower_ in _SUBORDINATORS and a.i < token.i), None)
    if opener is not None:
        return f"the clause opened by {opener.text!r}"
    if phrase.dep_ in _OBJECTS and _absolute_with(phrase.head):
        return f"the absolute phrase {_span(phrase.head)!r}"
    passage = _parenthetical_participle(doc, token) or _fronted_adverbial(doc, token)
    return f"the modifier {passage!r}" if passage is not None else None

"""The offline backend of the keypoint stage: deterministic rules, no model.

`decontextualize` turns a citing segment into a keypoint the way a careful copy editor would: drop
leading connectives, replace a leading pronoun ("It", "Their") or description ("The company") with the
name of what it refers to, complete a subjectless continuation fragment with the page subject, fix
capitals and the final stop, and refuse what still leans on context.

Whom a reference means is `referents.Resolver`'s business (the spaCy parse of the sentence before, the
heading, the page); a reference it cannot resolve rejects the segment as "unresolved_referent". Measured
on the tuning half of the 106 realdata articles (even page ids): of 37 keypoints that differ from the
page-title-by-default rules, 35 are right (25 new keypoints, 2 fixed, 8 wrong or unresolvable ones
rejected), one correct keypoint is lost and one rejection is debatable. Pronouns later in the
sentence, "which"-fragments and omitted context ("the following year") are kept as they are or rejected
as "not_self_contained". The description test looks only at the word after the noun, so some compounds
slip through.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from irbgen.irb.rules.referents import (
    LABEL_NOUNS,
    PRONOUN_CLASSES,
    Candidate,
    Page,
    Reference,
    Resolution,
    agrees,
    singular,
)
from irbgen.irb.transforms import is_personal_name
from irbgen.text import IRREGULAR, TOKEN, clean, fold, words
from irbgen.wikipedia.leads import VAGUE_NOUNS

# Connectives that only make sense after another sentence; the first group needs a comma after it
# ("In addition, ..." but not "In addition to ..."), the second may be followed by a plain space.
_COMMA_CONNECTIVES = (
    "according to the same source", "afterwards", "as a consequence", "as a result", "at the same time",
    "besides", "by contrast", "consequently", "despite that", "despite this", "even so", "eventually",
    "finally", "for example", "for instance", "hence", "in addition", "in contrast", "in fact",
    "in particular", "in spite of that", "in spite of this", "in turn", "indeed", "instead", "later",
    "likewise", "meanwhile", "nevertheless", "nonetheless", "notably", "on the other hand", "overall",
    "similarly", "specifically", "subsequently", "still", "then", "therefore", "thus",
)  # fmt: skip
_SPACE_CONNECTIVES = (
    "additionally", "also", "and also", "and", "but also", "but", "furthermore", "however", "moreover",
)  # fmt: skip


def _alternation(phrases: tuple[str, ...]) -> str:
    return "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in sorted(phrases, key=len, reverse=True))


_CONNECTIVE = re.compile(
    rf"^(?:(?:{_alternation(_COMMA_CONNECTIVES)})\s*,|(?:{_alternation(_SPACE_CONNECTIVES)})\b,?)\s*",
    re.I,
)
_SUBJECT_PRONOUNS = {"he": "m", "she": "f", "it": "n", "they": "p"}
_POSSESSIVE_PRONOUNS = {"his": "m", "her": "f", "its": "n", "their": "p"}
_UNRESOLVED_STARTS = frozenset(
    "he she it they his her its their him them this that these those which who whom whose where".split()
)
_LEAD_PRONOUNS = {
    "m": ("he", "his", "him"),
    "f": ("she", "her", "hers"),
    "n": ("it", "its"),
    "p": ("they", "their", "them"),
}
_PERSON_NOUNS = frozenset(
    """academic activist actor actress administrator architect artist astronaut athlete author bishop
    boxer broadcaster businessman businesswoman chef chemist coach comedian composer cricketer criminal
    cyclist dancer designer diplomat director doctor drummer economist engineer entrepreneur executive
    footballer general golfer guitarist historian jockey journalist judge king lawyer linguist manager
    mathematician member minister model monarch musician novelist nurse officer painter philosopher
    photographer physician physicist pilot player poet politician presenter president priest prince
    princess producer professor psychologist queen rapper researcher runner scientist sculptor senator
    singer skater skier soldier songwriter sprinter surgeon swimmer teacher writer wrestler""".split()
)
_PERSON_SUFFIXES = ("ist", "ian", "man", "woman", "person")
# Words after "The <noun>" that show the noun ends the subject phrase (not "The city council ...").
_VERBISH = frozenset(
    """is was are were has had have will would can could may might must should shall does did do also
    then now later still first once remains remained became becomes broke cut fought hit kept lost put
    sent set shot stood struck won""".split()
)
# Participles that end a class description: "a film written and directed by ...".
_PARTICIPLES = frozenset("born built founded given held known led made run set shown written".split())
_DETERMINERS = frozenset("the a an some many most several each every both all no".split())
_DESCRIPTION_NOUNS = frozenset().union(*LABEL_NOUNS.values())  # "the company", "the school", "the team"
_NAMED_AS = re.compile(r"\s+(?:now\s+|later\s+|then\s+|also\s+)?(?:known|called|named|referred)\b", re.I)
_NOUN = re.compile(r"[a-z]+(?:-[a-z]+)*")
_ADVERBS = frozenset("also later then subsequently eventually again still currently previously now".split())
_LEAD_STOP = re.compile(
    r"[,;:()]|\b(?:that|which|who|whose|where|when|in|of|on|at|by|for|from|with|to|since|as|near|"
    r"between|under|over|about|after|before|during|located|based|known|founded|born|"
    r"concerning|including|regarding|involving|featuring|covering|containing|consisting|comprising|"
    r"depicting|describing|following|using)\b|\s[.!?](?:\s|$)"
)
_INTRO = re.compile(
    r"(?:in|on|at|after|before|during|by|from|since|following|upon|until|throughout|within|as of|"
    r"according to|between|through|over|with)\b[^,]{1,60},\s+",
    re.I,
)
_COPULA = re.compile(r"\b(?:is|was|are|were)\s+(?:(?:one\s+of\s+the|one\s+of|a|an|the)\s+)?(.+)", re.I)


@dataclass(frozen=True)
class Subject:
    """What a page is about, as the rules see it: its name, class nouns and pronoun classes."""

    name: str  # the title without a "(disambiguation)" suffix
    nouns: frozenset[str]  # lowercase class nouns: "bridge", "city", "film"
    pronouns: frozenset[str]  # pronoun classes that may refer to it: m, f, n, p

    @property
    def possessive(self) -> str:
        """ "Paris's", "The Beatles'"."""
        return f"{self.name}'" if self.name.endswith("s") else f"{self.name}'s"


def _first_sentence(text: str) -> str:
    text = re.sub(r"\([^()]*\)", "", text)  # "(French pronunciation: ...)" and the like
    match = re.search(r"(?<=[a-z0-9)\]])[.!?](?=\s+[A-Z])", text)
    return text[: match.start()] if match else text


def _class_nouns(lead: str) -> set[str]:
    """Head nouns of "<Title> is a ... <noun>" in the lead's first sentence ("a suspension bridge")."""
    match = _COPULA.search(_first_sentence(lead))
    if not match:
        return set()
    phrase = match.group(1)
    stop = _LEAD_STOP.search(phrase)
    phrase = phrase[: stop.start()] if stop else phrase
    kept = []
    tokens = phrase.split()
    for token, after in zip(tokens, [*tokens[1:], ""], strict=False):  # "" pads the last token
        participle = token in _PARTICIPLES or (len(token) > 4 and token.endswith(("ing", "ed")))
        before_noun = after.islower() and after not in _DETERMINERS | {"and", "or"}
        if token.islower() and participle and not before_noun:
            break  # "a bridge spanning ...", "a company headquartered ...", "a film written by ..."
        kept.append(token)  # "a landlocked country", "a widely used programming language"
    while kept and kept[-1].lower() in ("and", "or"):
        kept.pop()
    nouns: set[str] = set()
    for part in re.split(r"\s+(?:and|or)\s+", " ".join(kept)):
        tokens = part.split()
        if tokens and _NOUN.fullmatch(tokens[-1]):
            noun = tokens[-1]
            nouns |= {noun, noun.rsplit("-", 1)[-1], singular(noun)}  # "singer-songwriter": "songwriter"
    return nouns - VAGUE_NOUNS  # "a proposed form of democracy": "the form" is not the page


def _is_person_noun(noun: str) -> bool:
    return noun in _PERSON_NOUNS or noun.endswith(_PERSON_SUFFIXES)


@lru_cache(maxsize=64)
def page_subject(title: str, lead: str) -> Subject:
    """The page subject from its title and lead paragraph."""
    name = clean(title)
    nouns = _class_nouns(clean(lead))
    if "sovereign state" in clean(lead).lower():
        nouns.add("country")  # "the country" is a sovereign state, never a U.S. state
    disambiguation = re.search(r"\s*\(([^()]*)\)\s*$", name)
    if disambiguation:
        name = name[: disambiguation.start()].strip()
        last = disambiguation.group(1).split()
        if last and last[-1].isalpha():
            nouns.add(last[-1].lower())  # "Mercury (planet)" -> planet
    lead_text = clean(lead)
    with_article = re.match(rf"the\s+{re.escape(name)}\b", lead_text, re.I)
    if with_article and not name.lower().startswith("the "):
        name = lead_text[:4] + name  # the lead writes "The Golden Gate Bridge is ..."
    title_words = name.split()
    if len(title_words) >= 2 and title_words[-1].isalpha():
        nouns.add(title_words[-1].lower())  # "Golden Gate Bridge" -> "the bridge"
    lead_words = set(words(lead))
    classes = {c for c, forms in _LEAD_PRONOUNS.items() if lead_words.intersection(forms)}
    personal = classes & {"m", "f"}
    if personal:
        classes = personal | ({"p"} if "p" in classes else set())
    elif not classes:
        person = any(_is_person_noun(noun) for noun in nouns)
        classes = {"m", "f", "p"} if person else {"n", "p"}
    if not classes & {"m", "f"} and is_personal_name(name):
        classes = {"m", "f"} | (classes & {"p"})  # "Allan Dwan (1885 – 1981) was a pioneering ... director"
    return Subject(name=name, nouns=frozenset(nouns), pronouns=frozenset(classes))


def page_person(title: str, lead: str, context: Sequence[str] = ()) -> tuple[str, str] | None:
    """(name, "m" or "f") when the page is about one person: a personal name or a person's class noun
    ("philosopher"), and the lead's pronouns of one gender only; when the lead has none and the title is
    a personal name, the sentences around (`context`) must use one gender three times as often as the
    other."""
    subject = page_subject(title, lead)
    person = is_personal_name(subject.name) or any(_is_person_noun(noun) for noun in subject.nouns)
    gender = subject.pronouns & {"m", "f"}
    if len(gender) == 2 and is_personal_name(subject.name):  # not "Astronaut": a kind of person
        said = words(" ".join(context).lower())
        counts = {c: sum(said.count(form) for form in _LEAD_PRONOUNS[c]) for c in ("m", "f")}
        gender = {c for c in counts if counts[c] > 0 and counts[c] >= 3 * counts["f" if c == "m" else "m"]}
    return (subject.name, next(iter(gender))) if person and len(gender) == 1 else None


_INITIAL_OR_SUFFIX = re.compile(r"[A-Z]\.|Jr\.?|Sr\.?|I{2,3}|IV")
_OPENING_CHARS = 300  # the lead's opening, where a birth or lifespan stands ("K. Nicole Mitchell (born")
_BORN = re.compile(r"\((?:[^()]*;\s*)?(?:born|b\.)\s|\([^()]*\b1\d{3}\s*[–-]\s*[^()]*\d{4}\s*\)")


def page_person_name(title: str, lead: str, context: Sequence[str] = ()) -> str | None:
    """The name of the page's person: `page_person`'s, or, when the lead's pronouns leave the gender
    open, the subject's name if the lead gives a birth ("(born 21 July 1968 ...)") or a lifespan, or if
    the name is a personal name once its initials and suffix are set aside ("K. Nicole Mitchell")."""
    person = page_person(title, lead, context)
    if person is not None:
        return person[0]
    name = page_subject(title, lead).name
    plain = " ".join(word for word in name.split() if not _INITIAL_OR_SUFFIX.fullmatch(word))
    if _BORN.search(lead[:_OPENING_CHARS]) or (plain != name and is_personal_name(plain)):
        return name
    return None


def page_of(title: str, lead: str) -> Page:
    """The page subject as the referent resolver takes it."""
    subject = page_subject(title, lead)
    return Page(subject.name, subject.nouns, subject.pronouns, lead)


@dataclass(frozen=True)
class Decontextualized:
    """A keypoint text, or the reject reason and a detail when the rules cannot make one."""

    text: str | None
    reason: str | None = None
    detail: str = ""


def _strip_connectives(text: str) -> str:
    while True:
        stripped = _CONNECTIVE.sub("", text, count=1)
        if stripped == text:
            return text
        text = stripped


def _first_word(text: str) -> str:
    match = re.match(r"[^\W\d_]+", text)
    return match.group(0) if match else ""


def _drop_also(text: str, subject_end: int) -> str:
    """ "Paris also has ..." -> "Paris has ...": the adverb only links to a previous sentence."""
    rest = text[subject_end:]
    trimmed = re.sub(r"^\s+(?:also|too|likewise|similarly|additionally)\b,?", "", rest, count=1, flags=re.I)
    return text[:subject_end] + trimmed


def _leading_reference(text: str, subject: Subject) -> tuple[Reference, int, bool] | None:
    """The leading pronoun or definite description ("It", "Their", "The company"), where it ends, and
    whether it is possessive; None when the text opens otherwise."""
    word = _first_word(text)
    lower = word.lower()
    if lower in _SUBJECT_PRONOUNS or lower in _POSSESSIVE_PRONOUNS:
        return Reference(word, PRONOUN_CLASSES[lower]), len(word), lower in _POSSESSIVE_PRONOUNS
    description = re.match(r"(the|this)\s+([a-z]+(?:-[a-z]+)*)('s|’s)?(?=([\s,]+)([^\s,]*))", text, re.I)
    if description is None:
        return None
    noun = description.group(2).lower()
    one = singular(noun)
    if noun not in subject.nouns:
        general = one in _DESCRIPTION_NOUNS and description.group(2).islower()
        if not general or _NAMED_AS.match(text, description.end(2)):
            return None  # "the Academy", "The territory now known as Albania"
    following = fold(description.group(5))
    possessive = description.group(3) is not None
    ends_phrase = (
        possessive
        or "," in description.group(4)
        or following in _VERBISH
        or following in IRREGULAR
        or (len(following) > 3 and following.endswith(("ed", "ly")))
        or (following.endswith("s") and not following.endswith(("ss", "us", "is")))
    )
    if not ends_phrase:
        return None
    reference = Reference(text[: description.end(2)], "d", one, one != noun)
    return reference, description.end(), possessive


def _page_only(subject: Subject, lead: str) -> Callable[[Reference], Resolution]:
    """The resolver without context: the page subject when it agrees (a segment opening the lead)."""
    page = Page(subject.name, subject.nouns, subject.pronouns, lead)
    candidate = Candidate(subject.name, True, None, False, "", page=True)

    def resolve(reference: Reference) -> Resolution:
        if agrees(reference, candidate, page):
            return Resolution(subject.name)
        detail = f"leading {reference.text!r} may not refer to {subject.name!r}, judging by the lead"
        return Resolution(None, detail)

    return resolve


def _resolve_subject(
    text: str, subject: Subject, resolve: Callable[[Reference], Resolution]
) -> tuple[str, bool, str]:
    """(text, resolved, detail): replace a leading pronoun or description with the name it means."""
    if text.casefold().startswith(subject.name.casefold()):
        return _drop_also(text, len(subject.name)), True, ""
    found = _leading_reference(text, subject)
    if found is None:
        return text, False, ""
    reference, end, possessive = found
    resolution = resolve(reference)
    if resolution.name is None:
        return text, False, resolution.detail
    name = resolution.name
    replacement = (f"{name}'" if name.endswith("s") else f"{name}'s") if possessive else name
    return _drop_also(replacement + text[end:], len(replacement)), True, ""


def _sentence_subject_is_page(
    sentence: str, subject: Subject, resolve: Callable[[Reference], Resolution]
) -> bool:
    """True when the sentence opens with the page subject, or a reference that means it."""
    body = _strip_connectives(clean(sentence))
    if body.casefold().startswith(subject.name.casefold()):
        return True
    found = _leading_reference(body, subject)
    return found is not None and resolve(found[0]).name == subject.name


def _finish(text: str) -> str:
    text = re.sub(r"(?:[\s,;:\-–—]|\b(?:and|or|but)\b)+$", "", text).strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and not re.search(r"[.!?][\"'”’)]?$", text):
        text += "."
    return text


_EXPLETIVE_IT = re.compile(
    r"^it\s+(?:is|was|has been|had been|will be|would be|became|seems|seemed|appears|appeared)\s+"
    r"(?:\w+\s+){0,3}?(?:that|to|whether|how|why|when)\b",
    re.I,
)
_NAME_IN_INTRO = re.compile(r"(?<!^)\b[A-Z][a-z]+")
_PRONOUNS = frozenset(_SUBJECT_PRONOUNS) | frozenset(_POSSESSIVE_PRONOUNS)
_CALENDAR = frozenset(
    name.lower() for name in (*calendar.month_name, *calendar.month_abbr, *calendar.day_name) if name
)


def _pronoun_lead(body: str) -> str:
    return _first_word(body).lower()


def _names_someone(intro: str, rest: str) -> bool:
    """The intro names someone a following pronoun can refer to ("After Ueshiba left Hokkaido, he")."""
    names = [m.group(0) for m in _NAME_IN_INTRO.finditer(intro) if m.group(0).lower() not in _CALENDAR]
    return bool(names) and _pronoun_lead(rest) in _PRONOUNS


def decontextualize(
    text: str,
    sentence: str,
    title: str,
    lead: str,
    resolve: Callable[[Reference], Resolution] | None = None,
) -> Decontextualized:
    """A self-contained statement from one segment of `sentence`, or why the rules cannot make one.

    A leading pronoun or description ("It", "the company") becomes the name `resolve` gives it
    (`referents.Resolver`: the subject of the sentence before, the heading, or the page subject when
    the text before is about it); without `resolve`, the page subject when it agrees (a segment opening
    the lead). No name means a reject, "unresolved_referent". A dummy "It is reported that ..." stays,
    and so does a pronoun after a name in the same sentence ("After Ueshiba left, he ...").
    """
    subject = page_subject(title, lead)
    resolve = resolve or _page_only(subject, lead)
    segment = clean(text)
    if _EXPLETIVE_IT.match(_strip_connectives(segment)):
        return Decontextualized(_finish(_strip_connectives(segment)))
    starts_sentence = fold(clean(sentence)).startswith(fold(segment)[:40])
    body = _strip_connectives(segment)
    if len(TOKEN.findall(body)) < 3:
        return Decontextualized(None, "too_short", f"fewer than three words: {segment!r}")
    body, resolved, detail = _resolve_subject(body, subject, resolve)
    if detail:
        return Decontextualized(None, "unresolved_referent", detail)
    intro = _INTRO.match(body)
    if not resolved and intro and _names_someone(body[: intro.end()], body[intro.end() :]):
        return Decontextualized(_finish(body))  # "After Ueshiba left Hokkaido, he ...": the name is there
    if not resolved and intro:
        # "In 2010, he moved ..." -> "In 2010, <name> moved ..."
        if _EXPLETIVE_IT.match(body[intro.end() :]):
            return Decontextualized(_finish(body))  # "In 2011, it was reported that ..."
        rest, resolved, detail = _resolve_subject(body[intro.end() :], subject, resolve)
        if resolved:
            body = body[: intro.end()] + (rest[0].lower() + rest[1:] if rest.startswith("The ") else rest)
        elif detail:
            return Decontextualized(None, "unresolved_referent", detail)
    first = _first_word(body).lower()
    if not resolved and first in _UNRESOLVED_STARTS:
        detail = f"starts with {_first_word(body)!r}, which the rules cannot resolve"
        return Decontextualized(None, "not_self_contained", detail)
    opens_noun_phrase = first in _DETERMINERS  # "and the society announced ...": its own subject
    if not resolved and not starts_sentence and body[:1].islower() and not opens_noun_phrase:
        # A continuation such as "and later moved to Lyon": lend it the sentence's subject if that
        # subject is the page and the fragment opens with a verb (an adverb, then a verb form).
        tokens = body.split()
        index = 0
        while index < len(tokens) - 1 and tokens[index].lower() in _ADVERBS:
            index += 1
        verb = tokens[index].lower().strip(",")
        verbal = verb in _VERBISH or verb in IRREGULAR or (len(verb) > 4 and verb.endswith("ed"))
        if not (verbal and _sentence_subject_is_page(sentence, subject, resolve)):
            return Decontextualized(None, "not_self_contained", f"fragment without its own subject: {body!r}")
        body = f"{subject.name} {' '.join(tokens[index:])}"
    return Decontextualized(_finish(body))

"""The offline backends of the keypoint and grounding stages: deterministic string rules, no model.

`decontextualize` turns a citing segment into a keypoint the way a careful copy editor with no parser
would: drop leading connectives, replace a leading pronoun or a leading "The <class noun>" that refers to
the page subject with the page title, complete a subjectless continuation fragment with the title, fix
capitals and the final stop, and refuse what still leans on context.

`support` scores how well a document backs a keypoint: the best window of a few consecutive sentences
is scored by content-word, entity, number and date overlap (formula at `support`).

Expected quality (what to expect from the offline path, not a benchmark):
- Keypoints: segments that are already self-contained, or open with the subject, a subject pronoun,
  an introductory phrase and a pronoun ("In 2010, he ...") or a "The company"-style description of the
  page subject, come out right. Pronouns resolve only to the page subject, and only when the lead's
  pronouns (or, in a lead without any, its class noun: person or thing) agree; so "He" in a section
  about a collaborator still becomes the title when the lead is about a man. Pronouns later in the
  sentence, references to other entities ("the album" in an article about a singer), "which"-fragments
  and omitted context ("the following year") are kept as they are or rejected as "not_self_contained".
  The description test looks only at the word after the noun, so some compounds slip through. Not
  measured on real pages yet; the LLM backend is the one to use for benchmarks.
- Grounding: lexical, so paraphrase with other words ("opened" / "inaugurated"), other languages and
  numbers written in a form `numbers` does not normalise (rounded, other units) score low, while a
  document that repeats the words but negates the claim can score high. A number or date of the
  keypoint that the best window lacks always costs its share of the score (all of it for the only
  number), so a changed figure is caught unless the same figure occurs nearby for something else.
  Use it for offline runs and tests; use the LLM backend for real benchmarks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

# --- text helpers -----------------------------------------------------------------------------------

_SPACES = re.compile(r"\s+")
_CITATION_MARK = re.compile(r"\[(?:\d+|[a-z]|note \d+|citation needed|clarification needed)\]", re.I)
_LETTERS = re.compile(r"[^\W\d_]+")

STOPWORDS = frozenset(
    """a about above after again against all also although am among an and another any are around as at
    be became because been before being below between both but by can could did do does doing done down
    during each either else even ever every few for from further had has have having he her here hers
    herself him himself his how however i if in into is it its itself just least less many may me might
    more most much must my myself near neither no nor not now of off often on once one only onto or other
    others our ours ourselves out over own per rather same several she should since so some such than
    that the their theirs them themselves then there these they this those though through thus to too
    toward towards under until up upon us very via was we were what when where whereas whether which
    while who whom whose why will with within without would yet you your yours""".split()
)

_IRREGULAR = {
    "began": "begin", "begun": "begin", "became": "become", "bought": "buy", "brought": "bring",
    "built": "build", "children": "child", "chose": "choose", "chosen": "choose", "drew": "draw",
    "drawn": "draw", "fell": "fall", "fallen": "fall", "gave": "give", "given": "give", "grew": "grow",
    "grown": "grow", "held": "hold", "led": "lead", "made": "make", "men": "man", "met": "meet",
    "paid": "pay", "ran": "run", "rose": "rise", "risen": "rise", "said": "say", "sang": "sing",
    "sold": "sell", "spent": "spend", "spoke": "speak", "spoken": "speak", "sung": "sing",
    "taken": "take", "taught": "teach", "told": "tell", "took": "take", "went": "go", "women": "woman",
    "won": "win", "wrote": "write", "written": "write",
}  # fmt: skip
_VOWEL = re.compile(r"[aeiouy]")


def clean(text: str) -> str:
    """The text without citation marks, with single spaces, stripped."""
    return _SPACES.sub(" ", _CITATION_MARK.sub("", text)).strip()


def fold(text: str) -> str:
    """Lowercase without accents ("Zürich" -> "zurich"), so spellings compare equal."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _undouble(base: str) -> str:
    if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
        return base[:-1]
    return base


def stem(word: str) -> str:
    """A light suffix stemmer (plural, -ed, -ing, final e) for matching inflected forms; not linguistics."""
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ing") and len(word) >= 5 and _VOWEL.search(word[:-3]):
        word = _undouble(word[:-3])
    elif word.endswith("ed") and len(word) > 4 and _VOWEL.search(word[:-2]):
        word = _undouble(word[:-2])
    elif word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """The folded letter-only words of a text, in order."""
    return _LETTERS.findall(fold(text))


# --- keypoints: decontextualisation -----------------------------------------------------------------

# Connectives that only make sense after another sentence; the first group needs a comma after it
# ("In addition, ..." but not "In addition to ..."), the second may be followed by a plain space.
_COMMA_CONNECTIVES = (
    "according to the same source", "afterwards", "as a result", "at the same time", "besides",
    "by contrast", "consequently", "eventually", "finally", "for example", "for instance", "hence",
    "in addition", "in contrast", "in fact", "in particular", "in turn", "indeed", "instead", "later",
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
_NOUN = re.compile(r"[a-z]+(?:-[a-z]+)*")
_ADVERBS = frozenset("also later then subsequently eventually again still currently previously now".split())
_LEAD_STOP = re.compile(
    r"[,;:()]|\b(?:that|which|who|whose|where|when|in|of|on|at|by|for|from|with|to|since|as|near|"
    r"between|under|over|about|after|before|during|located|based|known|founded|born)\b"
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
    for token in phrase.split():
        participle = token in _PARTICIPLES or (len(token) > 4 and token.endswith(("ing", "ed")))
        if token.islower() and participle:
            break  # "a bridge spanning ...", "a company headquartered ...", "a film written by ..."
        kept.append(token)
    while kept and kept[-1].lower() in ("and", "or"):
        kept.pop()
    nouns: set[str] = set()
    for part in re.split(r"\s+(?:and|or)\s+", " ".join(kept)):
        tokens = part.split()
        if tokens and _NOUN.fullmatch(tokens[-1]):
            noun = tokens[-1]
            nouns |= {noun, noun.rsplit("-", 1)[-1]}  # "singer-songwriter" -> also "songwriter"
            if noun.endswith("ies"):
                nouns.add(noun[:-3] + "y")
            elif noun.endswith("s") and not noun.endswith("ss"):
                nouns.add(noun[:-1])
    return nouns


def _is_person_noun(noun: str) -> bool:
    return noun in _PERSON_NOUNS or noun.endswith(_PERSON_SUFFIXES)


def page_subject(title: str, lead: str) -> Subject:
    """The page subject from its title and lead paragraph."""
    name = clean(title)
    nouns = _class_nouns(clean(lead))
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
    return Subject(name=name, nouns=frozenset(nouns), pronouns=frozenset(classes))


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


def _resolve_subject(text: str, subject: Subject) -> tuple[str, bool, str]:
    """(text, resolved, detail): replace a leading pronoun or class description with the page name."""
    if text.casefold().startswith(subject.name.casefold()):
        return _drop_also(text, len(subject.name)), True, ""
    word = _first_word(text)
    lower = word.lower()
    after = text[len(word) :]
    if lower in _SUBJECT_PRONOUNS or lower in _POSSESSIVE_PRONOUNS:
        possessive = lower in _POSSESSIVE_PRONOUNS
        pronoun_class = (_POSSESSIVE_PRONOUNS if possessive else _SUBJECT_PRONOUNS)[lower]
        if pronoun_class not in subject.pronouns:
            detail = f"leading {word!r} may not refer to {subject.name!r}, judging by the lead"
            return text, False, detail
        replacement = subject.possessive if possessive else subject.name
        return _drop_also(replacement + after, len(replacement)), True, ""
    description = re.match(r"(the|this)\s+([a-z]+(?:-[a-z]+)*)('s|’s)?(?=([\s,]+)([^\s,]*))", text, re.I)
    if description and description.group(2).lower() in subject.nouns:
        following = fold(description.group(5))
        possessive = description.group(3) is not None
        ends_phrase = (
            possessive
            or "," in description.group(4)
            or following in _VERBISH
            or following in _IRREGULAR
            or (len(following) > 3 and following.endswith(("ed", "ly")))
            or (following.endswith("s") and not following.endswith(("ss", "us", "is")))
        )
        if ends_phrase:
            replacement = subject.possessive if possessive else subject.name
            resolved = replacement + text[description.end() :]
            return _drop_also(resolved, len(replacement)), True, ""
    return text, False, ""


def _sentence_subject_is_page(sentence: str, subject: Subject) -> bool:
    """True when the sentence opens with the page subject, a pronoun for it or a description of it."""
    _, resolved, _ = _resolve_subject(_strip_connectives(clean(sentence)), subject)
    return resolved


def _finish(text: str) -> str:
    text = re.sub(r"(?:[\s,;:\-–—]|\b(?:and|or|but)\b)+$", "", text).strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and not re.search(r"[.!?][\"'”’)]?$", text):
        text += "."
    return text


def decontextualize(text: str, sentence: str, title: str, lead: str) -> Decontextualized:
    """A self-contained statement from one segment of `sentence`, or why the rules cannot make one."""
    subject = page_subject(title, lead)
    segment = clean(text)
    starts_sentence = fold(clean(sentence)).startswith(fold(segment)[:40])
    body = _strip_connectives(segment)
    if len(_TOKEN.findall(body)) < 3:
        return Decontextualized(None, "too_short", f"fewer than three words: {segment!r}")
    body, resolved, detail = _resolve_subject(body, subject)
    intro = _INTRO.match(body)
    if not resolved and not detail and intro:
        # "In 2010, he moved ..." -> "In 2010, <Title> moved ..."
        rest, resolved, detail = _resolve_subject(body[intro.end() :], subject)
        if resolved:
            body = body[: intro.end()] + (rest[0].lower() + rest[1:] if rest.startswith("The ") else rest)
        elif detail:
            return Decontextualized(None, "not_self_contained", detail)
    first = _first_word(body).lower()
    if not resolved and first in _UNRESOLVED_STARTS:
        detail = detail or f"starts with {_first_word(body)!r}, which the rules cannot resolve"
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
        verbal = verb in _VERBISH or verb in _IRREGULAR or (len(verb) > 4 and verb.endswith("ed"))
        if not (verbal and _sentence_subject_is_page(sentence, subject)):
            return Decontextualized(None, "not_self_contained", f"fragment without its own subject: {body!r}")
        body = f"{subject.name} {' '.join(tokens[index:])}"
    return Decontextualized(_finish(body))


# --- grounding: lexical, entity, number and date support --------------------------------------------

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7, "august": 8,
    "september": 9, "october": 10, "november": 11, "december": 12, "jan": 1, "feb": 2, "mar": 3,
    "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>[12]\d{3})"
_DATE_PATTERNS = [
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_YEAR}-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b"),
    re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b", re.I),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH}\b", re.I),
    re.compile(rf"\b{_MONTH}\s+{_DAY}\b(?!\d)", re.I),
]
_NUMBER_WORDS = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_NUMBER = re.compile(
    r"(?<![\w.,])(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<fraction>\d+))?"
    r"|\b(?P<word>" + "|".join(_NUMBER_WORDS) + r")\b",
    re.I,
)
_SCALE = re.compile(r"\s*(?P<scale>" + "|".join(_SCALES) + r")\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])|\n\s*\n|\n(?=\s*[-*•])")
_TOKEN = re.compile(r"[^\W_]+")
_ENTITY_JOINERS = frozenset("of de la le du del der van von da di for".split())
_WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
_NON_ENTITIES = STOPWORDS | set(_MONTHS) | _WEEKDAYS
_JOINING_GAPS = ("", "-", "'", "’")  # what may stand between two words of one name
MAX_SENTENCE_WORDS = 60  # longer runs (lists, tables flattened to text) are cut into pieces this long


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def numbers(text: str) -> dict[str, str]:
    """Canonical number -> how it was written: "1,200" and "1200" -> "1200"; "1.2 million" -> "1200000"."""
    found: dict[str, str] = {}
    for match in _NUMBER.finditer(text):
        if match.group("word"):
            value = Decimal(_NUMBER_WORDS[match.group("word").lower()])
        else:
            raw = match.group("digits").replace(",", "")
            if match.group("fraction"):
                raw += "." + match.group("fraction")
            try:
                value = Decimal(raw)
            except InvalidOperation:
                continue
        end = match.end()
        scale = _SCALE.match(text, end)
        if scale:
            value *= _SCALES[scale.group("scale").lower()]
            end = scale.end()
        found.setdefault(_canonical(value), text[match.start() : end])
    return found


def dates(text: str) -> tuple[dict[tuple[int, ...], str], str]:
    """(date key -> as written, the text with dates blanked); keys are (y, m, d), (y, m) or (0, m, d)."""
    found: dict[tuple[int, ...], str] = {}
    chars = list(text)
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer("".join(chars)):
            parts = match.groupdict()
            month_text = parts["month"].lower()
            month = int(month_text) if month_text.isdigit() else _MONTHS[month_text]
            day = int(parts["day"]) if parts.get("day") else None
            year = int(parts["year"]) if parts.get("year") else 0
            if not 1 <= month <= 12 or (day is not None and not 1 <= day <= 31):
                continue
            key = (year, month, day) if day is not None else (year, month)
            found.setdefault(key, match.group(0))
            chars[match.start() : match.end()] = " " * (match.end() - match.start())
    return found, "".join(chars)


def _date_keys(key: tuple[int, ...]) -> set[tuple[int, ...]]:
    """A date and the coarser dates it implies: (1937, 5, 28) -> also (1937, 5) and (0, 5, 28)."""
    keys = {key}
    if len(key) == 3 and key[0]:
        keys |= {(key[0], key[1]), (0, key[1], key[2])}
    return keys


def split_sentences(text: str) -> list[str]:
    """Sentences of a document (punctuation and blank lines), long runs cut at MAX_SENTENCE_WORDS words."""
    sentences: list[str] = []
    for piece in _SENTENCE_END.split(text):
        tokens = piece.split()
        for start in range(0, len(tokens), MAX_SENTENCE_WORDS):
            sentences.append(" ".join(tokens[start : start + MAX_SENTENCE_WORDS]))
    return sentences


def entities(text: str) -> dict[tuple[str, ...], str]:
    """Capitalised spans ("Golden Gate Bridge", "University of Oxford"): folded token tuple -> as written.

    A one-word span at the very start of the text is skipped: there a capital marks the sentence, not
    a name ("Construction began ..."); the word still counts as a content word.
    """
    groups: list[tuple[list[str], int]] = []  # (tokens, index of the first token)
    current: list[str] = []
    pending: list[str] = []  # a joiner ("of") waiting for the next capitalised word
    first = 0
    previous_end: int | None = None
    for index, match in enumerate(_TOKEN.finditer(text)):
        token = match.group(0)
        joined = previous_end is not None and text[previous_end : match.start()].strip() in _JOINING_GAPS
        previous_end = match.end()
        if current and (not joined or not (token[0].isupper() or token.lower() in _ENTITY_JOINERS)):
            groups.append((current, first))
            current, pending = [], []
        if token[0].isupper():
            if not current:
                first = index
            current += [*pending, token]
            pending = []
        elif current and not pending and token.lower() in _ENTITY_JOINERS:
            pending = [token]
    if current:
        groups.append((current, first))
    spans: dict[tuple[str, ...], str] = {}
    for tokens, start in groups:
        if start == 0 and len(tokens) == 1:
            continue
        while tokens and fold(tokens[0]) in _NON_ENTITIES:
            tokens = tokens[1:]
        span = tuple(fold(token) for token in tokens)
        if span and not all(token in _NON_ENTITIES or token.isdigit() for token in span):
            spans.setdefault(span, " ".join(tokens))
    return spans


@dataclass
class _Unit:
    """What one sentence (or the document title) holds, precomputed once per document."""

    tokens: list[str]
    token_set: set[str]
    stems: set[str]
    numbers: set[str]
    dates: set[tuple[int, ...]]


def _unit(text: str) -> _Unit:
    tokens = [fold(token) for token in _TOKEN.findall(text)]
    found_dates, _ = dates(text)
    date_keys: set[tuple[int, ...]] = set()
    for key in found_dates:
        date_keys |= _date_keys(key)
    return _Unit(
        tokens=tokens,
        token_set=set(tokens),
        stems={stem(word) for word in words(text)},
        numbers=set(numbers(text)),
        dates=date_keys,
    )


def _has_phrase(tokens: list[str], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    first = phrase[0]
    return any(tokens[i : i + size] == list(phrase) for i, token in enumerate(tokens) if token == first)


@dataclass
class Support:
    """How well a document supports a keypoint, with the best window and what it lacked."""

    score: float
    supported: bool
    reason: str
    window: tuple[int, int] = (0, 0)  # sentence indices [start, end) of the best window
    missing_words: list[str] = field(default_factory=list)
    missing_entities: list[str] = field(default_factory=list)
    missing_numbers: list[str] = field(default_factory=list)
    missing_dates: list[str] = field(default_factory=list)


ENTITY_WEIGHT = 2.0  # an entity counts as much as two content words


def support(
    keypoint: str,
    document: str,
    *,
    title: str = "",
    window: int = 3,
    threshold: float = 0.6,
    sentences: list[str] | None = None,
) -> Support:
    """Score the best window of `window` consecutive sentences against the keypoint.

    coverage = (words found + ENTITY_WEIGHT * entity credit) / (words + ENTITY_WEIGHT * entities), where
    words are the keypoint's stemmed content words (stopwords and numbers removed) and an entity's
    credit is 1 if its capitalised span occurs verbatim in the window, else half the share of its
    tokens that occur; quantities = share of the keypoint's numbers and dates found in the window
    (1 when it has none); score = coverage * quantities, so one wrong number out of one gives 0.
    The document title counts as part of every window. supported = score >= threshold.
    """
    keypoint = clean(keypoint)
    key_dates, undated = dates(keypoint)
    key_numbers = numbers(undated)
    key_entities = entities(undated)
    surface: dict[str, str] = {}
    for word in words(re.sub(r"\d", " ", undated)):
        if word not in STOPWORDS and len(word) > 1:
            surface.setdefault(stem(word), word)
    if not surface and not key_entities and not key_numbers and not key_dates:
        return Support(0.0, False, "the keypoint has no content words, names, numbers or dates")

    units = [_unit(s) for s in (sentences if sentences is not None else split_sentences(document))]
    title_unit = _unit(title)
    word_hits = {s: [s in u.stems for u in units] for s in surface}
    number_hits = {n: [n in u.numbers for u in units] for n in key_numbers}
    date_hits = {d: [d in u.dates for u in units] for d in key_dates}
    phrase_hits = {e: [_has_phrase(u.tokens, e) for u in units] for e in key_entities}
    token_hits = {t: [t in u.token_set for u in units] for e in key_entities for t in e}
    total = len(surface) + ENTITY_WEIGHT * len(key_entities)
    quantities = len(key_numbers) + len(key_dates)

    best: tuple[float, float] = (-1.0, -1.0)  # (score, coverage): among equal scores, the best-covered window
    best_start, best_lost = 0, {}
    for start in range(max(1, len(units) - window + 1)):
        stop = start + window
        found_words = [s for s in surface if s in title_unit.stems or any(word_hits[s][start:stop])]
        credit = 0.0
        lost_entities = []
        for entity in key_entities:
            if _has_phrase(title_unit.tokens, entity) or any(phrase_hits[entity][start:stop]):
                credit += 1.0
                continue
            content = [t for t in entity if t not in _ENTITY_JOINERS] or list(entity)
            share = sum(t in title_unit.token_set or any(token_hits[t][start:stop]) for t in content)
            credit += 0.5 * share / len(content)
            lost_entities.append(entity)
        lost_numbers = [
            n for n in key_numbers if n not in title_unit.numbers and not any(number_hits[n][start:stop])
        ]
        lost_dates = [d for d in key_dates if d not in title_unit.dates and not any(date_hits[d][start:stop])]
        coverage = (len(found_words) + ENTITY_WEIGHT * credit) / total if total else 1.0
        kept = quantities - len(lost_numbers) - len(lost_dates)
        score = coverage * (kept / quantities if quantities else 1.0)
        rank = (round(score, 9), round(coverage, 9))
        if rank > best:
            best, best_start = rank, start
            best_lost = {
                "words": [surface[s] for s in surface if s not in found_words],
                "entities": [key_entities[e] for e in lost_entities],
                "numbers": [key_numbers[n] for n in lost_numbers],
                "dates": [key_dates[d] for d in lost_dates],
            }
    start, lost = best_start, best_lost
    score = round(min(1.0, max(0.0, best[0])), 4)
    supported = score >= threshold
    end = min(start + window, len(units))
    parts = [
        f"score {score:.2f} {'>=' if supported else '<'} threshold {threshold:.2f}",
        f"best window: sentences {start + 1}-{max(end, start + 1)} of {len(units)}",
    ]
    for label in ("numbers", "dates", "entities", "words"):
        if lost[label]:
            parts.append(f"missing {label}: " + ", ".join(lost[label]))
    if not any(lost.values()):
        parts.append("everything matched")
    return Support(
        score=score,
        supported=supported,
        reason="; ".join(parts),
        window=(start, end),
        missing_words=lost["words"],
        missing_entities=lost["entities"],
        missing_numbers=lost["numbers"],
        missing_dates=lost["dates"],
    )


def excerpt(document: str, keypoint: str, max_chars: int, *, title: str = "") -> str:
    """The document if it fits in `max_chars`, else the sentences around its best one, gaps as "[...]"."""
    if len(document) <= max_chars:
        return document
    sentences = split_sentences(document)
    start, _ = support(keypoint, document, title=title, window=1, sentences=sentences).window
    end = start + 1
    size = len(sentences[start]) if sentences else 0
    grown = True
    while grown:
        grown = False
        if end < len(sentences) and size + len(sentences[end]) + 1 <= max_chars:
            size += len(sentences[end]) + 1
            end += 1
            grown = True
        if start > 0 and size + len(sentences[start - 1]) + 1 <= max_chars:
            start -= 1
            size += len(sentences[start]) + 1
            grown = True
    text = " ".join(sentences[start:end])
    cut = len(text) > max_chars or end < len(sentences)
    return ("[...] " if start > 0 else "") + text[:max_chars] + (" [...]" if cut else "")

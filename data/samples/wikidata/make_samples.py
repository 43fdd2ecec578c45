"""Write the sample Wikidata JSON dumps: an older `wikidata-old.json.gz` and a newer `wikidata-new.json.bz2`.

The world is invented for irbgen: six countries with their regions and cities, people, films, books,
universities, companies and awards, plus the Vellshire subjects of `data/samples/wiki` (same names and
enwiki titles, so that sample's articles link to these items). Item ids start at Q9000001 (items new in
the newer dump get the highest ids); properties reuse real Wikidata property ids and are described by
property entities in both dumps. Run `python data/samples/wikidata/make_samples.py`: the output is
byte-identical on every run (one seeded random.Random, gzip mtime 0, bz2 has no timestamp).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import random
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 20250217
OLD, NEW = "old", "new"
BOTH = (OLD, NEW)
MODIFIED = {OLD: "2021-11-03T08:12:45Z", NEW: "2025-02-17T14:30:09Z"}
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
JULIAN = "http://www.wikidata.org/entity/Q1985786"
EARTH = "http://www.wikidata.org/entity/Q2"
FIRST_Q = 9000001


def rows(table: str) -> list[list[str]]:
    """The cells of a "|"-separated table; blank lines and "#" lines are skipped."""
    lines = [line.strip() for line in table.strip().splitlines()]
    return [[cell.strip() for cell in line.split("|")] for line in lines if line and not line.startswith("#")]


# fmt: off
PROPERTIES = rows("""
P6    | wikibase-item    | head of government | head of the executive of a town, city or country
P17   | wikibase-item    | country | sovereign state this item is in
P18   | commonsMedia     | image | picture of the subject
P19   | wikibase-item    | place of birth | most specific known place a person was born in
P20   | wikibase-item    | place of death | most specific known place a person died in
P27   | wikibase-item    | country of citizenship | country that recognises the subject as its citizen
P31   | wikibase-item    | instance of | class of which the subject is an example
P36   | wikibase-item    | capital | seat of government of a country or region
P37   | wikibase-item    | official language | language designated as official
P38   | wikibase-item    | currency | currency used in the subject
P50   | wikibase-item    | author | main creator of a written work
P57   | wikibase-item    | director | director of a film
P69   | wikibase-item    | educated at | school or university the subject attended
P106  | wikibase-item    | occupation | occupation of a person
P108  | wikibase-item    | employer | organisation the subject works or worked for
P112  | wikibase-item    | founded by | founder or co-founder of an organisation
P123  | wikibase-item    | publisher | organisation that published the work
P131  | wikibase-item    | located in the administrative territorial entity | area it lies in
P136  | wikibase-item    | genre | genre of a creative work
P159  | wikibase-item    | headquarters location | city where an organisation has its head office
P161  | wikibase-item    | cast member | actor in a production
P166  | wikibase-item    | award received | award or honour given to the subject
P169  | wikibase-item    | chief executive officer | highest-ranking executive of a company
P177  | wikibase-item    | crosses | obstacle a bridge passes over
P206  | wikibase-item    | located in or next to body of water | sea, lake or river a place lies on
P214  | external-id      | VIAF ID | identifier in the Virtual International Authority File
P291  | wikibase-item    | place of publication | place where a work was published or released
P297  | external-id      | ISO 3166-1 alpha-2 code | two-letter country code
P345  | external-id      | IMDb ID | identifier in the Internet Movie Database
P403  | wikibase-item    | mouth of the watercourse | body of water a river flows into
P407  | wikibase-item    | language of work or name | language a work is written in
P495  | wikibase-item    | country of origin | country a creative work comes from
P569  | time             | date of birth | date the subject was born
P570  | time             | date of death | date the subject died
P571  | time             | inception | date the subject began to exist
P577  | time             | publication date | date a work was first published or released
P580  | time             | start time | date a statement starts being true
P582  | time             | end time | date a statement stops being true
P585  | time             | point in time | date at which a statement was true
P625  | globe-coordinate | coordinate location | latitude and longitude of the subject
P631  | wikibase-item    | structural engineer | person responsible for a structure's engineering
P813  | time             | retrieved | date a source was consulted
P854  | url              | reference URL | web address of a source
P856  | url              | official website | address of the subject's own website
P1027 | wikibase-item    | conferred by | person or organisation that grants an award
P1082 | quantity         | population | number of people living in a place
P1128 | quantity         | employees | number of people an organisation employs
P1448 | monolingualtext  | official name | official name in an official language
P1476 | monolingualtext  | title | published title of a work
P1619 | time             | date of official opening | date a building or structure opened
P1686 | wikibase-item    | for work | work an award was given for
P2044 | quantity         | elevation above sea level | height above sea level
P2046 | quantity         | area | surface area
P2047 | quantity         | duration | running time
P2142 | quantity         | box office | takings of a film
P2241 | wikibase-item    | reason for deprecated rank | why a statement is deprecated
P2534 | math             | defining formula | formula that states a law or relation
P4633 | string           | name of the character role | name of the character an actor plays
""")
PROPERTY_ALIASES = {"P31": ["is a", "type"], "P57": ["directed by"], "P569": ["born on", "birth date"],
                    "P1082": ["inhabitants"], "P159": ["HQ", "based in"], "P6": ["mayor", "prime minister"]}

SITES = """
enwiki dewiki frwiki eswiki itwiki nlwiki plwiki ptwiki ruwiki jawiki zhwiki svwiki ukwiki cawiki nowiki
fiwiki cswiki huwiki kowiki fawiki idwiki trwiki arwiki rowiki srwiki bgwiki dawiki hewiki eowiki ltwiki
skwiki slwiki etwiki hrwiki elwiki mswiki viwiki glwiki euwiki hiwiki thwiki lawiki nnwiki azwiki bewiki
kkwiki kawiki hywiki cywiki gawiki iswiki lvwiki mkwiki sqwiki tawiki tewiki bnwiki urwiki afwiki
commonswiki
""".split()
FIRST_NAMES = """
Anna Bram Celia Dorian Elske Fenna Gideon Halla Ivo Jorun Kasimir Lene Matthis Nadia Oskar Petra Quirin Runa
Stellan Tilde Ulric Vera Wendel Ysolde Aurel Britt Casper Dagny Emrik Frida Gustav Hedda Isak Juno Kjell Liv
Magnus Nell Orla Pim Rasmus Saga Teodor Una Viggo Wilma Alvar Brisa Corin Delphine
""".split()
SURNAMES = """
Aldane Brevik Castell Dunmore Eskild Farrow Galen Hartwell Ingram Jessup Kallas Lindqvist Morrow Norland
Oakes Pellar Quist Rennick Salvesen Thorne Ullman Varga Wendt Yarrow Zeller Abernathy Bellamy Corvo Dahlberg
Elmsworth Fairweather Grieve Holloway Isaksen Juvell Kerrigan Lysander Marchetti Nyberg Orsini Penhale
Raskin Sorrell Tavener Umbra Valdez Whitlow Ashgrove Brunel Coldwell
""".split()
TITLE_ADJ = "Glass Silent Northern Crimson Hollow Paper Iron Winter Quiet Burning Salt Amber Broken".split()
TITLE_ADJ += "Distant Golden Last Narrow Pale Secret Wild".split()
TITLE_NOUN = "Orchard Harbour Lantern Meridian Tide Garden Season Kingdom Archive Shore Signal".split()
TITLE_NOUN += "Station Valley Voyage Witness Horizon Summer Crossing Choir Lighthouse".split()

CLASSES = rows("""
human              | human               | 60 | common name of Homo sapiens
country            | country             | 60 | distinct territorial body or political entity
region             | region              | 34 | first-level administrative division of a country
city               | city                | 60 | large human settlement
town               | town                | 55 | settlement larger than a village and smaller than a city
village            | village             | 52 | small clustered human settlement
film               | film                | 60 | sequence of images that give the impression of movement
literary_work      | literary work       | 45 | creative work of literature
university         | university          | 60 | institution of higher education
business           | business            | 57 | organisation engaged in commercial activities
publisher          | publishing house    | 44 | company that publishes books
organization       | organization        | 58 | social entity established to pursue a goal
award              | award               | 50 | something given in recognition of an achievement
river              | river               | 60 | natural flowing watercourse
lake               | lake                | 60 | body of relatively still water
sea                | sea                 | 60 | large body of salt water
bridge             | bridge              | 60 | structure that spans an obstacle
observatory        | observatory         | 48 | place for observing celestial events
festival           | festival            | 50 | organised series of performances or shows
heritage_railway   | heritage railway    | 30 | railway operated as living history
bay                | bay                 | 55 | recessed coastal body of water
equation           | equation            | 50 | mathematical statement that two expressions are equal
language           | language            | 60 | system of communication
currency           | currency            | 58 | generally accepted medium of exchange
occupation         | occupation          | 40 | activity a person is known for
film_genre         | film genre          | 36 | category of films
unit               | unit of measurement | 52 | standard quantity of a physical property
deprecation_reason | deprecation reason  | 0  | reason for deprecating a statement
""")
OCCUPATIONS = rows("""
film_director | film director       | person who directs films
actor         | actor               | person who acts in a production
novelist      | novelist            | writer of novels
politician    | politician          | person involved in politics
physicist     | physicist           | scientist who studies physics
chemist       | chemist             | scientist who studies chemistry
astronomer    | astronomer          | scientist who studies celestial bodies
economist     | economist           | scientist who studies economies
engineer      | structural engineer | engineer who designs load-bearing structures
entrepreneur  | entrepreneur        | person who starts a business
historian     | historian           | person who writes about the past
""")
GENRES = ["drama film", "comedy film", "documentary film", "thriller film", "science fiction film",
          "animated film", "historical film"]
# founded: year/precision/calendar (J: Julian); "-" for none
COUNTRIES = rows("""
# key     | label     | ISO | demonym     | lang | currency        | capital     | founded    | km2
aldermark | Aldermark | AK  | Aldish      | nl   | Aldermark crown | kessenburg  | 1541/9/J   | 41250.6
corvenna  | Corvenna  | CV  | Corvennese  | it   | Corvennan lira  | portavelle  | 1861-03-17 | 58904.2
estmarch  | Estmarch  | EM  | Estmarchian | de   | Estmarch mark   | brennholt   | 1949-05-23 | 77310
halvoria  | Halvoria  | HV  | Halvorian   | fr   | Halvorian franc | saint_orbel | 1792-09    | 49880.5
lisvaro   | Lisvaro   | LV  | Lisvaran    | pt   | Lisvaran real   | porto_serra | 1910-10-05 | 31007.9
sundria   | Sundria   | SD  | Sundrian    | sv   | Sundrian krona  | halmstrand  | 1523/9/J   | 88416.3
""")
COUNTRY_FACTS = rows("""
# key     | official name (en)           | official name (native)  | lat, lon     | people 2015, 2023
aldermark | Kingdom of Aldermark         | Koninkrijk Aldermark    | 54.21, -3.12 | 6412000, 6588000
corvenna  | Republic of Corvenna         | Repubblica di Corvenna  | 41.38, 14.05 | 9870500, -
estmarch  | Federal Republic of Estmarch | Bundesrepublik Estmarch | 51.77, 12.43 | 12203000, 12351400
halvoria  | Republic of Halvoria         | République de Halvorie  | 46.55, 3.87  | 7105300, -
lisvaro   | Lisvaran Republic            | República Lisvarana     | 39.62, -8.24 | 4030900, 4102650
sundria   | Kingdom of Sundria           | -                       | 60.12, 16.35 | 5540200, 5690100
""")
REGIONS = rows("""
# key               | label               | country   | capital
kessen              | Kessen              | aldermark | kessenburg
vellshire           | Vellshire           | aldermark | vellmouth
harrowdale          | Harrowdale          | aldermark | northmere
portavellano        | Portavellano        | corvenna  | portavelle
montegrano_province | Montegrano Province | corvenna  | montegrano
brennholt_land      | Brennholt-Land      | estmarch  | brennholt
falkenmark          | Falkenmark          | estmarch  | falkenried
orbelais            | Orbelais            | halvoria  | saint_orbel
valcourtois         | Valcourtois         | halvoria  | valcourt
serrano             | Serrano             | lisvaro   | porto_serra
castelinho_district | Castelinho District | lisvaro   | castelinho
halmland            | Halmland            | sundria   | halmstrand
torsdal             | Torsdal             | sundria   | torsvik
""")
CITIES_TABLE = rows("""
# region            | key         | label       | kind    | lat, lon         | people  | m   | founded
kessen              | kessenburg  | Kessenburg  | city    | 54.31, -3.02     | 1182400 | 24  | 1187/9/J
kessen              | lindhaven   | Lindhaven   | city    | 54.05, -2.81     | 96310   | 8   | 1302/7/J
vellshire           | vellmouth   | Vellmouth   | town    | 53.9125, -3.4471 | 17900   | 6   | 1340/7/J
vellshire           | tarnby      | Tarnby      | village | 53.991, -3.305   | 1150    | 143 | -
vellshire           | skarra      | Skarra      | village | 53.861, -3.702   | 640     | 12  | -
harrowdale          | northmere   | Northmere   | city    | 54.68, -3.38     | 212800  | 57  | 1190/9/J
harrowdale          | ashcombe    | Ashcombe    | town    | 54.52, -3.61     | 24150   | 88  | -
portavellano        | portavelle  | Portavelle  | city    | 41.12, 14.41     | 1604000 | 31  | -350/9/J
portavellano        | san_lirio   | San Lirio   | city    | 41.02, 14.77     | 148900  | 215 | 1120/7/J
montegrano_province | montegrano  | Montegrano  | city    | 41.86, 13.62     | 402300  | 486 | 880/7/J
montegrano_province | calvetta    | Calvetta    | town    | 41.71, 13.95     | 27400   | 612 | -
brennholt_land      | brennholt   | Brennholt   | city    | 51.96, 12.18     | 1921500 | 61  | 1237/9/J
brennholt_land      | luderstedt  | Luderstedt  | city    | 52.14, 12.67     | 183600  | 44  | 1215/9/J
falkenmark          | falkenried  | Falkenried  | city    | 51.33, 11.92     | 311700  | 122 | 1156/9/J
falkenmark          | wendmark    | Wendmark    | town    | 51.48, 11.61     | 19850   | -4  | -
orbelais            | saint_orbel | Saint-Orbel | city    | 46.81, 3.52      | 1377900 | 92  | -52/9/J
orbelais            | lunesse     | Lunesse     | city    | 46.42, 3.21      | 121050  | 174 | 1050/7/J
valcourtois         | valcourt    | Valcourt    | city    | 45.98, 4.33      | 254400  | 238 | 1260/9/J
valcourtois         | miremont    | Miremont    | town    | 46.07, 4.71      | 31600   | 402 | -
serrano             | porto_serra | Porto Serra | city    | 39.41, -8.87     | 842700  | 18  | 1147/9/J
serrano             | alvedra     | Alvedra     | town    | 39.57, -8.49     | 22900   | 131 | -
castelinho_district | castelinho  | Castelinho  | city    | 40.01, -7.93     | 133800  | 355 | 1212/9/J
castelinho_district | mirandel    | Mirandel    | town    | 39.88, -7.66     | 15300   | 420 | -
halmland            | halmstrand  | Halmstrand  | city    | 59.91, 16.92     | 938500  | 14  | 1252/9/J
halmland            | ekshamn     | Ekshamn     | town    | 59.67, 17.48     | 26700   | 9   | -
torsdal             | torsvik     | Torsvik     | city    | 61.02, 15.11     | 172400  | 66  | 1340/9/J
torsdal             | lindeborg   | Lindeborg   | town    | 60.57, 15.73     | 34900   | 104 | -
""")
UNIVERSITIES = rows("""
# key         | label                              | city        | founded
u_northmere   | University of Northmere            | northmere   | 1894
u_kessenburg  | University of Kessenburg           | kessenburg  | 1602/9/J
u_portavelle  | University of Portavelle           | portavelle  | 1288/7/J
u_brennholt   | Brennholt Technical University     | brennholt   | 1871
u_saint_orbel | University of Saint-Orbel          | saint_orbel | 1410/9/J
u_porto_serra | University of Porto Serra          | porto_serra | 1559
u_halmstrand  | Royal University of Halmstrand     | halmstrand  | 1666
u_falkenried  | Falkenried Institute of Technology | falkenried  | 1958-10-01
""")
COMPANIES = rows("""
# key             | label                              | kind         | city        | founded | staff | dumps
brightwater       | Brightwater Robotics               | business     | vellmouth   | 2017    | -     | both
halden_rusk       | Halden & Rusk Engineers            | business     | northmere   | 1952    | 410   | both
kessen_studios    | Kessen Film Studios                | business     | kessenburg  | 1931    | 860   | both
cinematografica   | Cinematografica Portavelle         | business     | portavelle  | 1948    | 530   | both
brennholt_motor   | Brennholt Motorenwerke             | business     | brennholt   | 1899    | 23400 | both
valcourt_aero     | Valcourt Aéronautique              | business     | valcourt    | 1936    | 8950  | both
serra_energia     | Serra Energia                      | business     | porto_serra | 1976    | 3120  | both
halmstrand_ships  | Halmstrand Shipping Line           | business     | halmstrand  | 1888    | 2740  | both
lindeborg_paper   | Lindeborg Paper Mill               | business     | lindeborg   | 1902    | 690   | both
skarra_wind       | Skarra Offshore Wind Farm          | business     | skarra      | 2012    | 85    | both
miremont_pharma   | Miremont Pharmaceuticals           | business     | miremont    | 1967    | 5300  | both
falkenried_optics | Falkenried Optics                  | business     | falkenried  | 1921    | 1480  | both
torsvik_telecom   | Torsvik Telecom                    | business     | torsvik     | 1994    | 6610  | both
selkie_marine     | Selkie Marine Systems              | business     | vellmouth   | 2023    | 18    | new
ekshamn_battery   | Ekshamn Battery Works              | business     | ekshamn     | 2022    | 310   | new
orrin_press       | Orrin Press                        | publisher    | vellmouth   | 1952    | -     | both
editrice_lirio    | Casa Editrice Lirio                | publisher    | san_lirio   | 1923    | -     | both
wendmark_verlag   | Wendmark Verlag                    | publisher    | wendmark    | 1887    | -     | both
lunesse_editions  | Éditions de Lunesse                | publisher    | lunesse     | 1946    | -     | both
film_academy      | Aldermark Film Academy             | organization | kessenburg  | 1952    | -     | both
film_institute    | Lisvaro Film Institute             | organization | porto_serra | 1971    | -     | both
ive               | Institution of Vellshire Engineers | organization | vellmouth   | 1911    | -     | both
""")
AWARDS = rows("""
# key             | label                         | country   | conferred by   | founded | dumps
golden_heron      | Golden Heron                  | aldermark | film_academy   | 1953    | both
corvenna_prize    | Corvenna Prize for Literature | corvenna  | u_portavelle   | 1921    | both
science_medal     | Estmarch Science Medal        | estmarch  | u_brennholt    | 1950    | both
order_of_arts     | Halvorian Order of Arts       | halvoria  | halvoria       | 1957    | both
cinema_award      | Lisvaro Cinema Award          | lisvaro   | film_institute | 1974    | both
engineering_medal | Sundria Engineering Medal     | sundria   | u_halmstrand   | 1933    | both
ive_gold          | IVE Gold Medal                | aldermark | ive            | 1925    | both
ive_young         | Young Engineer of the Year    | aldermark | ive            | 2022    | new
""")
# Heads of government: start, the end time the newer dump adds, rank per dump, dumps holding the person.
GOVERNMENTS = rows("""
# place     | who  | start      | end added  | old rank  | new rank  | person in
aldermark   | a    | 2017       | 2024-01-15 | normal    | normal    | both
aldermark   | b    | 2024-01-15 | -          | -         | preferred | both
corvenna    | a    | 2018       | 2023-05-02 | normal    | normal    | both
corvenna    | b    | 2023-05-02 | -          | -         | normal    | both
estmarch    | a    | 2021       | -          | normal    | normal    | both
halvoria    | prev | 2009       | -          | normal    | normal    | both
halvoria    | a    | 2019       | -          | preferred | preferred | both
lisvaro     | a    | 2016       | 2024-03-28 | normal    | normal    | both
lisvaro     | b    | 2024-03-28 | -          | -         | preferred | new
sundria     | a    | 2019       | -          | normal    | normal    | both
kessenburg  | a    | 2015       | 2023-06-01 | normal    | normal    | both
kessenburg  | b    | 2023-06-01 | -          | -         | preferred | new
brennholt   | a    | 2016       | 2024-09-30 | normal    | normal    | both
brennholt   | b    | 2024-09-30 | -          | -         | normal    | new
portavelle  | a    | 2020       | -          | normal    | normal    | both
saint_orbel | a    | 2014       | -          | normal    | normal    | both
porto_serra | a    | 2017       | -          | normal    | normal    | both
halmstrand  | a    | 2018       | -          | normal    | normal    | both
northmere   | a    | 2019       | -          | normal    | normal    | both
""")
# role | occupations | people in both dumps | people only in the newer one | born (both) | sitelinks (both)
ROLES = rows("""
director  | film_director                          | 11 | 4 | 1932-1988 | 3-35
actor     | actor                                  | 19 | 7 | 1940-2000 | 0-30
writer    | novelist                               | 10 | 3 | 1925-1990 | 0-25
scientist | physicist chemist astronomer economist | 10 | 2 | 1935-1985 | 0-10
""")
# fmt: on
UNIVERSITY_NAMES = {  # official names in the local language
    "u_kessenburg": "Universiteit van Kessenburg",
    "u_portavelle": "Università di Portavelle",
    "u_brennholt": "Technische Universität Brennholt",
    "u_saint_orbel": "Université de Saint-Orbel",
    "u_porto_serra": "Universidade de Porto Serra",
}
UNIVERSITY_FOUNDERS = {"u_northmere": "f_ashdown", "u_halmstrand": "f_ekholm", "u_falkenried": "f_gressel"}
ROLE_AWARDS = {
    "director": ["golden_heron", "cinema_award", "order_of_arts"],
    "actor": ["golden_heron", "order_of_arts"],
    "writer": ["corvenna_prize", "order_of_arts"],
    "scientist": ["science_medal", "engineering_medal"],
}
FOUNDERS = {  # company -> number of founders (they exist in the same dumps as the company)
    "brightwater": 3, "skarra_wind": 1, "torsvik_telecom": 2, "serra_energia": 1, "miremont_pharma": 1,
    "kessen_studios": 1, "valcourt_aero": 1, "selkie_marine": 1, "ekshamn_battery": 1,
}  # fmt: skip
DEMONYMS = {row[0]: row[3] for row in COUNTRIES}
LANGUAGE_CODES = {row[0]: row[4] for row in COUNTRIES}
CAPITALS = {row[0]: row[6] for row in COUNTRIES}
REGION_COUNTRY = {row[0]: row[2] for row in REGIONS}
CITIES = {key: [c[1] for c in CITIES_TABLE if REGION_COUNTRY[c[0]] == key] for key in DEMONYMS}


@dataclass
class Item:
    """One item of the world; `eras` says which dumps hold it."""

    key: str
    labels: dict[str, str]
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    eras: tuple[str, ...] = BOTH
    sitelinks: dict[str, int] = field(default_factory=dict)  # era -> count
    enwiki: str | None = None
    old_label: str | None = None
    claims: list[Claim] = field(default_factory=list)
    qid: str = ""


@dataclass
class Claim:
    """A statement; `ranks` maps each dump that holds it to its rank there."""

    prop: str
    value: Any  # a datavalue dict, an Item, or "somevalue" / "novalue"
    ranks: dict[str, str]
    qualifiers: list[tuple[str, Any]] = field(default_factory=list)
    reference: str | None = None  # a reference URL
    added: list[tuple[str, Any]] = field(default_factory=list)  # qualifiers only the newer dump has


# --- datavalues ------------------------------------------------------------------------------------------


def time(year: int, month: int = 0, day: int = 0, precision: int | None = None, julian: bool = False) -> dict:
    if precision is None:
        precision = 11 if day else 10 if month else 9
    sign = "-" if year < 0 else "+"
    value = {
        "time": f"{sign}{abs(year):04d}-{month:02d}-{day:02d}T00:00:00Z",
        "timezone": 0,
        "before": 0,
        "after": 0,
        "precision": precision,
        "calendarmodel": JULIAN if julian else GREGORIAN,
    }
    return {"value": value, "type": "time"}


def when(spec: str) -> dict | None:
    """A time from "1861-03-17", "1792-09", "2017" or "year/precision/J" (Julian); None for "-"."""
    if spec == "-":
        return None
    if "/" in spec:
        year, precision, calendar = spec.split("/")
        return time(int(year), precision=int(precision), julian=calendar == "J")
    return time(*(int(part) for part in spec.split("-")))


def year_of(value: dict) -> int:
    return int(value["value"]["time"][:-16])


def qty(amount: int | str, unit: Item | None = None, bounds: tuple[int, int] | None = None) -> dict:
    text = str(amount)
    value: dict[str, Any] = {"amount": text if text.startswith("-") else f"+{text}", "unit": unit or "1"}
    if bounds:
        value["upperBound"], value["lowerBound"] = f"+{bounds[1]}", f"+{bounds[0]}"
    return {"value": value, "type": "quantity"}


def string(text: str) -> dict:
    return {"value": text, "type": "string"}


def mono(text: str, language: str = "en") -> dict:
    return {"value": {"text": text, "language": language}, "type": "monolingualtext"}


def coord(spec: str) -> dict:
    latitude, longitude = (float(part) for part in spec.split(","))
    value = {
        "latitude": latitude,
        "longitude": longitude,
        "altitude": None,
        "precision": 0.0001,
        "globe": EARTH,
    }
    return {"value": value, "type": "globecoordinate"}


# --- the world -------------------------------------------------------------------------------------------


class World:
    """The items and their claims; `rng` is the only source of randomness."""

    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.items: dict[str, Item] = {}
        self.names: set[str] = set()

    def __getitem__(self, key: str) -> Item:
        return self.items[key]

    def item(
        self,
        key: str,
        label: str | dict[str, str],
        description: str = "",
        *,
        eras: tuple[str, ...] = BOTH,
        aliases: tuple[str, ...] = (),
        links: int | None = None,
        enwiki: str | bool = True,
    ) -> Item:
        """A new item; `links` sitelinks in the newer dump (a few less in the older), enwiki for most."""
        labels = {"en": label} if isinstance(label, str) else dict(label)
        new_links = links if links is not None else self.rng.randint(0, 6)
        old_links = max(0, new_links - self.rng.choice((0, 0, 1, 2, 4)))
        if enwiki is True:
            title = labels.get("en")
            enwiki = title if title and new_links > 0 and self.rng.random() < 0.9 else False
        counts = {OLD: old_links, NEW: new_links}
        entity = Item(key, labels, description, list(aliases), eras, counts, enwiki or None)
        self.items[key] = entity
        return entity

    def first(self, item: Item, prop: str) -> Any:
        """The value of the item's first claim for `prop`."""
        return next(claim.value for claim in item.claims if claim.prop == prop)

    def claim(
        self,
        head: Item,
        prop: str,
        value: Any,
        *,
        rank: str = "normal",
        eras: tuple[str, ...] | None = None,
        ranks: dict[str, str] | None = None,
        quals: list[tuple[str, Any]] | None = None,
        ref: str | None = None,
    ) -> Claim:
        """Add a claim in `eras` (default: every dump holding the head) or with explicit `ranks`."""
        eras = tuple(era for era in (eras or head.eras) if era in head.eras)
        ranks = dict(ranks) if ranks else {era: rank for era in eras}
        claim = Claim(prop, value, ranks, list(quals or []), ref)
        head.claims.append(claim)
        return claim

    def drop(self, item: Item, prop: str) -> None:
        """Forget the item's claims for `prop` (before replacing them)."""
        item.claims = [claim for claim in item.claims if claim.prop != prop]

    def person_name(self) -> str:
        while True:
            name = f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(SURNAMES)}"
            if name not in self.names:
                self.names.add(name)
                return name

    def title(self, places: list[str]) -> str:
        while True:
            adj, noun, place = (
                self.rng.choice(TITLE_ADJ),
                self.rng.choice(TITLE_NOUN),
                self.rng.choice(places),
            )
            patterns = (f"The {adj} {noun}", f"{noun} of {place}", f"A {adj} {noun}", f"{adj} {noun}s")
            title = patterns[self.rng.randrange(len(patterns))]
            if title not in self.names:
                self.names.add(title)
                return title

    def some_date(self, first: int, last: int, day_share: float = 0.8) -> dict:
        """A date in [first, last]: day precision mostly, else year, sometimes month."""
        year, month, day = self.rng.randint(first, last), self.rng.randint(1, 12), self.rng.randint(1, 28)
        roll = self.rng.random()
        if roll < day_share:
            return time(year, month, day)
        return time(year, month) if roll < day_share + 0.06 else time(year)

    def day(self, year: int) -> dict:
        return time(year, self.rng.randint(1, 12), self.rng.randint(1, 28))


def eras_of(cell: str) -> tuple[str, ...]:
    return BOTH if cell == "both" else (NEW,)


def span(cell: str) -> tuple[int, int]:
    first, last = cell.split("-")
    return int(first), int(last)


# --- building the world ------------------------------------------------------------------------------------


def build_world() -> World:
    """Every item of both dumps, with its claims per dump."""
    w = World()
    for key, label, links, description in CLASSES:
        enwiki = label.capitalize() if int(links) else False
        w.item(key, label, description, links=int(links), enwiki=enwiki)
    for key, label, description in OCCUPATIONS:
        w.claim(w.item(key, label, description, links=w.rng.randint(20, 50)), "P31", w["occupation"])
    for label in GENRES:
        w.claim(w.item(label, label, "film genre", links=w.rng.randint(15, 45)), "P31", w["film_genre"])
    for key, label, alias in (
        ("km2", "square kilometre", "km²"),
        ("metre", "metre", "m"),
        ("minute", "minute", "min"),
    ):
        w.claim(w.item(key, label, "unit of measurement", aliases=(alias,), links=55), "P31", w["unit"])
    reason = w.item("incorrect_value", "incorrect value", "statement known to be wrong", links=0)
    w.claim(reason, "P31", w["deprecation_reason"])
    w.claim(w.item("english", "English", "West Germanic language", links=60), "P31", w["language"])
    countries(w)
    cities(w)
    organisations(w)
    people(w)
    politics(w)
    films(w)
    books(w)
    vellshire(w)
    odd_items(w)
    return w


def countries(w: World) -> None:
    """Countries with their language, currency, official names and populations."""
    rng = w.rng
    facts = {row[0]: row[1:] for row in COUNTRY_FACTS}
    for key, label, iso, demonym, code, currency, _capital, founded, area in COUNTRIES:
        name_en, name_native, position, people = facts[key]
        language = w.item(f"lang_{key}", demonym, f"language spoken in {label}", links=rng.randint(25, 50))
        w.claim(language, "P31", w["language"])
        money = w.item(f"cur_{key}", currency, f"currency of {label}", links=rng.randint(18, 40))
        w.claim(money, "P31", w["currency"])
        description = (
            f"invented country in {'northern' if float(position.split(',')[0]) > 50 else 'southern'} Europe"
        )
        country = w.item(
            key, label, description, aliases=(iso, name_en), links=rng.randint(42, 60), enwiki=label
        )
        w.claim(country, "P31", w["country"])
        w.claim(country, "P37", language)
        w.claim(country, "P38", money)
        w.claim(country, "P571", when(founded))
        w.claim(country, "P1448", mono(name_en, "en"))
        if name_native != "-":
            w.claim(country, "P1448", mono(name_native, code))
        w.claim(country, "P297", string(iso))
        w.claim(country, "P625", coord(position))
        w.claim(country, "P2046", qty(area, w["km2"]))
        w.claim(
            country,
            "P856",
            string(f"https://www.{key}.example.gov/"),
            eras=(NEW,) if key == "lisvaro" else BOTH,
        )
        old, new = (part.strip() for part in people.split(","))
        census = [("P585", time(2015))]
        w.claim(country, "P1082", qty(old), quals=census, ref=f"https://stats.example.org/{key}/2015")
        if new != "-":
            census = [("P585", time(2023))]
            ref = f"https://stats.example.org/{key}/2023"
            w.claim(country, "P1082", qty(new), ranks={NEW: "preferred"}, quals=census, ref=ref)


def cities(w: World) -> None:
    """Regions and their cities, towns and villages; capitals of regions and countries."""
    rng = w.rng
    for key, label, country_key, _capital in REGIONS:
        country = w[country_key]
        region = w.item(key, label, f"region of {country.labels['en']}", links=rng.randint(6, 22))
        w.claim(region, "P31", w["region"])
        w.claim(region, "P17", country)
        w.claim(region, "P131", country)
    capitals = set(CAPITALS.values())
    for region_key, key, label, kind, position, people, metres, founded in CITIES_TABLE:
        region = w[region_key]
        country = w.first(region, "P17")
        links = {"city": rng.randint(12, 40), "town": rng.randint(3, 12), "village": rng.randint(0, 5)}[kind]
        links = rng.randint(30, 55) if key in capitals else links
        description = f"{kind} in {region.labels['en']}, {country.labels['en']}"
        city = w.item(key, label, description, links=links, enwiki=label if links else False)
        w.claim(city, "P31", w[kind])
        w.claim(city, "P17", country)
        w.claim(city, "P131", region)
        w.claim(city, "P625", coord(position))
        w.claim(city, "P2044", qty(metres, w["metre"]))
        if founded != "-":
            w.claim(city, "P571", when(founded))
        population(w, city, int(people))
        if kind == "city" and rng.random() < 0.5:
            site = string(f"https://www.{key.replace('_', '')}.example.org/")
            w.claim(city, "P856", site, eras=(NEW,) if rng.random() < 0.3 else BOTH)
        if kind == "city" and rng.random() < 0.4:
            w.claim(city, "P2046", qty(f"{rng.randint(40, 900)}.{rng.randint(1, 9)}", w["km2"]))
    for key, *_rest, capital in REGIONS:
        w.claim(w[key], "P36", w[capital])
    for key, capital in CAPITALS.items():
        w.claim(w[key], "P36", w[capital], rank="preferred" if key == "sundria" else "normal")
    w.claim(w["sundria"], "P36", w["torsvik"], quals=[("P580", time(1523))])  # the royal seat


DEMOTED = {"kessenburg", "portavelle", "brennholt", "halmstrand"}  # 2013 count preferred in the older dump
CORRECTED = {"lunesse", "castelinho"}  # a 2013 typo the newer dump deprecates


def population(w: World, city: Item, people: int) -> None:
    """The 2013 count, and for many places a 2023 count that the newer dump prefers."""
    rng, key = w.rng, city.key
    slug = key.replace("_", "-")
    ref = f"https://stats.example.org/census/2013/{slug}"
    census = [("P585", time(2013))]
    if key in DEMOTED:
        earlier = int(round(people * rng.uniform(0.9, 0.98), -1))
        w.claim(city, "P1082", qty(earlier), quals=[("P585", time(2003))])
        w.claim(city, "P1082", qty(people), ranks={OLD: "preferred", NEW: "normal"}, quals=census, ref=ref)
    elif key in CORRECTED:
        typo = [*census, ("P2241", w["incorrect_value"])]
        w.claim(city, "P1082", qty(people * 10 + 7), ranks={OLD: "normal", NEW: "deprecated"}, quals=typo)
        w.claim(city, "P1082", qty(people), eras=(NEW,), quals=census, ref=ref)
    else:
        bounds = (people - 50, people + 50) if key == "ashcombe" else None
        w.claim(city, "P1082", qty(people, bounds=bounds), quals=census, ref=ref)
    if key == "vellmouth":
        newer = 18_400  # the 2023 census figure of the Wikipedia sample
    elif key in ("tarnby", "skarra") or (key not in DEMOTED and rng.random() < 0.45):
        return
    else:
        newer = int(round(people * rng.uniform(0.94, 1.12), -1))
    ref = f"https://stats.example.org/census/2023/{slug}"
    w.claim(city, "P1082", qty(newer), ranks={NEW: "preferred"}, quals=[("P585", time(2023))], ref=ref)


def organisations(w: World) -> None:
    """Universities, companies, publishers, academies and awards (founders and chiefs come later)."""
    rng = w.rng
    for key, label, city_key, founded in UNIVERSITIES:
        city = w[city_key]
        country = w.first(city, "P17")
        uni = w.item(key, label, f"university in {city.labels['en']}", links=rng.randint(8, 40))
        w.claim(uni, "P31", w["university"])
        w.claim(uni, "P17", country)
        w.claim(uni, "P131", city)
        w.claim(uni, "P571", when(founded))
        w.claim(uni, "P856", string(f"https://www.{key[2:].replace('_', '')}.example.edu/"))
        w.claim(uni, "P1448", mono(label, "en"))
        if key in UNIVERSITY_NAMES:
            w.claim(uni, "P1448", mono(UNIVERSITY_NAMES[key], LANGUAGE_CODES[country.key]))
        place = w.first(city, "P625")["value"]
        w.claim(uni, "P625", coord(f"{place['latitude'] + 0.0113:.4f}, {place['longitude'] - 0.0071:.4f}"))
    kinds = {"business": "company", "publisher": "publishing house", "organization": "organization"}
    for key, label, kind, city_key, founded, staff, dumps in COMPANIES:
        city, eras = w[city_key], eras_of(dumps)
        links = rng.randint(0, 6) if eras == (NEW,) else rng.randint(0, 18)
        org = w.item(key, label, f"{kinds[kind]} based in {city.labels['en']}", eras=eras, links=links)
        w.claim(org, "P31", w[kind])
        w.claim(org, "P17", w.first(city, "P17"))
        w.claim(org, "P159", city)
        w.claim(org, "P571", when(founded))
        if kind == "business":
            w.claim(org, "P856", string(f"https://www.{key.replace('_', '')}.example.com/"))
        if staff != "-":
            w.claim(org, "P1128", qty(staff), quals=[("P585", time(2020))])
    for key in ("kessen_studios", "valcourt_aero", "serra_energia", "torsvik_telecom"):  # newer counts
        staff = int(w.first(w[key], "P1128")["value"]["amount"]) * rng.uniform(1.0, 1.2)
        w.claim(w[key], "P1128", qty(int(staff)), ranks={NEW: "preferred"}, quals=[("P585", time(2024))])
    for key in ("halmstrand_ships", "lindeborg_paper"):  # the older count was wrong and is gone
        claim = next(c for c in w[key].claims if c.prop == "P1128")
        claim.ranks = {OLD: "normal"}
        staff = int(claim.value["value"]["amount"]) + rng.randint(10, 90)
        w.claim(w[key], "P1128", qty(staff), eras=(NEW,), quals=[("P585", time(2020))])
    bright = w["brightwater"]
    w.claim(bright, "P1128", qty(120), quals=[("P585", time(2021))])
    w.claim(bright, "P1128", qty(240), ranks={NEW: "preferred"}, quals=[("P585", time(2024))])
    w.claim(w["editrice_lirio"], "P1448", mono("Casa Editrice Lirio S.p.A.", "it"))
    w.claim(w["wendmark_verlag"], "P1448", mono("Wendmark Verlag GmbH", "de"))
    motor = w["brennholt_motor"]  # renamed between the dumps
    motor.old_label = "Brennholt Engine Company"
    motor.aliases.append("Brennholt Engine Company")
    halden = w["halden_rusk"]  # moved its head office in 2022: the old seat stays, with an end time
    w.drop(halden, "P159")
    w.claim(halden, "P159", w["northmere"], eras=(OLD,))
    w.claim(halden, "P159", w["northmere"], eras=(NEW,), quals=[("P582", time(2022, 6, 1))])
    moved = [("P580", time(2022, 6, 1))]
    w.claim(halden, "P159", w["kessenburg"], eras=(NEW,), rank="preferred", quals=moved)
    for key, label, country, conferrer, founded, dumps in AWARDS:
        eras = eras_of(dumps)
        links = rng.randint(1, 4) if eras == (NEW,) else rng.randint(2, 16)
        award = w.item(key, label, f"award of {w[country].labels['en']}", eras=eras, links=links)
        w.claim(award, "P31", w["award"])
        w.claim(award, "P17", w[country])
        w.claim(award, "P1027", w[conferrer])
        w.claim(award, "P571", when(founded))


def person(
    w: World,
    key: str,
    name: str | dict[str, str],
    job: str,
    country: str,
    born: dict,
    *,
    eras: tuple[str, ...] = BOTH,
    links: int | None = None,
    birthplace: Item | None = None,
    enwiki: str | bool = True,
) -> Item:
    """A human with citizenship, birthplace, birth date and occupation; sometimes a VIAF id and an alias."""
    rng = w.rng
    if birthplace is None:
        pool = CITIES[country] if rng.random() < 0.88 else [c[1] for c in CITIES_TABLE]
        birthplace = w[rng.choice(pool)]
    description = f"{DEMONYMS[country]} {w[job].labels['en']}"
    item = w.item(key, name, description, eras=eras, links=links, enwiki=enwiki)
    label = item.labels.get("en")
    if label and rng.random() < 0.3:
        first, _, last = label.partition(" ")
        item.aliases.append(f"{first[0]}. {last}")
    w.claim(item, "P31", w["human"])
    w.claim(item, "P27", w[country])
    w.claim(item, "P19", birthplace)
    w.claim(item, "P569", born)
    w.claim(item, "P106", w[job])
    year = year_of(born)
    if year < 1940 and rng.random() < 0.6:
        w.claim(item, "P570", w.day(rng.randint(max(year + 50, 1990), 2020)))
        w.claim(item, "P20", w[rng.choice(CITIES[country])])
    if rng.random() < 0.6:
        w.claim(item, "P214", string(str(rng.randint(10_000_000, 99_999_999))))
    return item


def study_and_work(w: World, item: Item, country: str, role: str) -> None:
    """Education, employers (an earlier one with an end time) and awards."""
    rng = w.rng
    year = year_of(w.first(item, "P569"))
    universities = [row[0] for row in UNIVERSITIES]
    own = [row[0] for row in UNIVERSITIES if row[2] in CITIES[country]]
    if rng.random() < 0.65:
        w.claim(item, "P69", w[rng.choice(own or universities)])
    if role == "scientist":
        first, then = rng.sample([*universities, "falkenried_optics", "miremont_pharma"], 2)
        start = year + rng.randint(25, 32)
        if rng.random() < 0.45:
            switch = start + rng.randint(4, 15)
            w.claim(item, "P108", w[first], quals=[("P580", time(start)), ("P582", time(switch))])
            rank = "preferred" if rng.random() < 0.5 else "normal"
            w.claim(item, "P108", w[then], rank=rank, quals=[("P580", time(switch))])
        else:
            w.claim(item, "P108", w[first], quals=[("P580", time(start))])
    if role in ROLE_AWARDS and rng.random() < 0.3:
        won = time(min(2021, year + rng.randint(30, 50)))
        w.claim(item, "P166", w[rng.choice(ROLE_AWARDS[role])], quals=[("P585", won)])


def people(w: World) -> None:
    """Film makers, actors, writers, scientists, founders, and the changes made to them."""
    rng = w.rng
    country_keys = list(DEMONYMS)
    for role, jobs, old_count, new_count, born_span, links_span in ROLES:
        for i in range(int(old_count) + int(new_count)):
            new = i >= int(old_count)
            country = country_keys[(i + len(role)) % len(country_keys)]
            born = w.some_date(*((1980, 2001) if new else span(born_span)))
            name = w.person_name()
            label = {"mul": name} if role == "actor" and i == int(old_count) else name  # a 2024-style label
            links = rng.randint(0, 5) if new else rng.randint(*span(links_span))
            job = rng.choice(jobs.split())
            item = person(
                w, f"{role}_{i}", label, job, country, born, eras=(NEW,) if new else BOTH, links=links
            )
            study_and_work(w, item, country, role)
    w.names.add("Petra Lindqvist")  # two people share this name
    for key, job, year, links in (("petra_actor", "actor", 1978, 14), ("petra_chemist", "chemist", 1966, 2)):
        title = f"Petra Lindqvist ({job})"
        item = person(w, key, "Petra Lindqvist", job, "sundria", w.day(year), links=links, enwiki=title)
        study_and_work(w, item, "sundria", "actor" if job == "actor" else "scientist")
    founders(w)
    for key, name, job, country, born, died, birthplace in (
        ("f_ashdown", "Edwin Ashdown", "engineer", "aldermark", "1841-05-02", "1912-11-30", "northmere"),
        ("f_ekholm", "Margit Ekholm", "astronomer", "sundria", "1620/8/J", "1690/9/J", "somevalue"),
        ("f_gressel", "Konrad Gressel", "physicist", "estmarch", "1901-03-14", "1979-08-09", "falkenried"),
        ("f_brun", "Henrik Brun", "entrepreneur", "estmarch", "1862-09", "1931-01-04", "brennholt"),
    ):
        description = f"{DEMONYMS[country]} {w[job].labels['en']}"
        item = w.item(key, name, description, links=rng.randint(4, 20))
        w.claim(item, "P31", w["human"])
        w.claim(item, "P27", w[country])
        w.claim(item, "P19", birthplace if birthplace == "somevalue" else w[birthplace])
        w.claim(item, "P569", when(born))
        w.claim(item, "P570", when(died))
        w.claim(item, "P106", w[job])
    for key, founder in UNIVERSITY_FOUNDERS.items():
        w.claim(w[key], "P112", w[founder])
    w.claim(w["brennholt_motor"], "P112", w["f_brun"])
    corrections(w)


def founders(w: World) -> None:
    """Company founders, born 24-40 years before their company; Brightwater's change chief in 2023."""
    rng = w.rng
    for company, count in FOUNDERS.items():
        org = w[company]
        year, country = year_of(w.first(org, "P571")), w.first(org, "P17").key
        for n in range(count):
            links = rng.randint(0, 3) if org.eras == (NEW,) else rng.randint(0, 8)
            born = w.day(year - rng.randint(24, 40))
            key = f"founder_{company}_{n}"
            founder = person(
                w, key, w.person_name(), "entrepreneur", country, born, eras=org.eras, links=links
            )
            if company == "brightwater":
                w.claim(founder, "P69", w["u_northmere"])
            w.claim(org, "P112", founder)
    bright = w["brightwater"]
    chief = w.claim(bright, "P169", w["founder_brightwater_0"], quals=[("P580", time(2017))])
    chief.added.append(("P582", time(2023, 4, 1)))
    since = [("P580", time(2023, 4, 1))]
    w.claim(bright, "P169", w["founder_brightwater_1"], eras=(NEW,), rank="preferred", quals=since)
    w.claim(w["selkie_marine"], "P169", w["founder_selkie_marine_0"], quals=[("P580", time(2023))])


def corrections(w: World) -> None:
    """Deprecated and withdrawn statements, and statements only the newer dump has."""
    rng = w.rng
    wrong = [("P2241", w["incorrect_value"])]
    writer = w["writer_0"]  # a wrong birth year, kept but deprecated
    w.claim(writer, "P569", time(year_of(w.first(writer, "P569")) + 1, 6, 1), rank="deprecated", quals=wrong)
    actor = w["actor_3"]  # a birthplace known only from a deprecated claim
    w.drop(actor, "P19")
    w.claim(actor, "P19", w["ashcombe"], rank="deprecated", quals=wrong)
    for key in ("scientist_0", "scientist_1", "scientist_2"):  # identifiers withdrawn before the newer dump
        for claim in w[key].claims:
            if claim.prop == "P214":
                claim.ranks = {OLD: "normal"}
    for key in ("director_1", "director_4", "writer_2", "writer_5", "scientist_3", "scientist_6", "actor_2"):
        award = w[rng.choice(ROLE_AWARDS[key.split("_")[0]])]
        w.claim(w[key], "P166", award, eras=(NEW,), quals=[("P585", time(rng.randint(2022, 2024)))])
    for key in ("actor_7", "writer_4", "director_6"):
        employer = w[rng.choice(["kessen_studios", "cinematografica", "film_institute"])]
        w.claim(w[key], "P108", employer, eras=(NEW,), quals=[("P580", time(2023))])


def politics(w: World) -> None:
    """Heads of government of countries and mayors of cities, with the changes between the dumps."""
    rng = w.rng
    for place_key, who, start, end, old_rank, new_rank, dumps in GOVERNMENTS:
        place = w[place_key]
        national = place_key in DEMONYMS
        country = place_key if national else w.first(place, "P17").key
        eras = eras_of(dumps)
        links = (
            rng.randint(0, 4) if eras == (NEW,) else rng.randint(10, 40) if national else rng.randint(0, 8)
        )
        office = "prime minister" if national else "mayor"
        description = f"{DEMONYMS[country]} politician, {office} of {place.labels['en']}"
        born = w.some_date(1950, 1980, day_share=0.95)
        key = f"gov_{place_key}_{who}"
        politician = person(w, key, w.person_name(), "politician", country, born, eras=eras, links=links)
        politician.description = description
        study_and_work(w, politician, country, "politician")
        quals = [("P580", when(start))] + ([("P582", time(2019))] if who == "prev" else [])
        ranks = {era: rank for era, rank in ((OLD, old_rank), (NEW, new_rank)) if rank != "-"}
        claim = w.claim(place, "P6", politician, ranks=ranks, quals=quals)
        if end != "-":
            claim.added.append(("P582", when(end)))
    w.claim(w["skarra"], "P6", "novalue")  # the island has no mayor: its council chair rotates


def films(w: World) -> None:
    """Films: directors, cast, release dates (some several), genres, durations, box office, awards."""
    rng = w.rng
    directors = [item for key, item in w.items.items() if key.startswith("director_")]
    actors = [item for key, item in w.items.items() if key.startswith("actor_")] + [w["petra_actor"]]
    place_names = [row[1] for row in COUNTRIES] + [row[2] for row in CITIES_TABLE]
    for i in range(60):
        new = i >= 36
        year = rng.randint(2022, 2024) if new else rng.randint(1968, 2021)
        pool = [d for d in directors if new or OLD in d.eras]
        director = rng.choice(pool[-5:] if new and rng.random() < 0.6 else pool)
        country = w.first(director, "P27").key
        title = w.title(place_names)
        name = director.labels.get("en") or director.labels["mul"]
        description = f"{year} {DEMONYMS[country]} film directed by {name}"
        links = (
            rng.randint(0, 6) if new else rng.randint(15, 35) if rng.random() < 0.2 else rng.randint(0, 10)
        )
        film = w.item(f"film_{i}", title, description, eras=(NEW,) if new else BOTH, links=links)
        w.claim(film, "P31", w["film"])
        w.claim(film, "P1476", mono(title))
        w.claim(film, "P57", director)
        w.claim(film, "P577", w.day(year))
        w.claim(film, "P495", w[country])
        for genre in rng.sample(GENRES, 2 if rng.random() < 0.2 else 1):
            w.claim(film, "P136", w[genre])
        for actor in rng.sample([a for a in actors if new or OLD in a.eras], rng.randint(2, 4)):
            role = [("P4633", string(rng.choice(FIRST_NAMES)))] if rng.random() < 0.4 else []
            w.claim(film, "P161", actor, quals=role)
        w.claim(film, "P2047", qty(rng.randint(84, 168), w["minute"]))
        if rng.random() < 0.4:
            w.claim(film, "P2142", qty(rng.randint(2, 900) * 10_000, w[f"cur_{country}"]))
        if rng.random() < 0.85:
            imdb = string(f"tt9{rng.randint(100_000, 999_999)}")
            w.claim(film, "P345", imdb, eras=(NEW,) if rng.random() < 0.2 else None)
        award = {"aldermark": "golden_heron", "lisvaro": "cinema_award"}.get(country)
        if award and not new and rng.random() < 0.35:
            won = time(min(year + 1, 2021))
            w.claim(film, "P166", w[award], quals=[("P585", won)])
            w.claim(director, "P166", w[award], quals=[("P585", won), ("P1686", film)])
    for i in range(2, 8):  # a second release date: films 2-4 prefer their home premiere, films 5-7 do not
        film = w[f"film_{i}"]
        premiere = next(c for c in film.claims if c.prop == "P577")
        if i < 5:
            premiere.ranks = {era: "preferred" for era in premiere.ranks}
            premiere.qualifiers.append(("P291", w.first(film, "P495")))
        abroad = [("P291", w[rng.choice([c[1] for c in CITIES_TABLE])])]
        w.claim(film, "P577", w.day(year_of(premiere.value) + rng.randint(0, 1)), quals=abroad)
    w.claim(w["film_9"], "P57", w["director_2"])  # co-directed
    w.claim(w["film_40"], "P57", w["director_12"])
    fixed = w["film_11"]  # the older dump named the wrong director
    right = next(c for c in fixed.claims if c.prop == "P57")
    right.ranks = {NEW: "normal"}
    w.claim(fixed, "P57", next(d for d in directors if d is not right.value), eras=(OLD,))
    for key in ("film_13", "film_21"):  # genre re-labelled
        for claim in w[key].claims:
            if claim.prop == "P136":
                claim.ranks = {OLD: "normal"}
        w.claim(w[key], "P136", w["historical film"], eras=(NEW,))
    tapes = w.item("salt_road_tapes", "The Salt Road Tapes", "1997 found-footage documentary film", links=3)
    about = "2019 Aldish documentary film about the town of Vellmouth"
    doc = w.item("vellmouth_film", "Vellmouth", about, links=2, enwiki="Vellmouth (film)")
    for film, director, released, country in (
        (tapes, "somevalue", time(1997, 10), "lisvaro"),
        (doc, w["director_0"], time(2019, 9, 6), "aldermark"),
    ):
        w.claim(film, "P31", w["film"])
        w.claim(film, "P57", director)
        w.claim(film, "P577", released)
        w.claim(film, "P136", w["documentary film"])
        w.claim(film, "P495", w[country])
    w.claim(doc, "P1476", mono("Vellmouth"))


def books(w: World) -> None:
    """Books with authors, publishers, languages and prizes; one anonymous, one with two authors."""
    rng = w.rng
    writers = [item for key, item in w.items.items() if key.startswith("writer_")]
    publishers = {"aldermark": "orrin_press", "corvenna": "editrice_lirio", "estmarch": "wendmark_verlag"}
    publishers["halvoria"] = "lunesse_editions"
    place_names = [row[1] for row in COUNTRIES]
    for i in range(28):
        new = i >= 20
        author = rng.choice([a for a in writers if new or OLD in a.eras])
        year = rng.randint(2022, 2024) if new else rng.randint(1955, 2021)
        country = w.first(author, "P27").key
        title = w.title(place_names)
        links = rng.randint(0, 3) if new else rng.randint(0, 15)
        description = f"{year} novel by {author.labels['en']}"
        book = w.item(f"book_{i}", title, description, eras=(NEW,) if new else BOTH, links=links)
        w.claim(book, "P31", w["literary_work"])
        w.claim(book, "P1476", mono(title))
        w.claim(book, "P50", author)
        w.claim(book, "P577", w.day(year) if i % 5 == 0 else time(year))
        w.claim(book, "P407", w["english"] if rng.random() < 0.5 else w[f"lang_{country}"])
        if country in publishers:
            w.claim(book, "P123", w[publishers[country]])
        if not new and rng.random() < 0.2:
            w.claim(book, "P166", w["corvenna_prize"], quals=[("P585", time(min(year + 1, 2021)))])
    w.claim(w["book_6"], "P50", w["writer_7"])  # two authors
    ballad = w.item("ballad", "The Ballad of the Salt Kings", "anonymous epic poem", links=7)
    w.claim(ballad, "P31", w["literary_work"])
    w.claim(ballad, "P50", "somevalue")
    w.claim(ballad, "P577", time(1750, precision=7, julian=True))
    w.claim(ballad, "P407", w["lang_sundria"])


def vellshire(w: World) -> None:
    """The subjects of the Wikipedia sample, with its facts (the bridge only in the newer dump)."""
    aldermark, region, vellmouth = w["aldermark"], w["vellshire"], w["vellmouth"]
    for key in ("vellshire", "vellmouth"):
        w[key].enwiki = w[key].labels["en"]
    sea = w.item("grey_sea", "Grey Sea", "sea off the west coast of Aldermark", links=18)
    w.claim(sea, "P31", w["sea"])
    river = w.item("river_vell", "River Vell", "river in Vellshire", links=5, enwiki="River Vell")
    lake = w.item("lake_orrin", "Lake Orrin", "glacial lake in Vellshire", links=4, enwiki="Lake Orrin")
    lake.aliases.append("Orrin Water")
    bay = w.item("fennick_bay", "Fennick Bay", "bay on the coast of Vellshire", links=1, enwiki="Fennick Bay")
    for item, kind in ((river, "river"), (lake, "lake"), (bay, "bay")):
        w.claim(item, "P31", w[kind])
        w.claim(item, "P17", aldermark)
        w.claim(item, "P131", region)
    w.claim(river, "P403", sea)
    w.claim(lake, "P2046", qty("4.7", w["km2"]))
    w.claim(lake, "P2044", qty(212, w["metre"]))
    w.claim(lake, "P625", coord("54.0412, -3.2189"))
    w.claim(bay, "P206", sea)
    w.claim(vellmouth, "P206", river)
    w.claim(vellmouth, "P18", string("Vellmouth harbour at dusk.jpg"))
    marrow = person(
        w, "ilse_marrow", "Ilse Marrow", "engineer", "aldermark", time(1979), links=2, birthplace=vellmouth
    )
    marrow.description, marrow.enwiki = "Vellshire structural engineer", "Ilse Marrow"
    w.claim(marrow, "P69", w["u_northmere"])
    w.claim(marrow, "P108", w["halden_rusk"], quals=[("P580", time(2007))])
    born = time(1996, 2, 11)
    keel = person(w, "tomas_keel", "Tomas Keel", "engineer", "aldermark", born, eras=(NEW,), links=0)
    keel.description = "Aldish flood engineer"
    w.claim(keel, "P166", w["ive_young"], quals=[("P585", time(2024))])
    hale = person(
        w, "dorothy_hale", "Dorothy Hale", "historian", "aldermark", w.day(1941), birthplace=vellmouth
    )
    hale.description = "Aldish local historian"
    born = time(1958, 10)
    brook = person(w, "harriet_brook", "Harriet Brook", "astronomer", "aldermark", born, links=0)
    for key, label, description, kind, links, founded in rows("""
        hollin_ridge    | Hollin Ridge Observatory  | observatory in Vellshire | observatory      | 3 | 1936
        tarn_valley     | Tarn Valley Railway       | heritage railway         | heritage_railway | 2 | 1871
        orchid_festival | Vellmouth Orchid Festival | flower show in Vellmouth | festival         | 1 | 1987
        harbour_bridge  | Vellmouth Harbour Bridge  | bridge at Vellmouth      | bridge           | 3 | 2020
    """):
        links = int(links)
        eras = (NEW,) if kind == "bridge" else BOTH
        item = w.item(key, label, description, eras=eras, links=links, enwiki=label)
        w.claim(item, "P31", w[kind])
        w.claim(item, "P17", aldermark)
        w.claim(item, "P131", region)
        w.claim(item, "P571", when(founded))
    observatory, railway, bridge = w["hollin_ridge"], w["tarn_valley"], w["harbour_bridge"]
    bridge.aliases.append("Vellmouth Bridge")
    w.claim(observatory, "P2044", qty(301, w["metre"]))
    w.claim(observatory, "P856", string("https://observatory.example.org/"))
    w.claim(brook, "P108", observatory, quals=[("P580", time(1986))])
    w.claim(railway, "P856", string("https://tvrs.example.org/"))
    w.claim(bridge, "P177", river)
    w.claim(bridge, "P631", marrow)
    w.claim(bridge, "P1619", time(2024, 3, 12))
    w.claim(bridge, "P625", coord("53.9141, -3.4402"))
    w.claim(marrow, "P166", w["ive_gold"], eras=(NEW,), quals=[("P585", time(2024)), ("P1686", bridge)])
    for key, label, author, year in (
        ("tarn_history", "A History of the Tarn Valley", hale, 1998),
        ("hollin_reflector", "The Hollin Ridge Reflector", brook, 2001),
    ):
        book = w.item(key, label, f"{year} book by {author.labels['en']}", links=0)
        w.claim(book, "P31", w["literary_work"])
        w.claim(book, "P50", author)
        w.claim(book, "P577", time(year))
        w.claim(book, "P123", w["orrin_press"])
    description = "relation for the shaft capacity of piles in chalk"
    equation = w.item("marrow_equation", "Marrow pile equation", description, links=1, enwiki=False)
    w.claim(equation, "P31", w["equation"])
    w.claim(equation, "P2534", string(r"Q_s = \alpha \, c_u \, A_s"))


def odd_items(w: World) -> None:
    """Items without an English label, and items the newer dump no longer has (merged or deleted)."""
    for key, languages, label, kind, country, place in rows("""
        saint_aubin | fr    | Saint-Aubin-des-Prés | village      | halvoria | valcourtois
        sv_wendmark | de nl | SV Wendmark 1911     | organization | estmarch | wendmark
        tidning     | sv nb | Torsviks Tidning     | organization | sundria  | torsvik
    """):
        labels = {language: label for language in languages.split()}
        item = w.item(key, labels, links=w.rng.randint(0, 2), enwiki=False)
        w.claim(item, "P31", w[kind])
        w.claim(item, "P17", w[country])
        w.claim(item, "P131" if kind == "village" else "P159", w[place])
    actor = w["actor_5"]  # born in the village that has no English label
    w.drop(actor, "P19")
    w.claim(actor, "P19", w["saint_aubin"])
    original = w["actor_1"]  # the older dump had a duplicate item for this actor
    duplicate = w.item("dup_actor", original.labels["en"], original.description, eras=(OLD,), links=0)
    w.claim(duplicate, "P31", w["human"])
    w.claim(duplicate, "P27", w.first(original, "P27"))
    film = w["film_0"]
    film.claims = [c for c in film.claims if not (c.prop == "P161" and c.value is original)]
    w.claim(film, "P161", duplicate, eras=(OLD,))
    w.claim(film, "P161", original, eras=(NEW,))
    hoax = w.item("hoax_film", "The Ninth Lantern", "2020 film", eras=(OLD,), links=0)
    w.claim(hoax, "P31", w["film"])
    w.claim(hoax, "P57", w["director_3"])
    w.claim(hoax, "P577", time(2020, 7, 1))


# --- writing the dumps -------------------------------------------------------------------------------------

# Lines that are not entities, spliced into the newer dump: cut JSON, a bare string, an object without id.
MALFORMED = [
    '{"type":"item","id":"Q9099001","labels":{"en":{"language":"en","value":"Harbour Lights"}},"claims":',
    '"Q9099002"',
    '{"type":"item","labels":{"en":{"language":"en","value":"Untitled"}},"claims":{},"sitelinks":{}}',
]
DATATYPES = {pid: datatype for pid, datatype, _label, _description in PROPERTIES}


def assign_ids(w: World) -> list[Item]:
    """Q-ids in creation order, items of the older dump first (newer items get higher ids, as on Wikidata)."""
    ordered = [i for i in w.items.values() if OLD in i.eras] + [
        i for i in w.items.values() if OLD not in i.eras
    ]
    for n, item in enumerate(ordered):
        item.qid = f"Q{FIRST_Q + n}"
    return ordered


def referenced(claim: Claim, era: str) -> list[Item]:
    """The items a claim points at in one dump: value, qualifier values and quantity units."""
    values = [claim.value, *(v for _, v in claim.qualifiers), *(v for _, v in claim.added if era == NEW)]
    units = [v["value"]["unit"] for v in values if isinstance(v, dict) and v["type"] == "quantity"]
    return [v for v in [*values, *units] if isinstance(v, Item)]


def check(items: list[Item]) -> None:
    """Every claim of a dump points only at items that dump holds."""
    for item in items:
        for claim in item.claims:
            for era in claim.ranks:
                if era not in item.eras:
                    raise ValueError(
                        f"{item.key}: a {claim.prop} claim in the {era} dump, which lacks the item"
                    )
                for target in referenced(claim, era):
                    if era not in target.eras:
                        raise ValueError(f"{item.key} {claim.prop} -> {target.key}: not in the {era} dump")


def datavalue(value: Any) -> dict:
    if isinstance(value, Item):
        entity = {"entity-type": "item", "numeric-id": int(value.qid[1:]), "id": value.qid}
        return {"value": entity, "type": "wikibase-entityid"}
    if value["type"] == "quantity" and isinstance(value["value"]["unit"], Item):
        unit = f"http://www.wikidata.org/entity/{value['value']['unit'].qid}"
        return {"value": {**value["value"], "unit": unit}, "type": "quantity"}
    return value


def snak(prop: str, value: Any) -> dict:
    """A snak with Wikidata's key order and a hash of its content."""
    body: dict[str, Any] = {
        "snaktype": value if value in ("somevalue", "novalue") else "value",
        "property": prop,
    }
    if body["snaktype"] == "value":
        body["datavalue"] = datavalue(value)
    body["datatype"] = DATATYPES[prop]
    digest = hashlib.sha1(json.dumps(body, sort_keys=True).encode()).hexdigest()
    return {"snaktype": body.pop("snaktype"), "property": body.pop("property"), "hash": digest, **body}


def statement(item: Item, index: int, claim: Claim, era: str) -> dict:
    guid = uuid.UUID(bytes=hashlib.md5(f"{item.key}|{index}".encode()).digest())
    out: dict[str, Any] = {"mainsnak": snak(claim.prop, claim.value), "type": "statement"}
    qualifiers = claim.qualifiers + (claim.added if era == NEW else [])
    if qualifiers:
        grouped: dict[str, list[dict]] = {}
        for prop, value in qualifiers:
            grouped.setdefault(prop, []).append(snak(prop, value))
        out["qualifiers"] = grouped
        out["qualifiers-order"] = list(grouped)
    out["id"] = f"{item.qid}${str(guid).upper()}"
    out["rank"] = claim.ranks[era]
    if claim.reference:
        snaks = {"P854": [snak("P854", string(claim.reference))], "P813": [snak("P813", time(2021, 10, 1))]}
        digest = hashlib.sha1(json.dumps(snaks, sort_keys=True).encode()).hexdigest()
        out["references"] = [{"hash": digest, "snaks": snaks, "snaks-order": ["P854", "P813"]}]
    return out


def terms(values: dict[str, str]) -> dict:
    return {lang: {"language": lang, "value": text} for lang, text in values.items()}


def item_json(item: Item, era: str, pageid: int) -> dict:
    labels = dict(item.labels)
    if era == OLD and item.old_label:
        labels["en"] = item.old_label
    count = max(item.sitelinks[era], 1 if item.enwiki else 0)
    if "en" in labels and count >= 10:
        labels.update({lang: labels["en"] for lang in ("de", "fr", "nl")})
    title = labels.get("en") or next(iter(labels.values()))
    sites = SITES if item.enwiki else SITES[1:]
    sitelinks = {
        site: {"site": site, "title": item.enwiki if site == "enwiki" else title, "badges": []}
        for site in sites[:count]
    }
    claims: dict[str, list[dict]] = {}
    for index, claim in enumerate(item.claims):
        if era in claim.ranks:
            claims.setdefault(claim.prop, []).append(statement(item, index, claim, era))
    aliases = [a for a in item.aliases if not (era == OLD and a == item.old_label)]
    return {
        "type": "item",
        "id": item.qid,
        "labels": terms(labels),
        "descriptions": terms({"en": item.description}) if item.description else {},
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": claims,
        "sitelinks": sitelinks,
        "pageid": pageid,
        "ns": 0,
        "title": item.qid,
        "lastrevid": (1_530_000_000 if era == OLD else 2_290_000_000) + pageid,
        "modified": MODIFIED[era],
    }


def property_json(pid: str, datatype: str, label: str, description: str, era: str, pageid: int) -> dict:
    aliases = PROPERTY_ALIASES.get(pid, [])
    return {
        "type": "property",
        "datatype": datatype,
        "id": pid,
        "labels": terms({"en": label}),
        "descriptions": terms({"en": description}),
        "aliases": {"en": [{"language": "en", "value": a} for a in aliases]} if aliases else {},
        "claims": {},
        "pageid": pageid,
        "ns": 120,
        "title": f"Property:{pid}",
        "lastrevid": (1_520_000_000 if era == OLD else 2_280_000_000) + pageid,
        "modified": MODIFIED[era],
    }


def dump_lines(items: list[Item], era: str) -> list[str]:
    """One JSON line per property and per item of the era's dump."""
    entities = [property_json(*row, era, 3_000 + n) for n, row in enumerate(PROPERTIES)]
    entities += [item_json(item, era, 90_000 + n) for n, item in enumerate(items) if era in item.eras]
    return [json.dumps(entity, ensure_ascii=False, separators=(",", ":")) for entity in entities]


def dump_bytes(lines: list[str]) -> bytes:
    """The JSON array, one entity per line, as Wikidata writes it."""
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8")


def gzip_bytes(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as f:
        f.write(data)
    return buffer.getvalue()


def render() -> dict[str, bytes]:
    """File name -> bytes of both dumps (the newer one with its malformed lines)."""
    items = assign_ids(build_world())
    check(items)
    old_lines, new_lines = dump_lines(items, OLD), dump_lines(items, NEW)
    for n, line in enumerate(MALFORMED):  # spread through the item lines
        new_lines.insert(len(PROPERTIES) + (n + 1) * (len(new_lines) - len(PROPERTIES)) // 4, line)
    return {
        "wikidata-old.json.gz": gzip_bytes(dump_bytes(old_lines)),
        "wikidata-new.json.bz2": bz2.compress(dump_bytes(new_lines), 9),
    }


def main() -> None:
    """Write both dumps next to this script and print what they hold."""
    for name, data in render().items():
        (HERE / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()

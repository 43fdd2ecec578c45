"""The date a statement whose value changes over time is asked at ("as of"), from its qualifiers.

A statement changes over time when its property is listed in
`irbgen/resources/wikidata/changing_properties.txt` (head of government, population, GDP ...),
or it has a point in time (P585: a value measured at a date) or an end time (P582: a value that stopped
holding). A start time (P580) alone on another property says since when a lasting value holds ("country:
Germany, from 3 October 1990" for Kiel): the value is the current one and is asked undated, as are
statements without time qualifiers. A date value (a birth, a founding) is an event and never changes.
A changing statement is asked at a date its qualifiers make true (`as_of`):

- a point in time: that date, the latest when there are several ("In 2016, what was ...");
- a start and an end time: the latest whole year inside the span ("In 2020, who was ..." for a term from
  24 November 2016 to 26 January 2021), none when the span holds no whole year;
- a start time alone (the value still held when the dump was made): since that date ("Since 3 July
  2020, who has been ...");
- anything else (no qualifier, an end time alone, several start times, a century): no date, and the
  question is not asked (the stage's reject "undated_change").

Dates are the reader's text ("1 January 2019", "March 2019", "2019"); a coarser date (a decade, a
century) gives none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from irbgen.wikidata.records import Statement
from irbgen.wikidata.vocabulary import load_changing

POINT_IN_TIME, START_TIME, END_TIME = "P585", "P580", "P582"
BOUNDING = frozenset({POINT_IN_TIME, END_TIME})  # qualifiers that make any statement a changing one
MONTHS = "January February March April May June July August September October November December".split()
_TIME_TEXT = re.compile(r"^(?:(\d{1,2}) )?(?:([A-Z][a-z]+) )?(\d+)( BCE)?$")


def time_key(text: str) -> tuple[int, int, int]:
    """A sortable key for a date as the reader writes it ("1 January 2019", "March 2019", "2019"); 0 for
    an unknown month or day, (-10**9, 0, 0) for text that is no such date ("20th century")."""
    match = _TIME_TEXT.match(text.strip())
    if match is None or (match.group(2) and match.group(2) not in MONTHS):
        return (-(10**9), 0, 0)
    day, month, year, bce = match.groups()
    month_number = MONTHS.index(month) + 1 if month in MONTHS else 0
    return (-int(year) if bce else int(year), month_number, int(day or 0))


def _readable(text: str) -> bool:
    return time_key(text)[0] > 0


@dataclass(frozen=True)
class AsOf:
    """The date a question asks a changing value at: "in"/"on" that date, or "since" it."""

    when: str  # "2019", "March 2019", "1 January 2019"
    since: bool = False  # the value holds from `when` on (a start time with no end)

    @property
    def iso(self) -> str:
        """The date in ISO 8601 at its precision: "2019", "2019-03", "2019-01-01"."""
        year, month, day = time_key(self.when)
        return "-".join([f"{year:04d}", *(f"{part:02d}" for part in (month, day) if part)])


def changes(statement: Statement) -> bool:
    """Whether the statement's value changes over time: a changing property, a point in time or an end
    time."""
    if statement.tail.type == "time":
        return False
    return bool(BOUNDING & statement.qualifiers.keys()) or statement.property in load_changing()


def _whole_year(start: str, end: str) -> int | None:
    """The latest year lying wholly inside [start, end], or None."""
    (first, first_month, first_day), (last, last_month, last_day) = time_key(start), time_key(end)
    if (first_month, first_day) not in ((1, 1), (1, 0)):
        first += 1  # a year-precision start may be any day of that year
    if (last_month, last_day) != (12, 31):
        last -= 1
    return last if last >= first else None


def as_of(statement: Statement) -> AsOf | None:
    """The date a changing statement's value is asked at, from its qualifiers; None when they give none
    or the statement does not change (`changes`)."""
    if not changes(statement):
        return None
    qualifiers = statement.qualifiers
    points = [text for text in qualifiers.get(POINT_IN_TIME, []) if _readable(text)]
    if points:
        return AsOf(max(points, key=time_key))
    starts, ends = qualifiers.get(START_TIME, []), qualifiers.get(END_TIME, [])
    if len(starts) != 1 or not _readable(starts[0]) or len(ends) > 1:
        return None
    if not ends:
        return AsOf(starts[0], since=True)
    if not _readable(ends[0]):
        return None
    year = _whole_year(starts[0], ends[0])
    return AsOf(str(year)) if year is not None else None


def undated_change(statement: Statement, when: str) -> bool:
    """Whether the statement changes over time and `when`, the date its selection
    (`answerable.select`) gives it, is none."""
    return changes(statement) and not when

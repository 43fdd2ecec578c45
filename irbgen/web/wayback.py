"""Wayback Machine addresses for dead links: a timestamp from a citation date and the raw-content URL."""

from __future__ import annotations

import re
from datetime import UTC, datetime

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1
    )
}


def wayback_timestamp(date: str | None) -> str:
    """A Wayback timestamp prefix (YYYY[MM[DD]]) from a citation date as written; today if none."""
    if date:
        text = date.strip().lower()
        match = re.search(r"\b(\d{4})-(\d{1,2})(?:-(\d{1,2}))?\b", text)
        if match:
            year, month, day = match.group(1), int(match.group(2)), match.group(3)
            return f"{year}{month:02d}" + (f"{int(day):02d}" if day else "")
        year_match = re.search(r"\b(1[89]\d\d|20\d\d)\b", text)
        if year_match:
            stamp = year_match.group(1)
            month_match = re.search(r"\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b", text)
            if month_match:
                stamp += f"{_MONTHS[month_match.group(1)]:02d}"
                day_match = re.search(r"\b(\d{1,2})(?:st|nd|rd|th)?\b", text.replace(year_match.group(1), ""))
                if day_match and 1 <= int(day_match.group(1)) <= 31:
                    stamp += f"{int(day_match.group(1)):02d}"
            return stamp
    return datetime.now(UTC).strftime("%Y%m%d")


def wayback_url(url: str, date: str | None = None) -> str:
    """The raw-content (id_) Wayback Machine URL for url near date."""
    return f"https://web.archive.org/web/{wayback_timestamp(date)}id_/{url}"

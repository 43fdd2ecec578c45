"""WARC cache around warcio: write request+response pairs, index them, read a response back.

WARC files are not byte-identical across runs (record ids are random uuids, unless given), but what is
extracted from them is: the `WARC-Date` stored on the first fetch of a URL becomes `WebDocument.fetched`,
and the index keeps the first record per URL, so every rerun reads the same record.
"""

from __future__ import annotations

import io
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import ChunkedDataReader
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from irbgen import __version__

WARC_DATE_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
# Our own WARC header, on truncated records only: the fetch outcome label, so a replay repeats it.
REASON_HEADER = "WARC-Irbgen-Reason"
# WARC-Truncated values (WARC 1.1 section 5.13) for our outcome labels.
TRUNCATED_FOR_REASON = {
    "too_large": "length",
    "truncated": "length",
    "timeout": "time",
    "network": "disconnect",
}
# A response's Date header is trusted as the capture time only this close to the clock.
DATE_HEADER_SKEW = timedelta(days=1)


@dataclass(frozen=True)
class WarcLocation:
    """Where one response record lives, and what the index needs to replay it."""

    url: str
    file: str  # absolute path
    offset: int
    length: int
    warc_date: str
    record_id: str
    status: int


@dataclass(frozen=True)
class StoredResponse:
    """A response read back from a WARC; `body` is as sent (content-encoded), never decompressed here."""

    url: str
    status: int
    reason_phrase: str
    headers: list[tuple[str, str]]
    body: bytes
    warc_date: str
    record_id: str
    truncated: str | None  # the WARC-Truncated value, if the body is incomplete
    reason: str | None  # our outcome label for a truncated record


def format_warc_date(moment: datetime) -> str:
    """A UTC datetime as a WARC-Date (second precision)."""
    return moment.astimezone(UTC).strftime(WARC_DATE_FORMAT)


def capture_date(date_header: str | None, now: datetime | None = None) -> str:
    """The WARC-Date for a response: its Date header when plausible, else the fetch time."""
    now = now or datetime.now(UTC)
    if date_header:
        try:
            parsed = parsedate_to_datetime(date_header)
        except (TypeError, ValueError, IndexError, OverflowError):
            parsed = None
        if parsed is not None and parsed.tzinfo is not None and abs(parsed - now) <= DATE_HEADER_SKEW:
            return format_warc_date(parsed)
    return format_warc_date(now)


def new_record_id(seed: str | None = None) -> str:
    """A WARC-Record-ID: random, or a uuid5 of seed when the caller wants a reproducible file."""
    value = uuid.uuid5(uuid.NAMESPACE_URL, seed) if seed is not None else uuid.uuid4()
    return f"<urn:uuid:{value}>"


class WarcWriter:
    """Appends request+response pairs to gzipped WARC files in one folder, rotating by size."""

    def __init__(
        self,
        directory: Path,
        max_file_bytes: int = 1 << 30,
        prefix: str = "irbgen",
        *,
        filename: str | None = None,
        warcinfo_date: str | None = None,
    ) -> None:
        self.directory = Path(directory)
        self.max_file_bytes = max_file_bytes
        self.prefix = prefix
        self.filename = filename  # one fixed file, never rotated (for reproducible sample WARCs)
        self.warcinfo_date = warcinfo_date
        self._file: io.BufferedWriter | None = None
        self._path: Path | None = None
        self._writer: WARCWriter | None = None
        self._serial = 0
        self._stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())

    @property
    def path(self) -> Path | None:
        """The file being written, if any."""
        return self._path

    def _open(self) -> None:
        """Start a new file (first write, or the current one is full) with a warcinfo record."""
        self.close()
        self.directory.mkdir(parents=True, exist_ok=True)
        if self.filename is not None:
            name = self.filename
            path = self.directory / name
            mode = "wb"
        else:
            while True:
                self._serial += 1
                name = f"{self.prefix}-{self._stamp}-{os.getpid()}-{self._serial:05d}.warc.gz"
                path = self.directory / name
                if not path.exists():
                    break
            mode = "xb"
        self._path = path
        self._file = open(path, mode)  # noqa: SIM115 - closed in close()
        self._writer = WARCWriter(self._file, gzip=True, warc_version="1.1")
        info = self._writer.create_warcinfo_record(
            name, {"software": f"irbgen/{__version__}", "format": "WARC File Format 1.1"}
        )
        if self.warcinfo_date is not None:
            info.rec_headers.replace_header("WARC-Date", self.warcinfo_date)
            info.rec_headers.replace_header("WARC-Record-ID", new_record_id(f"{name}#{self.warcinfo_date}"))
        self._writer.write_record(info)

    def write_exchange(
        self,
        url: str,
        *,
        request_line: str,
        request_headers: Sequence[tuple[str, str]],
        status: int,
        reason_phrase: str,
        http_version: str,
        response_headers: Sequence[tuple[str, str]],
        body: bytes,
        warc_date: str,
        truncated_reason: str | None = None,
        record_id: str | None = None,
    ) -> WarcLocation:
        """Write a request record and its response record; return where the response is."""
        full = self._file is not None and self.filename is None and self._file.tell() >= self.max_file_bytes
        if self._writer is None or full:
            self._open()
        if self._writer is None or self._file is None or self._path is None:
            raise RuntimeError("WARC file is not open")
        response_id = record_id or new_record_id()
        request_id = new_record_id(f"{response_id}#request") if record_id else new_record_id()

        # The body is stored de-chunked, so a Transfer-Encoding header would mislead readers.
        headers = [(k, v) for k, v in response_headers if k.lower() != "transfer-encoding"]
        protocol = http_version if http_version.startswith("HTTP/") else "HTTP/1.1"
        http_headers = StatusAndHeaders(f"{status} {reason_phrase}".strip(), headers, protocol=protocol)
        warc_headers = {"WARC-Record-ID": response_id, "WARC-Date": warc_date}
        if truncated_reason:
            warc_headers["WARC-Truncated"] = TRUNCATED_FOR_REASON.get(truncated_reason, "unspecified")
            warc_headers[REASON_HEADER] = truncated_reason
        response = self._writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            length=len(body),
            http_headers=http_headers,
            warc_headers_dict=warc_headers,
        )
        request = self._writer.create_warc_record(
            url,
            "request",
            payload=io.BytesIO(b""),
            length=0,
            http_headers=StatusAndHeaders(request_line, list(request_headers), is_http_request=True),
            warc_headers_dict={
                "WARC-Record-ID": request_id,
                "WARC-Date": warc_date,
                "WARC-Concurrent-To": response_id,
            },
        )
        self._writer.write_record(request)
        offset = self._file.tell()
        self._writer.write_record(response)
        self._file.flush()
        length = self._file.tell() - offset
        return WarcLocation(url, str(self._path), offset, length, warc_date, response_id, status)

    def close(self) -> None:
        """Close the current file."""
        if self._file is not None:
            self._file.close()
        self._file = None
        self._writer = None


def _response_from_record(record: object, max_body: int | None) -> StoredResponse:
    """A StoredResponse from a warcio response record."""
    rec_headers = record.rec_headers  # type: ignore[attr-defined]
    http_headers = record.http_headers  # type: ignore[attr-defined]
    stream = record.raw_stream  # type: ignore[attr-defined]
    if (http_headers.get_header("Transfer-Encoding") or "").lower() == "chunked":
        stream = ChunkedDataReader(stream, decomp_type=None)  # third-party WARCs may store chunks
    body = stream.read() if max_body is None else stream.read(max_body + 1)
    truncated = rec_headers.get_header("WARC-Truncated")
    reason = rec_headers.get_header(REASON_HEADER)
    if max_body is not None and len(body) > max_body:
        body = body[:max_body]
        truncated, reason = truncated or "length", reason or "too_large"
    try:
        status = int(http_headers.get_statuscode())
    except (TypeError, ValueError):
        status = 0
    statusline = http_headers.statusline or ""
    phrase = statusline.split(" ", 1)[1] if " " in statusline else ""
    return StoredResponse(
        url=rec_headers.get_header("WARC-Target-URI") or "",
        status=status,
        reason_phrase=phrase,
        headers=list(http_headers.headers),
        body=body,
        warc_date=rec_headers.get_header("WARC-Date") or "",
        record_id=rec_headers.get_header("WARC-Record-ID") or "",
        truncated=truncated,
        reason=reason,
    )


def read_response(path: str | Path, offset: int, max_body: int | None = None) -> StoredResponse:
    """The response record at offset in a WARC file; at most max_body body bytes are read."""
    with open(path, "rb") as handle:
        handle.seek(offset)
        for record in ArchiveIterator(handle):
            if record.rec_type != "response" or record.http_headers is None:
                raise ValueError(f"{path}@{offset}: not an HTTP response record")
            return _response_from_record(record, max_body)
    raise ValueError(f"{path}@{offset}: no record")


def iter_response_locations(path: str | Path) -> Iterator[WarcLocation]:
    """Every HTTP response record of a WARC file (gzipped or not), with its offset and length."""
    with open(path, "rb") as handle:
        records = ArchiveIterator(handle)
        for record in records:
            if record.rec_type != "response" or record.http_headers is None:
                continue
            headers = record.rec_headers
            url = headers.get_header("WARC-Target-URI") or ""
            try:
                status = int(record.http_headers.get_statuscode())
            except (TypeError, ValueError):
                status = 0
            date = headers.get_header("WARC-Date") or ""
            record_id = headers.get_header("WARC-Record-ID") or ""
            offset = records.get_record_offset()
            length = records.get_record_length()  # reads the record to its end, in chunks
            yield WarcLocation(url, str(Path(path).resolve()), offset, length, date, record_id, status)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    url TEXT PRIMARY KEY, file TEXT NOT NULL, offset INTEGER NOT NULL, length INTEGER NOT NULL,
    warc_date TEXT NOT NULL, record_id TEXT NOT NULL, status INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS failures (
    url TEXT PRIMARY KEY, reason TEXT NOT NULL, detail TEXT NOT NULL, at TEXT NOT NULL
);
"""


class WarcIndex:
    """SQLite index of one run's WARCs: url -> first response record; url -> network failure."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0)
            self._db.executescript(_SCHEMA)
        return self._db

    def _resolve(self, name: str) -> str:
        """Files are stored relative to the index folder, so a run folder can move."""
        return str(self.path.parent / name) if not os.path.isabs(name) else name

    def lookup(self, url: str) -> WarcLocation | None:
        """The first response stored for url, if any."""
        row = (
            self._conn()
            .execute(
                "SELECT file, offset, length, warc_date, record_id, status FROM responses WHERE url = ?",
                (url,),
            )
            .fetchone()
        )
        if row is None:
            return None
        return WarcLocation(url, self._resolve(row[0]), row[1], row[2], row[3], row[4], row[5])

    def add(self, location: WarcLocation) -> WarcLocation:
        """Index a response unless the URL already has one; return the one the index keeps."""
        file = location.file
        try:
            file = os.path.relpath(file, self.path.parent)
        except ValueError:  # another drive on Windows
            pass
        db = self._conn()
        with db:
            db.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    location.url,
                    file,
                    location.offset,
                    location.length,
                    location.warc_date,
                    location.record_id,
                    location.status,
                ),
            )
        kept = self.lookup(location.url)
        return kept if kept is not None else location

    def failure(self, url: str) -> tuple[str, str] | None:
        """The (reason, detail) of a remembered network failure for url."""
        row = self._conn().execute("SELECT reason, detail FROM failures WHERE url = ?", (url,)).fetchone()
        return (row[0], row[1]) if row else None

    def add_failure(self, url: str, reason: str, detail: str) -> None:
        """Remember that fetching url failed without a response (timeout, dns, refused ...)."""
        db = self._conn()
        with db:
            db.execute(
                "INSERT OR REPLACE INTO failures VALUES (?, ?, ?, ?)",
                (url, reason, detail[:500], format_warc_date(datetime.now(UTC))),
            )

    def forget_failure(self, url: str) -> None:
        """Drop a remembered failure (after a successful retry)."""
        db = self._conn()
        with db:
            db.execute("DELETE FROM failures WHERE url = ?", (url,))

    def close(self) -> None:
        """Close the database."""
        if self._db is not None:
            self._db.close()
            self._db = None


def index_warc_files(paths: Sequence[str | Path]) -> dict[str, WarcLocation]:
    """An in-memory index of given WARC files: url -> its first response record."""
    index: dict[str, WarcLocation] = {}
    for path in paths:
        for location in iter_response_locations(path):
            index.setdefault(location.url, location)
    return index

"""The async fetcher: guarded, polite, bounded, and cached in WARC files so a rerun repeats no fetch.

Every outcome is a `FetchOutcome`; a failure carries a stable label ("http_404", "timeout", "dns",
"connect", "tls", "too_large", "content_type:application/pdf", "redirect_loop", "ssrf_refused",
"not_in_warc", ...) and never raises. Redirects are followed by hand so every hop passes the guard, is
written to the WARC and is replayed from it.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, fields, replace
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any

import certifi
import httpcore
import httpx

from irbgen.web.body import BodyDecoder, FetchFailure
from irbgen.web.fetch_config import FetchConfig
from irbgen.web.guard import GuardedNetworkBackend, HostGuard, ResolveError, URLRefused
from irbgen.web.warc import (
    StoredResponse,
    WarcIndex,
    WarcLocation,
    WarcWriter,
    capture_date,
    index_warc_files,
    read_response,
)
from irbgen.web.wayback import wayback_url

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
DEAD_REASONS = frozenset({"http_404", "http_410", "dns"})  # worth a wayback lookup
SIDE_BODY_CAP = 1 << 20  # redirect and error-page bodies are kept (for the WARC) up to this size
READ_CHUNK = 1 << 16


@dataclass(frozen=True)
class FetchOutcome:
    """The result of fetching one URL: a body, or a failure with a stable `reason` label."""

    url: str
    reason: str = ""  # "" when ok
    detail: str = ""
    final_url: str = ""
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    content_type: str = ""  # media type, e.g. "text/html"
    body: bytes = b""  # decoded (Content-Encoding removed), at most max_bytes
    warc_date: str | None = None
    warc_record_id: str | None = None
    via_wayback: bool = False
    from_warc: bool = False

    @property
    def ok(self) -> bool:
        """True when the fetch produced a usable body."""
        return not self.reason


@dataclass
class _Hop:
    """One request's response, from the network or from a WARC."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    raw: bytes  # as sent: still content-encoded
    truncated_reason: str | None
    warc_date: str
    record_id: str | None
    from_warc: bool
    decoded: bytes | None = None  # set when the body was decoded while streaming

    def header(self, name: str) -> str:
        """The last value of a header, or ""."""
        name = name.lower()
        value = ""
        for key, item in self.headers:
            if key.lower() == name:
                value = item
        return value


def media_type(content_type: str) -> str:
    """The media type of a Content-Type value, lower-case, without parameters."""
    return content_type.split(";", 1)[0].strip().lower()


def normalize_url(url: str) -> str:
    """The form a URL is requested, indexed and replayed under (no fragment, httpx normalisation)."""
    return str(httpx.URL(url).copy_with(fragment=None))


def _failure_label(exc: BaseException) -> tuple[str, str] | None:
    """The outcome label for a network-side exception, or None if it is not one (then it propagates)."""
    if isinstance(exc, URLRefused):
        return exc.label, str(exc)
    if isinstance(exc, ResolveError):
        return "dns", str(exc)
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return "timeout", type(exc).__name__
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError | ssl.CertificateError):
            return "tls", str(cause)
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, httpx.ConnectError):
        return "connect", str(exc)
    if isinstance(exc, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return "protocol", str(exc)
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return "bad_url", str(exc)
    if isinstance(exc, httpx.TransportError):
        return "network", f"{type(exc).__name__}: {exc}"
    return None


class _HostSlot:
    """Per-host politeness: a concurrency limit and a minimum gap between request starts."""

    def __init__(self, per_host: int) -> None:
        self.semaphore = asyncio.Semaphore(per_host)
        self.lock = asyncio.Lock()
        self.next_start = 0.0


class Fetcher:
    """Guarded async HTTP fetcher with per-host politeness and a WARC cache; use `async with`."""

    def __init__(self, config: FetchConfig | None = None, /, **overrides: Any) -> None:
        base = config or FetchConfig()
        self.config = replace(base, **overrides) if overrides else base
        self.guard = HostGuard(self.config.allow_private_hosts, self.config.resolver)
        self.stats: Counter[str] = Counter()
        self._client: httpx.AsyncClient | None = None
        self._writer: WarcWriter | None = None
        self._index: WarcIndex | None = None
        self._given: dict[str, WarcLocation] | None = None
        self._given_lock: asyncio.Lock | None = None
        self._global: asyncio.Semaphore | None = None
        self._hosts: dict[str, _HostSlot] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._in_flight = 0

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> Fetcher:
        """A Fetcher from a flat dict of FetchConfig fields (unknown keys are an error)."""
        known = {f.name for f in fields(FetchConfig)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown fetch options {unknown}; known: {sorted(known)}")
        return cls(FetchConfig(**options))

    async def __aenter__(self) -> Fetcher:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client, the WARC file and the index."""
        self._bind_loop()  # a client from an earlier, closed loop is dropped, not closed
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        self.close()

    def worker_recipe(self, concurrency: int) -> Any:
        """How another process makes its own Fetcher like this one, with CONCURRENCY requests in flight.

        A picklable callable; the new fetcher writes its own WARC files (named by process) to the same
        run directory and shares the index, so neither repeats what the other fetched.
        """
        return functools.partial(Fetcher, replace(self.config, concurrency=concurrency))

    def close(self) -> None:
        """Close the WARC file and the index (safe outside an event loop; idle clients are already shut)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- lazily built resources (the constructor does no I/O) --------------------------------------

    def _warc_dir(self) -> Path | None:
        return self.config.run_dir / "warc" if self.config.run_dir is not None else None

    def _get_index(self) -> WarcIndex | None:
        if self._index is None and self._warc_dir() is not None:
            self._index = WarcIndex(self._warc_dir() / "index.sqlite")  # type: ignore[operator]
        return self._index

    async def _get_given(self) -> dict[str, WarcLocation]:
        assert self._given_lock is not None, "_bind_loop() first"
        async with self._given_lock:  # the first fetches arrive together: index the given WARCs once
            if self._given is None:
                self._given = await asyncio.to_thread(_normalized_index, self.config.warc_files)
                self.stats["given_warcs_indexed"] += 1
        return self._given

    def _get_client(self) -> httpx.AsyncClient:
        if self._client is None:
            cfg = self.config
            ssl_context = ssl.create_default_context(cafile=certifi.where())  # verification always on
            backend = GuardedNetworkBackend(self.guard, cfg.dialer)
            transport = httpx.AsyncHTTPTransport(trust_env=False)
            if not hasattr(transport, "_pool"):
                raise RuntimeError(
                    "httpx.AsyncHTTPTransport has no _pool; the guarded transport needs updating"
                )
            # Swap in a pool that dials through the guard (httpx has no public network_backend option).
            transport._pool = httpcore.AsyncConnectionPool(
                ssl_context=ssl_context,
                max_connections=cfg.concurrency,
                max_keepalive_connections=cfg.concurrency,
                keepalive_expiry=5.0,
                http1=True,
                http2=False,
                network_backend=backend,
            )
            self._client = httpx.AsyncClient(
                transport=transport,
                cookies=httpx.Cookies(CookieJar(policy=DefaultCookiePolicy(allowed_domains=[]))),  # keep none
                follow_redirects=False,
                trust_env=False,  # no proxies or netrc from the environment
                timeout=httpx.Timeout(cfg.timeout),
                headers={
                    "User-Agent": cfg.user_agent,
                    "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
                    "Accept-Encoding": "gzip, deflate",
                },
            )
        return self._client

    def _get_writer(self) -> WarcWriter | None:
        if self._writer is None and self._warc_dir() is not None:
            self._writer = WarcWriter(self._warc_dir(), self.config.warc_max_bytes)  # type: ignore[arg-type]
        return self._writer

    @asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        """Wait for the host's politeness slot, then for a global slot."""
        if self._global is None:
            self._global = asyncio.Semaphore(self.config.concurrency)
        slot = self._hosts.get(host)
        if slot is None:
            slot = self._hosts[host] = _HostSlot(self.config.per_host)
        loop = asyncio.get_running_loop()
        async with slot.semaphore:
            async with slot.lock:
                wait = slot.next_start - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                slot.next_start = loop.time() + self.config.host_delay
            async with self._global:
                yield

    # -- fetching ----------------------------------------------------------------------------------

    def _bind_loop(self) -> None:
        """Loop-bound state (client, semaphores) follows the running loop, e.g. one asyncio.run per stage."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # The previous loop is gone with its sockets; its client cannot be closed from here.
            self._loop, self._client, self._global, self._hosts = loop, None, None, {}
            self._given_lock = asyncio.Lock()
            self._in_flight = 0

    async def fetch(self, url: str, date: str | None = None, archive_url: str | None = None) -> FetchOutcome:
        """Fetch url (following redirects); for a dead link and wayback=True, try an archived copy."""
        self._bind_loop()
        self._in_flight += 1
        try:
            outcome = await self._fetch_chain(url)
            if self.config.wayback and outcome.reason in DEAD_REASONS:
                # Without a citation date, aim at when the dead response was recorded (stable on reruns).
                when = date or (outcome.warc_date or "")[:10] or None
                target = archive_url or wayback_url(url, when)
                archived = await self._fetch_chain(target)
                if archived.ok:
                    outcome = replace(archived, url=url, via_wayback=True)
                else:
                    detail = f"{outcome.detail}; wayback: {archived.reason}".strip("; ")
                    outcome = replace(outcome, detail=detail)
        finally:
            self._in_flight -= 1
            if self._in_flight == 0 and self._client is not None:
                # Idle: close kept-alive connections now, inside this loop, so none outlive it.
                client, self._client = self._client, None
                await client.aclose()
        self.stats[f"outcome_{outcome.reason or 'ok'}"] += 1
        return outcome

    async def _fetch_chain(self, url: str) -> FetchOutcome:
        """Follow url's redirects hop by hop, each guarded, cached and replayable."""
        visited: list[str] = []
        current = url
        spent = [0.0]  # network seconds used so far, against the per-URL deadline
        previous: httpx.URL | None = None
        for _ in range(self.config.max_redirects + 1):
            try:
                parsed = self.guard.check_url(current).copy_with(fragment=None)
            except URLRefused as exc:
                return FetchOutcome(url, exc.label, str(exc), final_url=str(current))
            key = str(parsed)
            if previous is not None and previous.scheme == "https" and parsed.scheme == "http":
                # A downgrade would send the rest of the chain in clear text; we never fall back to http.
                return FetchOutcome(url, "https_downgrade", f"{previous} -> {key}", final_url=key)
            if key in visited:
                return FetchOutcome(url, "redirect_loop", " -> ".join([*visited, key]), final_url=key)
            visited.append(key)
            try:
                hop = await self._hop(parsed, spent)
            except FetchFailure as exc:
                return FetchOutcome(url, exc.label, exc.detail, final_url=key)
            location = hop.header("location")
            if hop.status in REDIRECT_STATUSES and location:
                try:
                    current = str(parsed.join(location.strip()))
                except (httpx.InvalidURL, ValueError) as exc:
                    return FetchOutcome(url, "bad_redirect", str(exc), final_url=key, status=hop.status)
                previous = parsed
                continue
            return self._evaluate(url, hop)
        return FetchOutcome(url, "too_many_redirects", " -> ".join(visited), final_url=visited[-1])

    async def _hop(self, url: httpx.URL, spent: list[float]) -> _Hop:
        """One request: from the run's WARCs, the given WARCs, a remembered failure, or the network."""
        key = str(url)
        index = self._get_index()
        location = index.lookup(key) if index is not None else None
        if location is None and self.config.warc_files:
            location = (await self._get_given()).get(key)
        if location is not None:
            self.stats["warc_hits"] += 1
            stored = await asyncio.to_thread(
                read_response, location.file, location.offset, self.config.max_bytes
            )
            return _hop_from_stored(key, stored)
        if index is not None and self.config.replay_failures:
            remembered = index.failure(key)
            if remembered is not None:
                self.stats["failure_replays"] += 1
                raise FetchFailure(*remembered)
        if self.config.offline:
            raise FetchFailure("not_in_warc", key)
        try:
            return await self._network_hop(url, spent)
        except FetchFailure as exc:
            if index is not None and exc.label != "not_in_warc":
                index.add_failure(key, exc.label, exc.detail)
            raise

    async def _network_hop(self, url: httpx.URL, spent: list[float]) -> _Hop:
        """GET url over the network within the remaining deadline; write the exchange to the WARC."""
        remaining = self.config.deadline - spent[0]
        if remaining <= 0:
            raise FetchFailure("timeout", "deadline")
        client = self._get_client()
        loop = asyncio.get_running_loop()
        async with self._slot(url.host):
            started = loop.time()
            self.stats["network_requests"] += 1
            try:
                async with asyncio.timeout(remaining):
                    return await self._request(client, url)
            except FetchFailure:
                raise
            except Exception as exc:
                label = _failure_label(exc)
                if label is None:
                    raise
                raise FetchFailure(*label) from exc
            finally:
                spent[0] += loop.time() - started

    async def _request(self, client: httpx.AsyncClient, url: httpx.URL) -> _Hop:
        """Send the request, read as much of the body as its outcome needs, and record it."""
        async with client.stream("GET", url) as response:
            headers = list(response.headers.multi_items())
            hop = _Hop(str(url), response.status_code, headers, b"", None, "", None, False)
            refusal = self._refusal(hop) if 200 <= hop.status < 300 else None
            raw: list[bytes] = []
            decoder: BodyDecoder | None = None
            if refusal is None:
                success = 200 <= hop.status < 300
                if success:
                    decoder = BodyDecoder(
                        hop.header("content-encoding"), self.config.max_bytes, self.config.max_ratio
                    )
                cap = self.config.max_bytes if success else min(self.config.max_bytes, SIDE_BODY_CAP)
                refusal = await self._read_body(response, raw, decoder, cap)
            hop.raw = b"".join(raw)
            hop.truncated_reason = refusal
            if decoder is not None and refusal is None:
                try:
                    hop.decoded = decoder.finish()
                except FetchFailure as exc:
                    hop.truncated_reason = exc.label
            hop.warc_date = capture_date(response.headers.get("date"))
            self._record(response, hop)
            return hop

    async def _read_body(
        self, response: httpx.Response, raw: list[bytes], decoder: BodyDecoder | None, cap: int
    ) -> str | None:
        """Stream the body into raw (and decoder); the label of why it was cut short, or None."""
        size = 0
        try:
            async for chunk in response.aiter_raw(READ_CHUNK):
                if decoder is not None:
                    decoder.feed(chunk)  # raises too_large on the decoded size or ratio
                size += len(chunk)
                if size > cap:
                    raw.append(chunk[: max(0, cap - (size - len(chunk)))])
                    return "too_large" if decoder is not None else "truncated"
                raw.append(chunk)
        except FetchFailure as exc:
            raw.append(chunk)
            return exc.label
        except (httpx.TimeoutException, TimeoutError):
            return "timeout"
        except httpx.TransportError as exc:
            label = _failure_label(exc)
            return label[0] if label else "network"
        return None

    def _refusal(self, hop: _Hop) -> str | None:
        """Why a 2xx response's body is not worth reading (type, size, encoding), or None."""
        kind = media_type(hop.header("content-type"))
        if kind and kind not in self.config.content_types:
            return f"content_type:{kind}"
        length = hop.header("content-length")
        if length.isdigit() and int(length) > self.config.max_bytes:
            return "too_large"
        encoding = hop.header("content-encoding").strip().lower()
        if encoding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            return f"content_encoding:{encoding}"
        return None

    def _record(self, response: httpx.Response, hop: _Hop) -> None:
        """Write the exchange to the run's WARC and index it (the index keeps the first per URL)."""
        writer, index = self._get_writer(), self._get_index()
        if writer is None or index is None:
            return
        request = response.request
        target = request.url.raw_path.decode("ascii", "replace")
        location = writer.write_exchange(
            hop.url,
            request_line=f"GET {target} HTTP/1.1",
            request_headers=list(request.headers.multi_items()),
            status=hop.status,
            reason_phrase=response.reason_phrase,
            http_version=response.http_version,
            response_headers=hop.headers,
            body=hop.raw,
            warc_date=hop.warc_date,
            truncated_reason=hop.truncated_reason,
        )
        kept = index.add(location)
        index.forget_failure(hop.url)
        hop.warc_date, hop.record_id = kept.warc_date, kept.record_id

    def _evaluate(self, url: str, hop: _Hop) -> FetchOutcome:
        """The outcome of a final (non-redirect) response, identical for network and WARC replay."""
        headers: dict[str, str] = {}
        for key, value in hop.headers:
            name = key.lower()
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        base = FetchOutcome(
            url,
            final_url=hop.url,
            status=hop.status,
            headers=headers,
            content_type=media_type(hop.header("content-type")),
            warc_date=hop.warc_date or None,
            warc_record_id=hop.record_id,
            from_warc=hop.from_warc,
        )
        if not 200 <= hop.status < 300:
            return replace(base, reason=f"http_{hop.status}")
        refusal = self._refusal(hop) or hop.truncated_reason
        if refusal:
            return replace(base, reason=refusal, detail="body not read in full" if hop.raw else "")
        body = hop.decoded
        if body is None:
            try:
                decoder = BodyDecoder(
                    hop.header("content-encoding"), self.config.max_bytes, self.config.max_ratio
                )
                for start in range(0, len(hop.raw), READ_CHUNK):
                    decoder.feed(hop.raw[start : start + READ_CHUNK])
                body = decoder.finish()
            except FetchFailure as exc:
                return replace(base, reason=exc.label, detail=exc.detail)
        kind = base.content_type or _sniff(body)
        if kind.startswith("content_type:"):
            return replace(base, reason=kind)
        return replace(base, content_type=kind, body=body)


def _normalized_index(warc_files: Sequence[Path]) -> dict[str, WarcLocation]:
    """Where each URL of the given WARC files is stored, by normalized URL (the first record wins)."""
    given: dict[str, WarcLocation] = {}
    for url, location in index_warc_files(list(warc_files)).items():
        try:
            given.setdefault(normalize_url(url), location)
        except (httpx.InvalidURL, ValueError):
            continue  # a record with an unusable target URI can never be asked for
    return given


def _sniff(body: bytes) -> str:
    """A media type for a response that named none: markup, plain text, or unknown binary."""
    head = body[:1024]
    if b"\x00" in head:
        return "content_type:unknown"
    return "text/html" if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") else "text/plain"


_TRUNCATED_LABELS = {"length": "too_large", "time": "timeout", "disconnect": "network"}


def _hop_from_stored(key: str, stored: StoredResponse) -> _Hop:
    """A _Hop from a WARC response record."""
    return _Hop(
        url=key,
        status=stored.status,
        headers=stored.headers,
        raw=stored.body,
        truncated_reason=stored.reason
        or (_TRUNCATED_LABELS.get(stored.truncated, "truncated") if stored.truncated else None),
        warc_date=stored.warc_date,
        record_id=stored.record_id or None,
        from_warc=True,
    )

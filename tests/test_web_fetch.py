"""The guarded fetcher against a real loopback HTTP server: outcomes, limits, SSRF refusals, WARC replay."""

from __future__ import annotations

import asyncio
import gzip
import ipaddress
import socket
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpcore
import pytest

from irbgen.web.body import BodyDecoder, FetchFailure
from irbgen.web.fetch import Fetcher, FetchOutcome, normalize_url
from irbgen.web.guard import HostGuard, ResolveError, SSRFRefused, forbidden_reason
from irbgen.web.warc import WarcWriter, iter_response_locations, new_record_id
from irbgen.web.wayback import wayback_timestamp, wayback_url

PUBLIC_IP = "93.184.216.34"  # what the test resolver says "public.test" is; the test dialer maps it home

PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>River report</title>
<meta property="article:published_time" content="2021-03-04T08:00:00Z"></head><body>
<nav>Home | News | About</nav><article><h1>The valley floods again</h1>
<p>The river burst its banks on Tuesday after three days of heavy rain across the upper valley.</p>
<p>More than two hundred homes were evacuated, according to the regional emergency office.</p>
<p>Engineers said the 1961 dam held, but the spillway ran at full capacity for the first time.</p>
</article><footer>Copyright</footer></body></html>"""


def _gzip_bomb(size: int = 100 * 1024 * 1024) -> bytes:
    """A gzip body that inflates to `size` zero bytes (about 100 KB on the wire for 100 MB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = b"\0" * (1 << 20)
    parts = [packer.compress(chunk) for _ in range(size // len(chunk))]
    parts.append(packer.flush())
    return b"".join(parts)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hang up on purpose (caps, timeouts); the tests assert on what the client saw


class _Server:
    """A threaded loopback HTTP server with scripted routes; it counts requests and their times."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.times: list[tuple[str, float]] = []
        self.sent: Counter[str] = Counter()
        self.bomb = _gzip_bomb()
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0]
                with outer.lock:
                    outer.hits[path] += 1
                    outer.times.append((self.path, time.monotonic()))
                route = outer.routes().get(path)
                if route is None:
                    self.reply(404, b"<html><body>not found</body></html>")
                else:
                    route(self)

            def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                merged = {"Content-Type": "text/html; charset=utf-8", "Content-Length": str(len(body))}
                merged.update(headers or {})
                for key, value in merged.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_port
        self.base = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def routes(self) -> dict[str, Callable[[Any], None]]:
        base = self.base

        def stream(h: Any, total: int, key: str) -> None:
            h.send_response(200)
            h.send_header("Content-Type", "text/html")
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            block = b"<p>" + b"x" * 65530 + b"</p>"
            try:
                while self.sent[key] < total:
                    h.wfile.write(b"%x\r\n%s\r\n" % (len(block), block))
                    with self.lock:
                        self.sent[key] += len(block)
                h.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass  # the client hung up at its cap, as it should

        return {
            "/page.html": lambda h: h.reply(200, PAGE),
            "/gone": lambda h: h.reply(410, b"gone"),
            "/r1": lambda h: h.reply(301, b"", {"Location": "/r2"}),
            "/r2": lambda h: h.reply(302, b"", {"Location": f"{base}/page.html#frag"}),
            "/loop-a": lambda h: h.reply(302, b"", {"Location": "/loop-b"}),
            "/loop-b": lambda h: h.reply(302, b"", {"Location": "/loop-a"}),
            "/slow": lambda h: (time.sleep(3), h.reply(200, PAGE)),
            "/pdf": lambda h: h.reply(200, b"%PDF-1.4 " + b"0" * 5000, {"Content-Type": "application/pdf"}),
            "/big": lambda h: stream(h, 50 * 1024 * 1024, "/big"),
            "/big-declared": lambda h: h.reply(200, b"", {"Content-Length": str(50 * 1024 * 1024)}),
            "/bomb": lambda h: h.reply(200, self.bomb, {"Content-Encoding": "gzip"}),
            "/gz": lambda h: h.reply(200, gzip.compress(PAGE), {"Content-Encoding": "gzip"}),
            "/to-loopback": lambda h: h.reply(302, b"", {"Location": f"{base}/page.html"}),
            "/to-metadata": lambda h: h.reply(302, b"", {"Location": "http://169.254.169.254/latest/"}),
            "/latin1": lambda h: h.reply(
                200,
                "<html><body><article><p>Le café est très réputé dans la région depuis 1920, "
                "selon les archives municipales de la ville.</p></article></body></html>".encode("latin-1"),
                {"Content-Type": "text/html; charset=ISO-8859-1"},
            ),
        }

    def __enter__(self) -> _Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    with _Server() as srv:
        yield srv


def run(coro: Any) -> Any:
    return asyncio.run(coro)


async def fetch_all(fetcher: Fetcher, *urls: str, **kwargs: Any) -> list[FetchOutcome]:
    async with fetcher:
        return list(await asyncio.gather(*(fetcher.fetch(u, **kwargs) for u in urls)))


def local(tmp_path: Path | None = None, **overrides: Any) -> Fetcher:
    """A fetcher allowed to reach the loopback server, with short limits."""
    options: dict[str, Any] = {"allow_private_hosts": True, "host_delay": 0.0, "timeout": 2.0}
    if tmp_path is not None:
        options["run_dir"] = tmp_path
    options.update(overrides)
    return Fetcher(**options)


class _Dialer(httpcore.AsyncNetworkBackend):
    """Test sockets: PUBLIC_IP is dialled as 127.0.0.1; every dialled address is recorded."""

    def __init__(self) -> None:
        self.inner = httpcore.AnyIOBackend()
        self.dialled: list[str] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        self.dialled.append(host)
        target = "127.0.0.1" if host == PUBLIC_IP else host
        return await self.inner.connect_tcp(target, port, timeout=timeout)

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


def fake_dns(table: dict[str, list[str]]) -> Callable[[str, int], Any]:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise ResolveError(f"{host}: not found")
        return table[host]

    return resolve


# -- outcomes ------------------------------------------------------------------------------------------


def test_html_page_is_fetched(server: _Server, tmp_path: Path) -> None:
    (outcome,) = run(fetch_all(local(tmp_path), f"{server.base}/page.html"))
    assert outcome.ok and outcome.status == 200 and outcome.content_type == "text/html"
    assert outcome.body == PAGE
    assert outcome.warc_record_id and outcome.warc_date and not outcome.from_warc


def test_gzip_body_is_decoded(server: _Server) -> None:
    (outcome,) = run(fetch_all(local(), f"{server.base}/gz"))
    assert outcome.ok and outcome.body == PAGE


def test_error_statuses_are_labelled(server: _Server) -> None:
    missing, gone = run(fetch_all(local(), f"{server.base}/missing", f"{server.base}/gone"))
    assert (missing.reason, missing.status) == ("http_404", 404)
    assert gone.reason == "http_410"


def test_redirect_chain_is_followed(server: _Server) -> None:
    (outcome,) = run(fetch_all(local(), f"{server.base}/r1"))
    assert outcome.ok
    assert outcome.url == f"{server.base}/r1"
    assert outcome.final_url == f"{server.base}/page.html"  # the fragment is dropped


def test_redirect_loop(server: _Server) -> None:
    (outcome,) = run(fetch_all(local(), f"{server.base}/loop-a"))
    assert outcome.reason == "redirect_loop"
    (limited,) = run(fetch_all(local(max_redirects=1), f"{server.base}/r1"))
    assert limited.reason == "too_many_redirects"


def test_slow_response_times_out(server: _Server) -> None:
    start = time.monotonic()
    (outcome,) = run(fetch_all(local(timeout=0.5), f"{server.base}/slow"))
    assert outcome.reason == "timeout"
    assert time.monotonic() - start < 2.5
    (deadline,) = run(fetch_all(local(timeout=5.0, deadline=0.4), f"{server.base}/slow"))
    assert deadline.reason == "timeout"


def test_pdf_is_refused_by_content_type(server: _Server) -> None:
    (outcome,) = run(fetch_all(local(), f"{server.base}/pdf"))
    assert outcome.reason == "content_type:application/pdf"
    assert outcome.body == b""


def test_oversized_body_is_cut_without_reading_it_all(server: _Server) -> None:
    start = time.monotonic()
    big, declared = run(
        fetch_all(local(max_bytes=1024 * 1024), f"{server.base}/big", f"{server.base}/big-declared")
    )
    assert big.reason == "too_large" and declared.reason == "too_large"
    assert time.monotonic() - start < 5
    time.sleep(0.2)
    assert server.sent["/big"] < 20 * 1024 * 1024  # the server was cut off far before its 50 MiB


def test_gzip_bomb_is_too_large_quickly(server: _Server, tmp_path: Path) -> None:
    start = time.monotonic()
    (outcome,) = run(fetch_all(local(tmp_path), f"{server.base}/bomb"))
    assert outcome.reason == "too_large"
    assert time.monotonic() - start < 3
    # the replay from the WARC gives the same label
    (again,) = run(fetch_all(local(tmp_path), f"{server.base}/bomb"))
    assert again.reason == "too_large" and again.from_warc


def test_body_decoder_caps_decoded_bytes_and_ratio() -> None:
    bomb = _gzip_bomb(20 * 1024 * 1024)
    decoder = BodyDecoder("gzip", max_bytes=50 * 1024 * 1024, max_ratio=100)
    with pytest.raises(FetchFailure, match="ratio"):
        for start in range(0, len(bomb), 65536):
            decoder.feed(bomb[start : start + 65536])
    assert decoder.size <= 2 * 1024 * 1024  # stopped near the 1 MiB ratio floor, not at 20 MiB
    plain = BodyDecoder("deflate", max_bytes=1000, max_ratio=100)
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    plain.feed(raw_deflate.compress(b"hello") + raw_deflate.flush())
    assert plain.finish() == b"hello"


def test_tls_verification_is_on(tmp_path: Path) -> None:
    """A self-signed certificate fails with "tls"; there is no fallback to http."""
    pytest.importorskip("cryptography")
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    srv = _Server()
    srv.httpd.socket = context.wrap_socket(srv.httpd.socket, server_side=True)
    with srv:
        (outcome,) = run(fetch_all(local(), f"https://127.0.0.1:{srv.port}/page.html"))
    assert outcome.reason == "tls"
    assert "CERTIFICATE_VERIFY_FAILED" in outcome.detail


def test_connection_refused_is_connect() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (outcome,) = run(fetch_all(local(), f"http://127.0.0.1:{port}/"))
    assert outcome.reason == "connect"


# -- SSRF guard ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "169.254.1.1",
        "0.0.0.0",
        "100.64.0.1",
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "64:ff9b::a00:1",
        "2002:7f00:1::",
        "100.100.100.200",
        "192.0.2.1",
        "2001:db8::1",
    ],
)
def test_forbidden_addresses(address: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses(address: str) -> None:
    assert forbidden_reason(ipaddress.ip_address(address)) is None


def test_guard_rules() -> None:
    guard = HostGuard(resolver=fake_dns({"mixed.test": [PUBLIC_IP, "10.0.0.1"], "public.test": [PUBLIC_IP]}))
    for url, label in [
        ("ftp://example.org/", "unsupported_scheme"),
        ("file:///etc/passwd", "unsupported_scheme"),
        ("http://user:pw@example.org/", "ssrf_refused"),
        ("http://[::1]/", "ssrf_refused"),
        ("http://metadata.google.internal/", "ssrf_refused"),
        ("http://10.0.0.1/", "ssrf_refused"),
    ]:
        with pytest.raises(Exception) as info:
            guard.check_url(url)
        assert info.value.label == label, url  # type: ignore[attr-defined]
    assert run(guard.resolve("public.test", 80)) == [ipaddress.ip_address(PUBLIC_IP)]
    with pytest.raises(SSRFRefused):  # one private address among public ones refuses the host
        run(guard.resolve("mixed.test", 80))
    with pytest.raises(ResolveError):
        run(guard.resolve("nowhere.test", 80))


def test_direct_loopback_and_metadata_are_refused(server: _Server) -> None:
    before = server.hits["/page.html"]
    port = server.port
    outcomes = run(
        fetch_all(
            Fetcher(),
            f"{server.base}/page.html",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://metadata.google.internal/computeMetadata/v1/",
            f"http://localhost:{port}/page.html",
            f"http://[::ffff:127.0.0.1]:{port}/page.html",
            f"http://2130706433:{port}/page.html",
            f"http://0177.0.0.1:{port}/page.html",  # resolver tricks
        )
    )
    assert [o.reason for o in outcomes[:6]] == ["ssrf_refused"] * 6
    assert all(o.reason in ("ssrf_refused", "bad_url", "dns") for o in outcomes[6:]), outcomes[6:]
    assert server.hits["/page.html"] == before


def test_public_name_redirecting_to_loopback_is_refused(server: _Server) -> None:
    dialer = _Dialer()
    fetcher = Fetcher(resolver=fake_dns({"public.test": [PUBLIC_IP]}), dialer=dialer, host_delay=0.0)
    before = server.hits["/page.html"]
    ok, to_loopback, to_metadata = run(
        fetch_all(
            fetcher,
            f"http://public.test:{server.port}/page.html",
            f"http://public.test:{server.port}/to-loopback",
            f"http://public.test:{server.port}/to-metadata",
        )
    )
    assert ok.ok  # the first hop itself is allowed: its name resolves to a public address
    assert (to_loopback.reason, to_loopback.final_url) == ("ssrf_refused", f"{server.base}/page.html")
    assert to_metadata.reason == "ssrf_refused"
    assert server.hits["/page.html"] == before + 1  # only the allowed fetch reached the page
    assert set(dialer.dialled) == {PUBLIC_IP}  # the socket went to the checked address, nowhere else


def test_name_resolving_to_private_address_is_never_dialled(server: _Server) -> None:
    dialer = _Dialer()
    fetcher = Fetcher(resolver=fake_dns({"rebind.test": ["127.0.0.1"]}), dialer=dialer)
    (outcome,) = run(fetch_all(fetcher, f"http://rebind.test:{server.port}/page.html"))
    assert outcome.reason == "ssrf_refused" and dialer.dialled == []
    (dns,) = run(fetch_all(Fetcher(resolver=fake_dns({})), "http://nowhere.test/"))
    assert dns.reason == "dns"


# -- WARC cache, replay, offline -------------------------------------------------------------------------


def test_rerun_reads_from_warc_with_no_network(server: _Server, tmp_path: Path) -> None:
    urls = [
        f"{server.base}/page.html?rerun",
        f"{server.base}/r1",
        f"{server.base}/missing-rerun",
        f"{server.base}/pdf?rerun",
    ]
    first = run(fetch_all(local(tmp_path), *urls))
    hits = sum(server.hits.values())
    fetcher = local(tmp_path)
    second = run(fetch_all(fetcher, *urls))
    assert sum(server.hits.values()) == hits  # zero requests reached the server
    assert fetcher.stats["network_requests"] == 0
    for a, b in zip(first, second, strict=True):
        assert (a.reason, a.status, a.final_url, a.body, a.warc_date, a.warc_record_id) == (
            b.reason,
            b.status,
            b.final_url,
            b.body,
            b.warc_date,
            b.warc_record_id,
        )
        assert b.from_warc
    assert [o.reason for o in second] == ["", "", "http_404", "content_type:application/pdf"]
    offline = run(fetch_all(local(tmp_path, offline=True), *urls, f"{server.base}/never-fetched"))
    assert [o.reason for o in offline] == ["", "", "http_404", "content_type:application/pdf", "not_in_warc"]
    warcs = list((tmp_path / "warc").glob("*.warc.gz"))
    assert len(warcs) == 1
    assert {loc.status for loc in iter_response_locations(warcs[0])} == {200, 301, 302, 404}


def test_failures_are_remembered(server: _Server, tmp_path: Path) -> None:
    (first,) = run(fetch_all(local(tmp_path, timeout=0.3), f"{server.base}/slow?remember"))
    hits = server.hits["/slow"]
    (second,) = run(fetch_all(local(tmp_path, timeout=0.3), f"{server.base}/slow?remember"))
    assert first.reason == second.reason == "timeout" and server.hits["/slow"] == hits
    (retry,) = run(
        fetch_all(local(tmp_path, timeout=0.3, replay_failures=False), f"{server.base}/slow?remember")
    )
    assert retry.reason == "timeout" and server.hits["/slow"] == hits + 1


def test_offline_miss_is_not_in_warc(tmp_path: Path) -> None:
    (outcome,) = run(fetch_all(Fetcher(run_dir=tmp_path, offline=True), "https://example.org/page"))
    assert outcome.reason == "not_in_warc"
    (no_run_dir,) = run(fetch_all(Fetcher(offline=True), "https://example.org/page"))
    assert no_run_dir.reason == "not_in_warc"


def _write_warc(path: Path, records: list[tuple[str, int, dict[str, str], bytes]]) -> Path:
    writer = WarcWriter(path.parent, filename=path.name, warcinfo_date="2024-01-01T00:00:00Z")
    for url, status, headers, body in records:
        writer.write_exchange(
            url,
            request_line="GET / HTTP/1.1",
            request_headers=[("Host", "x")],
            status=status,
            reason_phrase="",
            http_version="HTTP/1.1",
            response_headers=list(headers.items()),
            body=body,
            warc_date="2024-01-02T03:04:05Z",
            record_id=new_record_id(url),
        )
    writer.close()
    return path


def test_given_warc_files_wayback_and_downgrade(tmp_path: Path) -> None:
    html = {"Content-Type": "text/html"}
    archived = "https://web.archive.org/web/20200101id_/http://dead.test/page"
    warc = _write_warc(
        tmp_path / "given.warc.gz",
        [
            ("http://dead.test/page", 404, html, b"gone"),
            (archived, 200, html, PAGE),
            ("https://secure.test/a", 302, {"Location": "http://secure.test/b"}, b""),
            ("http://secure.test/b", 200, html, PAGE),
            ("http://Example.TEST/x#frag", 200, html, PAGE),
        ],
    )
    fetcher = Fetcher(offline=True, warc_files=[warc], wayback=True)
    dead, downgrade, normalized = run(
        fetch_all(
            fetcher,
            "http://dead.test/page",
            "https://secure.test/a",
            "http://example.test/x",
            date="1 January 2020",
        )
    )
    assert dead.ok and dead.via_wayback and dead.body == PAGE and dead.url == "http://dead.test/page"
    assert dead.final_url == archived and dead.warc_date == "2024-01-02T03:04:05Z"
    assert downgrade.reason == "https_downgrade"
    assert normalized.ok
    assert fetcher.stats["given_warcs_indexed"] == 1  # the first fetches came together: indexed once
    (plain,) = run(fetch_all(Fetcher(offline=True, warc_files=[warc]), "http://dead.test/page"))
    assert plain.reason == "http_404"  # no wayback unless asked


def test_wayback_helpers() -> None:
    assert wayback_timestamp("2019-05-03") == "20190503"
    assert wayback_timestamp("3 May 2019") == "20190503"
    assert wayback_timestamp("May 2019") == "201905"
    assert wayback_timestamp("2019") == "2019"
    assert len(wayback_timestamp(None)) == 8
    assert (
        wayback_url("http://a.test/x", "2020-01-01")
        == "https://web.archive.org/web/20200101id_/http://a.test/x"
    )
    assert normalize_url("HTTP://A.Test/x#y") == "http://a.test/x"


def test_per_host_politeness(server: _Server) -> None:
    # Arrival times are taken on the server, where a busy machine adds scheduling jitter: a long delay
    # and a loose bound keep the check about politeness, not about the machine's load.
    fetcher = local(host_delay=1.0, per_host=2)
    marker = f"polite{time.monotonic_ns()}"
    outcomes = run(fetch_all(fetcher, *(f"{server.base}/page.html?{marker}={i}" for i in range(3))))
    assert all(o.ok for o in outcomes)
    starts = sorted(t for path, t in server.times if marker in path)
    assert len(starts) == 3
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert min(gaps) >= 0.6, gaps


def test_constructor_does_no_io(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    Fetcher(run_dir=run_dir, warc_files=[tmp_path / "missing.warc.gz"])
    assert not run_dir.exists()
    with pytest.raises(ValueError, match="concurrency"):
        Fetcher(concurrency=0)


def test_warc_rotation_and_replay(server: _Server, tmp_path: Path) -> None:
    urls = [f"{server.base}/page.html?rot={i}" for i in range(3)]
    first = run(fetch_all(local(tmp_path, warc_max_bytes=1), *urls))
    assert len(list((tmp_path / "warc").glob("*.warc.gz"))) == 3  # one exchange per file at this size
    fetcher = local(tmp_path, offline=True)
    again = run(fetch_all(fetcher, *urls))
    assert [o.warc_record_id for o in again] == [o.warc_record_id for o in first]
    assert all(o.body == PAGE for o in again)


def test_from_options_names_unknown_keys() -> None:
    with pytest.raises(ValueError, match="unknown fetch options"):
        Fetcher.from_options({"concurency": 3})
    assert Fetcher.from_options({"offline": True}).config.offline


def test_one_fetcher_across_event_loops(server: _Server) -> None:
    fetcher = local()
    first = asyncio.run(fetcher.fetch(f"{server.base}/page.html?loop=1"))
    second = asyncio.run(fetcher.fetch(f"{server.base}/page.html?loop=2"))  # a new loop, as per stage run
    fetcher.close()
    assert first.ok and second.ok


def test_hung_dns_lookup_is_bounded_by_the_connect_timeout() -> None:
    async def hang(host: str, port: int) -> list[str]:
        await asyncio.sleep(30)
        return [PUBLIC_IP]

    start = time.monotonic()
    (outcome,) = run(fetch_all(Fetcher(resolver=hang, timeout=0.3), "http://slow-dns.test/"))
    assert outcome.reason == "dns" and "timed out" in outcome.detail
    assert time.monotonic() - start < 2

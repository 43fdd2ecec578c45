"""SSRF guard: only http(s) URLs without credentials, and only to hosts whose every address is public.

The check runs where the connection is made. `GuardedNetworkBackend` plugs into httpcore's connection
pool: it resolves the host once, refuses the whole host if any address is not public, then dials one of
exactly those checked addresses (TLS still verifies the certificate against the hostname). So there is
no gap between "checked" and "connected" for DNS rebinding to exploit, and every connection (the first
hop, every redirect, every wayback lookup) passes through the same check.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import httpcore
import httpx

# An async resolver: (host, port) -> IP address strings. Injectable so tests can make a name look public.
Resolver = Callable[[str, int], Awaitable[list[str]]]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = frozenset({"http", "https"})

# Cloud metadata endpoints, refused by name and by address even though most are link-local anyway.
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata.goog", "metadata", "instance-data"})
# AWS/GCP/Azure (IPv4), AWS (IPv6), Alibaba Cloud.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200")
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


class URLRefused(Exception):
    """A URL the fetcher will not request; `label` is the outcome label, the message says which rule."""

    def __init__(self, label: str, message: str) -> None:
        super().__init__(message)
        self.label = label


class SSRFRefused(URLRefused):
    """A URL, host or address that could reach a private network; outcome label "ssrf_refused"."""

    def __init__(self, message: str) -> None:
        super().__init__("ssrf_refused", message)


class ResolveError(Exception):
    """The host name did not resolve."""


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address getaddrinfo gives for host (TCP), in its order, without duplicates."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ResolveError(f"{host}: {exc}") from exc
    seen: dict[str, None] = {}
    for _family, _type, _proto, _canon, sockaddr in infos:
        seen.setdefault(str(sockaddr[0]), None)
    return list(seen)


def forbidden_reason(ip: IPAddress) -> str | None:
    """Why an address is not public (None when it is), looking inside IPv4-in-IPv6 forms too."""
    if ip in METADATA_ADDRESSES:
        return "cloud metadata address"
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner = forbidden_reason(embedded)
            return f"IPv6 embedding {embedded}: {inner}" if inner else None
    checks = (
        (ip.is_unspecified, "unspecified"),
        (ip.is_loopback, "loopback"),
        (ip.is_link_local, "link-local"),
        (ip.is_multicast, "multicast"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "carrier-grade NAT"),
        (ip.is_private, "private"),
        (ip.is_reserved, "reserved"),
        (not ip.is_global, "not globally routable"),
    )
    for hit, reason in checks:
        if hit:
            return reason
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address inside an IPv4-mapped, 6to4, Teredo or NAT64 IPv6 address, if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64 or ip in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    # IPv4-compatible ::a.b.c.d (deprecated, still routed by some stacks); :: and ::1 are handled above.
    if int(ip) >> 32 == 0 and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip))
    return None


class HostGuard:
    """Decides whether a URL may be fetched and which addresses a host may be reached at."""

    def __init__(self, allow_private_hosts: bool = False, resolver: Resolver | None = None) -> None:
        self.allow_private_hosts = allow_private_hosts
        self.resolver: Resolver = resolver or system_resolver

    def check_url(self, url: str | httpx.URL) -> httpx.URL:
        """The parsed URL if its scheme, credentials and host are acceptable; else raise SSRFRefused."""
        try:
            parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise URLRefused("bad_url", f"unparseable URL: {exc}") from exc
        if parsed.scheme not in ALLOWED_SCHEMES:
            raise URLRefused("unsupported_scheme", f"scheme {parsed.scheme!r} is not http or https")
        if parsed.userinfo:
            raise SSRFRefused("URL carries credentials")
        host = parsed.host
        if not host:
            raise URLRefused("bad_url", "URL has no host")
        self.check_hostname(host)
        literal = _parse_ip(host)
        if literal is not None:
            self.check_address(literal)
        return parsed

    def check_hostname(self, host: str) -> None:
        """Refuse metadata host names (they resolve to link-local addresses on clouds anyway)."""
        name = host.lower().rstrip(".")
        if name in METADATA_HOSTS and not self.allow_private_hosts:
            raise SSRFRefused(f"{host} is a cloud metadata host")

    def check_address(self, ip: IPAddress) -> None:
        """Raise SSRFRefused if ip is not public (unless private hosts are allowed)."""
        if self.allow_private_hosts:
            return
        reason = forbidden_reason(ip)
        if reason:
            raise SSRFRefused(f"{ip} is {reason}")

    async def resolve(self, host: str, port: int) -> list[IPAddress]:
        """All addresses of host, each checked; raise SSRFRefused if any is refused, ResolveError if none."""
        self.check_hostname(host)
        literal = _parse_ip(host)
        if literal is not None:
            addresses: list[IPAddress] = [literal]
        else:
            raw = await self.resolver(host, port)
            addresses = []
            for item in raw:
                ip = _parse_ip(item)
                if ip is None:
                    raise ResolveError(f"{host}: resolver returned {item!r}, not an address")
                addresses.append(ip)
        if not addresses:
            raise ResolveError(f"{host}: no addresses")
        # All, not any: a name with one public and one private address is refused as a whole, since
        # the connection could land on either.
        for ip in addresses:
            self.check_address(ip)
        return addresses


def _parse_ip(text: str) -> IPAddress | None:
    """An address from a literal (brackets and IPv6 zone allowed), or None for a name."""
    candidate = text.strip("[]")
    try:
        return ipaddress.ip_address(candidate)
    except ValueError:
        pass
    if "%" in candidate:  # a zone id (fe80::1%eth0) is only ever link-local
        try:
            return ipaddress.ip_address(candidate.split("%", 1)[0])
        except ValueError:
            return None
    return None


class GuardedNetworkBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that dials only addresses the guard has just checked."""

    def __init__(self, guard: HostGuard, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self.guard = guard
        self.inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        """Resolve and check host, then connect to the first checked address that answers."""
        try:
            async with asyncio.timeout(timeout):  # a hung lookup counts against the connect timeout
                addresses = await self.guard.resolve(host, port)
        except TimeoutError as exc:
            raise ResolveError(f"{host}: lookup timed out") from exc
        last: Exception | None = None
        for ip in addresses:
            try:
                return await self.inner.connect_tcp(
                    str(ip),
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                last = exc
        raise last or ResolveError(f"{host}: no addresses")

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.AsyncNetworkStream:
        """Unix sockets are never used for fetching."""
        raise SSRFRefused("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        """Delegate to the inner backend."""
        await self.inner.sleep(seconds)

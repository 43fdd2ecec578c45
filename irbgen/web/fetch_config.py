"""What a Fetcher is configured with, importable without the HTTP stack (see irbgen.web.deferred)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from irbgen import __version__

if TYPE_CHECKING:
    import httpcore

    from irbgen.web.guard import Resolver

USER_AGENT = f"irbgen/{__version__} (+research benchmark builder)"
DEFAULT_CONTENT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")


@dataclass(frozen=True)
class FetchConfig:
    """Everything a Fetcher is configured with; constructing it does no I/O."""

    run_dir: Path | None = None  # WARCs and their index go to run_dir/warc/; None keeps nothing
    concurrency: int = 16  # requests in flight, all hosts together
    per_host: int = 2  # requests in flight to one host
    host_delay: float = 0.5  # seconds between the starts of two requests to one host
    timeout: float = 15.0  # connect / read / write timeout, seconds
    deadline: float = 60.0  # total network time for one URL, redirects included, seconds
    max_bytes: int = 5 * 1024 * 1024  # cap on wire bytes and on decoded bytes
    max_ratio: float = 100.0  # decoded / wire bytes above which a body is a decompression bomb
    content_types: tuple[str, ...] = DEFAULT_CONTENT_TYPES
    max_redirects: int = 5
    allow_private_hosts: bool = False  # only for tests and intranet use
    user_agent: str = USER_AGENT
    wayback: bool = False  # try the Wayback Machine for dead links (404, 410, DNS failure)
    offline: bool = False  # read only from WARCs; a miss is "not_in_warc"
    warc_files: tuple[Path, ...] = ()  # extra WARCs to read from (read-only)
    warc_max_bytes: int = 1 << 30  # rotate the run's WARC file past this size
    replay_failures: bool = True  # a rerun repeats a remembered timeout / dns / ... instead of retrying
    resolver: Resolver | None = field(default=None, repr=False)  # test hook: DNS
    dialer: httpcore.AsyncNetworkBackend | None = field(default=None, repr=False)  # test hook: sockets

    def __post_init__(self) -> None:
        for name in ("concurrency", "per_host", "max_bytes", "max_redirects", "warc_max_bytes"):
            value = getattr(self, name)
            if value < (0 if name == "max_redirects" else 1):
                raise ValueError(f"FetchConfig.{name} must be positive, got {value}")
        for name in ("host_delay", "timeout", "deadline", "max_ratio"):
            if getattr(self, name) < 0:
                raise ValueError(f"FetchConfig.{name} must not be negative")
        object.__setattr__(self, "warc_files", tuple(Path(p) for p in self.warc_files))
        object.__setattr__(self, "content_types", tuple(t.lower() for t in self.content_types))
        if self.run_dir is not None:
            object.__setattr__(self, "run_dir", Path(self.run_dir))

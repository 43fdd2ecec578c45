"""A fetcher for a process that may never fetch.

Importing the fetcher (irbgen.web.fetch) loads the HTTP stack (httpx, httpcore, certifi, warcio): about
0.1-0.2 s of CPU. A build whose fetches run on processes of their own (irbgen.pipeline.host_shards) or on
Ray's I/O actors hands its driver's fetcher on only as a recipe, so the driver holds a `DeferredFetcher`,
which makes the Fetcher the first time this process uses it for anything else.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from irbgen.web.fetch_config import FetchConfig

if TYPE_CHECKING:
    from irbgen.web.fetch import Fetcher


def make_fetcher(config: FetchConfig) -> Fetcher:
    """A Fetcher of CONFIG (the HTTP stack loaded here)."""
    from irbgen.web.fetch import Fetcher

    return Fetcher(config)


class DeferredFetcher:
    """A Fetcher's configuration and recipe, the Fetcher itself made on first use in this process."""

    def __init__(self, config: FetchConfig) -> None:
        self.config = config
        self._made: Fetcher | None = None

    def worker_recipe(self, concurrency: int) -> Any:
        """As `Fetcher.worker_recipe`, without making a Fetcher here."""
        return functools.partial(make_fetcher, replace(self.config, concurrency=concurrency))

    async def aclose(self) -> None:
        if self._made is not None:
            await self._made.aclose()

    def close(self) -> None:
        if self._made is not None:
            self._made.close()

    def __getattr__(self, name: str) -> Any:
        """Anything else is the Fetcher's, which is made now if it is not yet."""
        if name.startswith("_"):
            raise AttributeError(name)
        if self._made is None:
            self._made = make_fetcher(self.config)
        return getattr(self._made, name)

"""How a review orders its samples, and whether the samples judged form a random sample.

Every judgment records the order its sample was shown in (`Draw`): a random order drawn with a seed, as
`irbgen audit` draws, or file order. The judged samples are a random sample only when they were all
judged in one random order and are its first N (a prefix of a random draw is a random sample); only
then does a score carry an interval.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import ConfigDict

from irbgen.audit.publish import random_draw
from irbgen.audit.sheet import draw
from irbgen.records import Record

NO_INTERVAL = "not a random sample, no interval"
Order = Literal["random", "file"]


class Draw(Record):
    """The order a review showed its samples in: random with SEED, or file order; SIZE of POPULATION."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    order: Order
    seed: int | None = None  # of a random order
    size: int | None = None  # --sample N; None: every sample
    population: int  # samples in samples.jsonl when the order was drawn

    def ids(self, ids: Sequence[str]) -> list[str]:
        """The sample ids shown, in order, out of IDS (samples.jsonl in file order)."""
        if self.order == "file":
            return list(ids[: self.size] if self.size is not None else ids)
        return [ids[n] for n in draw(len(ids), self.size or len(ids), self.seed or 0)]


@dataclass(frozen=True)
class Drawn:
    """How the judged samples were chosen, as the card and the command say it."""

    random: bool  # a random sample: an interval applies
    seed: int
    text: str


def random_sample(size: int, seed: int) -> Drawn:
    """A random sample of SIZE drawn with SEED."""
    return Drawn(True, seed, random_draw(size, seed))


def describe(draws: Iterable[Draw | None], judged: set[str], ids: Sequence[str]) -> Drawn:
    """How the JUDGED samples (out of IDS, in file order) were chosen, given the draws they were judged in."""
    found = {_key(d): d for d in draws}.values()
    if None in found:
        return Drawn(False, 0, f"in an order not recorded (judged with an older irbgen): {NO_INTERVAL}")
    if len(found) > 1:
        return Drawn(
            False, 0, f"in {len(found)} different orders (other --order, --seed or --sample): {NO_INTERVAL}"
        )
    (only,) = found
    assert only is not None
    if only.order == "file":
        return Drawn(False, 0, f"in file order: {NO_INTERVAL}")
    seed = only.seed or 0
    if only.population != len(ids):
        return Drawn(
            False,
            seed,
            f"at random from {only.population} samples, but there are {len(ids)} now: {NO_INTERVAL}",
        )
    shown = only.ids(ids)
    position = {sample: n for n, sample in enumerate(shown)}
    outside = judged - set(position)
    if outside:
        return Drawn(
            False, seed, f"at random with seed {seed}, but {len(outside)} judged are not in it: {NO_INTERVAL}"
        )
    reach = max((position[sample] for sample in judged), default=-1) + 1
    if reach > len(judged):
        return Drawn(
            False,
            seed,
            f"at random with seed {seed}, but the first {reach} in that order include "
            f"{reach - len(judged)} not judged: {NO_INTERVAL}",
        )
    return random_sample(len(judged), seed)


def _key(draw: Draw | None) -> tuple | None:
    """A cheap key of a draw (hashing the model itself is slow over many judgments)."""
    return None if draw is None else (draw.order, draw.seed, draw.size, draw.population)

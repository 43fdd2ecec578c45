"""Who called the model, how often, with what result and at what cost: counts per stage and model.

Counts and what they mean:
  calls       HTTP requests made (retries and repair calls included)
  retries     requests that repeated a failed one
  ok          calls that ended with a usable reply from the server
  cached      calls answered from the response cache (no request)
  failures    calls that ended with a recorded failure
  prompt_tokens, completion_tokens, cost   as reported by the server, priced from the settings
  unsettled   requests whose real cost is not known (in flight, killed in flight, timed out, cut off,
              unreadable reply): each counts in `cost` at the worst case reserved for it

So ok + cached + failures is the number of `complete()` calls. A saved ledger can be loaded and added
to, so a resumed run reports the totals of all its attempts.

Under a budget every request first reserves its worst-case cost (`reserve`), which counts in `cost`
until the reply replaces it with the real cost (`record_usage`) or an error answer, which is not
billed, releases it (`release`). So the budget is never passed by the requests in flight, and a request
whose reply never came counts at its worst case, since a provider may bill it.

A ledger opened on a journal (`Ledger.open(DIR / "ledger.jsonl")`) appends one JSON line per change as
it happens, in one write each, so a killed process has recorded every request it sent; the file is
fsynced every JOURNAL_SYNC_LINES lines and on close. Opening sums the journal, so a budget counts every
run into the same directory. A reservation is a line with "reserve" (its id) and "reserved" (USD); the
line that settles it names the id in "settle"; a reservation no line settles counts at its reserved cost.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import asdict, dataclass, fields
from itertools import count
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.io import write_json
from irbgen.llm.types import BudgetExceeded, Usage

LEDGER_FORMAT = 1
JOURNAL = "ledger.jsonl"
JOURNAL_SYNC_LINES = 64


@dataclass
class LedgerStats:
    """Counts for one (stage, model), or a sum of them."""

    calls: int = 0
    retries: int = 0
    ok: int = 0
    cached: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    unsettled: int = 0

    def add(self, other: LedgerStats) -> LedgerStats:
        """Add another's counts into this one."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self

    def to_dict(self) -> dict[str, Any]:
        """The counts as a JSON-ready dict."""
        return asdict(self)


class Ledger:
    """LLM usage per stage and model, with a budget check; merge, save and load add up."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], LedgerStats] = {}
        self._unpriced: set[str] = set()
        self._open: dict[str, tuple[str, str, float]] = {}  # reservation id -> (stage, model, USD)
        prefix = uuid.uuid4().hex[:12]  # reservation ids are unique across runs and processes
        self._ids = (f"{prefix}-{n}" for n in count())
        self._journal: int | None = None  # file descriptor of the journal, opened O_APPEND
        self.journal_path: Path | None = None  # where `open` found the journal
        self._unsynced = 0

    def __repr__(self) -> str:
        total = self.total()
        counts = f"calls={total.calls}, cached={total.cached}, failures={total.failures}"
        return f"Ledger({counts}, cost={total.cost:.6f})"

    def _entry(self, stage: str, model: str) -> LedgerStats:
        key = (stage, model)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = LedgerStats()
        return entry

    # --- recording ---------------------------------------------------------------------------------

    def record_request(self, stage: str, model: str, *, retry: bool = False) -> None:
        """Count one HTTP request (a retry if it repeats a failed one)."""
        entry = self._entry(stage, model)
        entry.calls += 1
        entry.retries += int(retry)
        self._append(stage, model, calls=1, retries=int(retry))

    def reserve(self, stage: str, model: str, worst: float, max_cost: float, *, retry: bool = False) -> str:
        """Count one request and reserve its worst-case cost WORST (USD), or raise BudgetExceeded when
        that would take the cost past MAX_COST. Returns the reservation's id, to settle or release."""
        if self.cost + worst > max_cost:
            held = sum(amount for _, _, amount in self._open.values())
            calls = f"{len(self._open):,} call{'s' if len(self._open) > 1 else ''}"
            reserved = f" and ${held:.4f} reserved for {calls} in flight or unanswered"
            raise BudgetExceeded(
                f"LLM budget reached: ${self.cost - held:.4f} spent{reserved if held else ''} of the "
                f"${max_cost:.4f} allowed by --max-cost; the next call could cost up to ${worst:.4f}"
            )
        reservation = next(self._ids)
        self._open[reservation] = (stage, model, worst)
        entry = self._entry(stage, model)
        entry.calls += 1
        entry.retries += int(retry)
        self._append(stage, model, calls=1, retries=int(retry), reserve=reservation, reserved=worst)
        return reservation

    def release(self, stage: str, model: str, reservation: str | None) -> None:
        """Drop a reservation whose request the server answered with an error (not billed)."""
        if reservation is not None and self._open.pop(reservation, None) is not None:
            self._append(stage, model, settle=reservation)

    def record_usage(
        self, stage: str, model: str, usage: Usage, cost: float | None, reservation: str | None = None
    ) -> None:
        """Add the tokens of one reply and their cost (None: the model has no price); the cost replaces
        the request's reservation, if it made one."""
        entry = self._entry(stage, model)
        entry.prompt_tokens += usage.prompt_tokens
        entry.completion_tokens += usage.completion_tokens
        if cost is None:
            self._unpriced.add(model)
        else:
            entry.cost += cost
        counts: dict[str, Any] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
        }
        counts.update({"unpriced": True} if cost is None else {"cost": cost})
        if reservation is not None and self._open.pop(reservation, None) is not None:
            counts["settle"] = reservation
        self._append(stage, model, **counts)

    def record_outcome(self, stage: str, model: str, *, ok: bool, cached: bool = False) -> None:
        """Count how one call ended: ok, answered from the cache, or failed."""
        entry = self._entry(stage, model)
        outcome = "cached" if cached else "ok" if ok else "failures"
        setattr(entry, outcome, getattr(entry, outcome) + 1)
        self._append(stage, model, **{outcome: 1})

    # --- reading -----------------------------------------------------------------------------------

    def stats(self, stage: str | None = None, model: str | None = None) -> LedgerStats:
        """The summed counts, optionally for one stage and/or one model."""
        total = LedgerStats()
        for (entry_stage, entry_model), entry in self._entries.items():
            if (stage is None or stage == entry_stage) and (model is None or model == entry_model):
                total.add(entry)
        for entry_stage, entry_model, amount in self._open.values():
            if (stage is None or stage == entry_stage) and (model is None or model == entry_model):
                total.cost += amount
                total.unsettled += 1
        return total

    def total(self) -> LedgerStats:
        """The counts over every stage and model."""
        return self.stats()

    @property
    def cost(self) -> float:
        """USD spent so far (priced models only)."""
        return self.total().cost

    @property
    def unpriced(self) -> list[str]:
        """Models used without a price (their cost counts as 0)."""
        return sorted(self._unpriced)

    def summary(self) -> dict[str, Any]:
        """Totals, per stage (with the models it used), per model (priced or not) and unpriced models."""
        stages = sorted({stage for stage, _ in self._entries})
        models = sorted({model for _, model in self._entries})
        return {
            "total": self.total().to_dict(),
            "stages": {
                stage: {
                    **self.stats(stage=stage).to_dict(),
                    "models": sorted(m for s, m in self._entries if s == stage),
                }
                for stage in stages
            },
            "models": {
                model: {**self.stats(model=model).to_dict(), "priced": model not in self._unpriced}
                for model in models
            },
            "unpriced": self.unpriced,
        }

    def spent_note(self, where: Path | str, max_cost: float | None) -> str | None:
        """One line on what earlier runs into WHERE spent (None if nothing), and what budget is left."""
        total = self.total()
        if total.calls == 0 and total.cached == 0:
            return None
        note = f"{where}: ${total.cost:.6f} spent so far on {total.calls:,} model requests"
        if total.unsettled:
            note += f" ({total.unsettled:,} of them with no reply, counted at their worst case)"
        if max_cost is not None:
            note += f", ${max(0.0, max_cost - total.cost):.6f} of --max-cost ${max_cost:g} left"
        return note

    # --- combining and persistence -----------------------------------------------------------------

    def merge(self, other: Ledger) -> Ledger:
        """Add another ledger's counts into this one (e.g. from another shard or an earlier run)."""
        for (stage, model), entry in other._entries.items():
            self._entry(stage, model).add(entry)
        self._unpriced |= other._unpriced
        self._open |= other._open
        return self

    def to_json(self) -> dict[str, Any]:
        """The ledger as a JSON-ready dict that `from_json` reads back."""
        entries = [
            {"stage": stage, "model": model, **self.stats(stage, model).to_dict()}
            for stage, model in sorted(self._entries)
        ]
        summary = self.summary()
        return {"format": LEDGER_FORMAT, "entries": entries, "unpriced": self.unpriced, "summary": summary}

    @classmethod
    def from_json(cls, data: Any, source: str = "ledger") -> Ledger:
        """Rebuild a ledger from `to_json` output; errors name `source`."""
        ledger = cls()
        try:
            if data.get("format") != LEDGER_FORMAT:
                raise ValueError(f"unknown format {data.get('format')!r}")
            names = {f.name for f in fields(LedgerStats)}
            for row in data["entries"]:
                counts = {name: row[name] for name in names - {"unsettled"}}
                counts["unsettled"] = row.get("unsettled", 0)  # absent before budgets reserved
                if any(not isinstance(value, int | float) or value < 0 for value in counts.values()):
                    raise ValueError(f"bad counts in {row!r}")
                ledger._entry(str(row["stage"]), str(row["model"])).add(LedgerStats(**counts))
            ledger._unpriced = {str(model) for model in data.get("unpriced", [])}
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise BadInputError(f"{source}: not an irbgen LLM ledger: {error}") from error
        return ledger

    # --- the journal --------------------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str) -> Ledger:
        """The sum of the journal at PATH (or of a ledger.json beside it, from before journals); every
        change from now on is appended to it."""
        path = Path(path)
        ledger, earlier = cls(), None
        if path.exists():
            ledger._read_journal(path)
        elif path.with_name("ledger.json").is_file():
            earlier = cls.load(path.with_name("ledger.json"))
        path.parent.mkdir(parents=True, exist_ok=True)
        ledger._journal = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        ledger.journal_path = path
        if earlier is not None:  # carry the totals of a run from before journals into the journal, once
            ledger.merge(earlier)
            for (stage, model), entry in earlier._entries.items():
                ledger._append(stage, model, **entry.to_dict())
        return ledger

    def _read_journal(self, path: Path) -> None:
        names = {f.name for f in fields(LedgerStats)}
        with path.open("rb") as file:
            lines = file.read().split(b"\n")
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
                entry = self._entry(str(row["stage"]), str(row["model"]))
                for name, delta in row.items():
                    if name in names:
                        if not isinstance(delta, int | float) or delta < 0:
                            raise ValueError(f"bad {name} {delta!r}")
                        setattr(entry, name, getattr(entry, name) + delta)
                if row.get("unpriced"):
                    self._unpriced.add(str(row["model"]))
                if "reserve" in row:
                    reserved = row["reserved"]
                    if not isinstance(reserved, int | float) or reserved < 0:
                        raise ValueError(f"bad reserved {reserved!r}")
                    self._open[str(row["reserve"])] = (str(row["stage"]), str(row["model"]), reserved)
                if "settle" in row:
                    self._open.pop(str(row["settle"]), None)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                if number == len(lines):  # the last line, cut by a kill mid-write
                    continue
                raise BadInputError(f"{path}:{number}: not a ledger line: {error}") from None

    def _append(self, stage: str, model: str, **counts: Any) -> None:
        if self._journal is None:
            return
        line = json.dumps({"stage": stage, "model": model, **counts}, separators=(",", ":")) + "\n"
        os.write(self._journal, line.encode())  # one write per line: a kill leaves whole lines
        self._unsynced += 1
        if self._unsynced >= JOURNAL_SYNC_LINES:
            self.sync()

    def sync(self) -> None:
        """fsync the journal (every JOURNAL_SYNC_LINES lines, and on close)."""
        if self._journal is not None and self._unsynced:
            os.fsync(self._journal)
            self._unsynced = 0

    def close(self) -> None:
        """Sync and close the journal; the ledger keeps its counts."""
        if self._journal is not None:
            self.sync()
            os.close(self._journal)
            self._journal = None

    def save(self, path: Path | str) -> None:
        """Write the ledger as JSON, atomically (temporary file, then rename)."""
        self.sync()
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(path, self.to_json(), sort_keys=True)

    @classmethod
    def load(cls, path: Path | str, *, missing_ok: bool = False) -> Ledger:
        """Read a saved ledger (an empty one if the file is absent and missing_ok)."""
        path = Path(path)
        if missing_ok and not path.exists():
            return cls()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise BadInputError(f"{path}: cannot read the LLM ledger: {error}") from error
        return cls.from_json(data, source=str(path))

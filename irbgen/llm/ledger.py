"""Who called the model, how often, with what result and at what cost: counts per stage and model.

Counts and what they mean:
  calls       HTTP requests made (retries and repair calls included)
  retries     requests that repeated a failed one
  ok          calls that ended with a usable reply from the server
  cached      calls answered from the response cache (no request)
  failures    calls that ended with a recorded failure
  prompt_tokens, completion_tokens, cost   as reported by the server, priced from the settings

So ok + cached + failures is the number of `complete()` calls. A saved ledger can be loaded and added
to, so a resumed run reports the totals of all its attempts.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.llm.types import BudgetExceeded, Usage

LEDGER_FORMAT = 1


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

    def record_usage(self, stage: str, model: str, usage: Usage, cost: float | None) -> None:
        """Add the tokens of one reply and their cost (None: the model has no price)."""
        entry = self._entry(stage, model)
        entry.prompt_tokens += usage.prompt_tokens
        entry.completion_tokens += usage.completion_tokens
        if cost is None:
            self._unpriced.add(model)
        else:
            entry.cost += cost

    def record_outcome(self, stage: str, model: str, *, ok: bool, cached: bool = False) -> None:
        """Count how one call ended: ok, answered from the cache, or failed."""
        entry = self._entry(stage, model)
        if cached:
            entry.cached += 1
        elif ok:
            entry.ok += 1
        else:
            entry.failures += 1

    # --- reading -----------------------------------------------------------------------------------

    def stats(self, stage: str | None = None, model: str | None = None) -> LedgerStats:
        """The summed counts, optionally for one stage and/or one model."""
        total = LedgerStats()
        for (entry_stage, entry_model), entry in self._entries.items():
            if (stage is None or stage == entry_stage) and (model is None or model == entry_model):
                total.add(entry)
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

    def check_budget(self, max_cost: float | None) -> None:
        """Raise BudgetExceeded once the cost so far reaches max_cost (None: no cap)."""
        if max_cost is None:
            return
        spent = self.cost
        if spent >= max_cost:
            raise BudgetExceeded(
                f"LLM budget reached: spent ${spent:.4f} of the ${max_cost:.4f} allowed (max_cost)"
            )

    # --- combining and persistence -----------------------------------------------------------------

    def merge(self, other: Ledger) -> Ledger:
        """Add another ledger's counts into this one (e.g. from another shard or an earlier run)."""
        for (stage, model), entry in other._entries.items():
            self._entry(stage, model).add(entry)
        self._unpriced |= other._unpriced
        return self

    def to_json(self) -> dict[str, Any]:
        """The ledger as a JSON-ready dict that `from_json` reads back."""
        entries = [
            {"stage": stage, "model": model, **entry.to_dict()}
            for (stage, model), entry in sorted(self._entries.items())
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
                counts = {name: row[name] for name in names}
                if any(not isinstance(value, int | float) or value < 0 for value in counts.values()):
                    raise ValueError(f"bad counts in {row!r}")
                ledger._entry(str(row["stage"]), str(row["model"])).add(LedgerStats(**counts))
            ledger._unpriced = {str(model) for model in data.get("unpriced", [])}
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            raise BadInputError(f"{source}: not an irbgen LLM ledger: {error}") from error
        return ledger

    def save(self, path: Path | str) -> None:
        """Write the ledger as JSON, atomically (temporary file, then rename)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_json(), indent=2, sort_keys=True) + "\n"
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

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

"""The output folder of `irbgen eval qa`: what it may hold, and when a rerun may resume into it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.eval.evaldir import CONFIG, METRICS, PER_QUERY
from irbgen.outputs import check_replaceable

__all__ = ["CONFIG", "LEDGER", "METRICS", "PER_QUERY", "PREDICTIONS", "check_out_contents", "check_resumable"]

PREDICTIONS = "predictions.jsonl"
LEDGER = "ledger.json"
# config.json fields that must match for a rerun to resume into the same directory.
RESUME_KEYS = ("benchmark_name", "samples_sha256", "method", "model", "prompt", "k", "retriever")
RESUME_KEYS += ("max_steps", "max_context_tokens", "date")
# How each key is named on the command line, for the message that lists what changed.
FLAGS = {
    "benchmark_name": "--benchmark",
    "samples_sha256": "--benchmark's samples.jsonl (sha256)",
    "method": "--method",
    "model": "--model",
    "prompt": "the prompt",
    "k": "--k",
    "retriever": "--retriever",
    "max_steps": "--max-steps",
    "max_context_tokens": "the context limit",
    "date": "the prompts' date",
}


def check_out_contents(out_dir: Path) -> None:
    """Refuse an --out that holds a benchmark, or files that no QA evaluation wrote."""
    check_replaceable(out_dir, "qa")


def check_resumable(path: Path, config: dict[str, Any]) -> None:
    """Refuse to mix two different runs in one directory: list every setting that changed."""
    if not path.is_file():
        if (path.parent / PREDICTIONS).is_file():
            raise BadInputError(f"{path.parent}: predictions without {CONFIG}; pass --force to start over")
        return
    try:
        old = json.loads(path.read_bytes())
    except ValueError as e:
        raise BadInputError(f"{path}: invalid JSON ({e}); cannot resume into {path.parent}") from None
    if not isinstance(old, dict) or old.get("kind") != "qa":
        raise BadInputError(f"{path.parent}: not a QA evaluation directory; cannot resume into it")
    changed = [
        f"{FLAGS[key]} {_short(old.get(key))} -> {_short(config.get(key))}"
        for key in RESUME_KEYS
        if old.get(key) != config.get(key)
    ]
    if changed:
        raise BadInputError(
            f"{path.parent}: holds a run with other settings ({'; '.join(changed)}); rerun with the same "
            "ones to resume, use another --out, or pass --force to start over"
        )
    total = config.get("benchmark_samples")
    if not isinstance(total, int):
        return
    before, now = _asked(old, total), _asked(config, total)
    if now < before:
        raise BadInputError(
            f"{path.parent}: holds an evaluation of {before:,} samples, and --limit {config.get('limit')} "
            "would shrink it; give the limited run its own --out (or pass --force to start over)"
        )


def _asked(config: dict[str, Any], total: int) -> int:
    """How many of the benchmark's TOTAL samples a run's config asks for."""
    limit = config.get("limit")
    return min(limit, total) if isinstance(limit, int) else total


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."

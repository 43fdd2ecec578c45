"""What an --out may be: irbgen replaces a folder only when it holds irbgen's own output of the same kind.

Each kind of output is known by a marker file that its writer already writes (a benchmark's manifest.json,
an evaluation's config.json, an audit sheet's audit.json, ...) and by the entries such a folder may hold.
An empty folder may always be used. Anything else (a user's files, another kind of output, a build's run
directory) is refused with exit 2, with or without --force; so is an --out that is, lies inside or holds
one of the command's inputs. `check_output` and `staged_directory` (irbgen.benchmark) call these checks;
build run directories are checked by irbgen.pipeline.rundir.prepare_run_dir.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from irbgen.errors import BadInputError

FINGERPRINT = "fingerprint.json"  # what marks a build's run directory (irbgen.pipeline.rundir writes it)
LOCK = ".irbgen.lock"  # the lock file a resumable output holds while it is written

# An input of a command as (what names it, e.g. "--benchmark", and its path); None is skipped.
Inputs = Mapping[str, Path | Iterable[Path] | None] | None


@dataclass(frozen=True)
class Kind:
    """One kind of irbgen output folder: its marker files and the entries it may hold."""

    label: str  # "a benchmark", for messages
    markers: tuple[str, ...]  # one of these must be present (unless partial)
    names: tuple[str, ...]  # glob patterns of every entry such a folder may hold
    field: tuple[str, str] | None = None  # (key, value) the first marker, a JSON object, must hold
    partial: bool = False  # a resumable output: any subset of its entries, marker or not, is ours


BENCHMARK_FILES = (
    "manifest.json",
    "README.md",
    "corpus.jsonl",
    "queries.jsonl",
    "samples.jsonl",
    "qrels",
    "queries_hops.jsonl",
)
_EVALUATION = ("config.json", "metrics.json", "per_query.jsonl")
KINDS: dict[str, Kind] = {
    "benchmark": Kind(
        "a benchmark",
        ("manifest.json",),
        (*BENCHMARK_FILES, "reviews"),  # reviews/: judgments made with `irbgen review`
        ("tool", "irbgen"),
    ),
    "retrieval": Kind(
        "a retrieval evaluation",
        ("config.json",),
        (*_EVALUATION, "run.trec", "run_hops.trec", "per_hop.jsonl", "negatives.jsonl"),
        ("kind", "retrieval"),
    ),
    "qa": Kind(
        "a QA evaluation",
        ("config.json",),
        (*_EVALUATION, "predictions.jsonl", "ledger.json", "ledger.jsonl", "llm-cache.sqlite*"),
        ("kind", "qa"),
        partial=True,
    ),
    "report": Kind("a report", ("report.md",), ("report.md", "report.html", "significance.json", "*.png")),
    "comparison": Kind(
        "a comparison", ("compare.json",), ("compare.json", "compare.md", "distributions.png")
    ),
    "audit": Kind(
        "an audit sheet",
        ("audit.json",),
        ("audit.json", "audit.jsonl", "audit.md", "score.json"),
        ("format", "irbgen-audit/1"),
    ),
    "export": Kind(
        "an export",
        ("dataset_dict.json", "samples.parquet"),
        # the tables (parquet files or hf splits), and the card, manifest and reviews copied as they are
        ("dataset_dict.json", "*.parquet", "corpus", "queries", "qrels", "samples", "hops", "README.md",
         "manifest.json", "reviews"),
    ),
    "run": Kind("a build's run directory", (FINGERPRINT,), ("*",)),
}
_IGNORED = (LOCK,)
_SHOWN = 3


def entries(folder: Path) -> list[str]:
    """The names in FOLDER, less irbgen's lock file."""
    return sorted(name for name in os.listdir(folder) if name not in _IGNORED)


def _marked(folder: Path, kind: Kind) -> bool:
    present = [name for name in kind.markers if (folder / name).is_file()]
    if not present:
        return False
    if kind.field is None:
        return True
    key, value = kind.field
    try:
        data = json.loads((folder / present[0]).read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get(key) == value


def _foreign(names: Iterable[str], kind: Kind) -> list[str]:
    return [name for name in names if not any(fnmatchcase(name, pattern) for pattern in kind.names)]


def identify(folder: Path) -> str | None:
    """The kind of irbgen output FOLDER holds (marker and nothing else), or None."""
    names = entries(folder)
    for key, kind in KINDS.items():
        if _marked(folder, kind) and not _foreign(names, kind):
            return key
    return None


def check_replaceable(out: Path, kind: str) -> bool:
    """Whether OUT holds an output of KIND (False when it is absent or empty); refuse anything else."""
    out = Path(out)
    if not os.path.lexists(out):
        return False
    if not out.is_dir():
        raise BadInputError(f"{out}: exists and is not a directory; refusing to replace it")
    names = entries(out)
    if not names:
        return False
    wanted = KINDS[kind]
    foreign = _foreign(names, wanted)
    if not foreign and (wanted.partial or _marked(out, wanted)):
        return True
    found = identify(out)
    if found is None and (out / "stages").is_dir():
        found = "run"  # a run directory from before fingerprints
    if found is not None and found != kind:
        what = f"holds {KINDS[found].label}, not {wanted.label}"
    elif _marked(out, wanted):
        what = f"holds {wanted.label} and files irbgen did not write there ({_names(foreign)})"
    else:
        what = f"holds files that are not {wanted.label} ({_names(foreign or names)})"
    raise BadInputError(
        f"{out}: {what}; irbgen replaces only its own output, so give --out a new or empty directory"
    )


def _names(names: list[str]) -> str:
    more = len(names) - _SHOWN
    return ", ".join(names[:_SHOWN]) + (f" and {more} more" if more > 0 else "")


def check_inputs(out: Path, inputs: Inputs) -> None:
    """Refuse an OUT that is, lies inside or holds one of INPUTS (symlinks and relative paths resolved)."""
    real_out = Path(os.path.realpath(out))
    for flag, path in _flat(inputs):
        real = Path(os.path.realpath(path))
        if real == real_out:
            where = "is"
        elif real in real_out.parents:
            where = "is inside"
        elif real_out in real.parents:
            where = "holds"
        else:
            continue
        raise BadInputError(f"{out}: --out {where} the input {flag} {path}; give --out a folder of its own")


def _flat(inputs: Inputs) -> Iterable[tuple[str, Path]]:
    for flag, value in (inputs or {}).items():
        if value is None:
            continue
        if isinstance(value, str | Path):
            yield flag, Path(value)
        else:
            yield from ((flag, Path(item)) for item in value)


def real_output(out: Path) -> Path:
    """OUT, or the folder it links to when it is a symlink (a link is kept; its target is replaced)."""
    out = Path(out)
    return Path(os.path.realpath(out)) if os.path.islink(out) else out

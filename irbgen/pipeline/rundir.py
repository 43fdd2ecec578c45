"""Run directories: one writer at a time (a lock), and a fingerprint of what decides the outputs.

A lock is `fcntl.flock` on a lock file, held until the block ends; the kernel drops it when the holder
dies, so a killed run never blocks the next one. The fingerprint (options, input files, versions) is
written when a run starts; a rerun with the same fingerprint resumes, any other is refused with the
list of what changed, or started over with `force`.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from irbgen.errors import BadInputError
from irbgen.io import write_json
from irbgen.outputs import FINGERPRINT, LOCK, Inputs, check_inputs

log = logging.getLogger(__name__)

HASHED_BYTES = 1 << 20  # a file's content hash covers its first and last MiB
_SHOWN_CHANGES = 6

_held: dict[Path, int] = {}  # lock file -> depth, so one process may nest blocks on one lock


@contextmanager
def locked(
    directory: Path, lock_file: Path | None = None, hint: str = "wait for it or use another directory"
) -> Iterator[None]:
    """Hold an exclusive lock on DIRECTORY (lock file inside it unless given); a second holder exits 2
    with HINT."""
    path = Path(lock_file or Path(directory) / LOCK).absolute()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    fd = _acquire(Path(directory), path, hint)
    _held[path] = 1
    try:
        yield
    finally:
        del _held[path]
        Path(path).unlink(missing_ok=True)  # unlinked while still held: a waiter re-checks the inode
        os.close(fd)


def lock_output(out: Path) -> AbstractContextManager[None]:
    """The lock of an output that is replaced whole (a benchmark, an evaluation): a sibling lock file."""
    out = Path(out)
    if out.name in ("", ".", ".."):
        raise BadInputError(f"{out}: name a directory to write")
    make_directory(out.parent, f"the folder of {out}")
    return locked(out, out.parent / f".{out.name}.lock")


def _acquire(directory: Path, path: Path, hint: str) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as error:
            raise BadInputError(
                f"{directory}: cannot create the lock file {path.name}: {error.strerror}"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise BadInputError(f"{directory}: cannot lock: {error.strerror}") from None
            raise BadInputError(
                f"{directory}: in use by another irbgen process (pid {holder}); {hint}"
            ) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False  # the holder released and removed it between our open and our lock
        if same:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            return fd
        os.close(fd)


# -- fingerprints ------------------------------------------------------------------------------------


def file_fingerprint(path: Path) -> dict[str, Any]:
    """Size, mtime and a sha256 of the first and last MiB of a file; a folder: the same for its files."""
    path = Path(path)
    entry: dict[str, Any] = {"path": str(path.absolute())}
    try:
        info = path.stat()
    except OSError:
        return {**entry, "missing": True}
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        return {**entry, "files": {p.name: _content(p) for p in files}}
    return {**entry, **_content(path, info)}


def _content(path: Path, info: os.stat_result | None = None) -> dict[str, Any]:
    info = info or path.stat()
    digest = hashlib.sha256()
    with path.open("rb") as file:
        digest.update(file.read(HASHED_BYTES))
        if info.st_size > HASHED_BYTES:
            file.seek(max(HASHED_BYTES, info.st_size - HASHED_BYTES))
            digest.update(file.read(HASHED_BYTES))
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": digest.hexdigest()}


def make_fingerprint(
    options: Mapping[str, Any],
    inputs: Mapping[str, Path | Iterable[Path] | None],
    versions: Mapping[str, Any],
) -> dict[str, Any]:
    """The fingerprint of a run: its options, the state of its input files and the versions that matter."""
    files: dict[str, Any] = {}
    for name, value in inputs.items():
        if value is None:
            continue
        if isinstance(value, str | Path):
            files[name] = file_fingerprint(Path(value))
        else:
            files[name] = [file_fingerprint(Path(item)) for item in value]
    return json.loads(
        json.dumps({"versions": dict(versions), "options": dict(options), "inputs": files}, default=str)
    )


def _differing(old: Mapping[str, Any], new: Mapping[str, Any]) -> Iterator[tuple[str, str, Any, Any]]:
    """(section, name, before, after) for each option, input and version that differs."""
    for section in ("versions", "options", "inputs"):
        before, after = old.get(section) or {}, new.get(section) or {}
        for name in sorted(set(before) | set(after)):
            if before.get(name) != after.get(name):
                yield section, name, before.get(name), after.get(name)


def changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """What differs between two fingerprints, one short phrase per option, input or version."""
    found = []
    for section, name, before, after in _differing(old, new):
        flag = name if section == "versions" else f"--{name.replace('_', '-')}"
        if section == "inputs":
            found.append(f"{flag} {_file_change(before, after)}")
        else:
            found.append(f"{flag} {_short(before)} -> {_short(after)}")
    return found


def changed_names(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    """The option, input and version names whose values differ between two fingerprints."""
    return {name for _, name, _, _ in _differing(old, new)}


def _file_change(before: Any, after: Any) -> str:
    if before is None or after is None:
        return "added" if before is None else "removed"
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return "; ".join(sorted({_file_change(a, b) for a, b in zip(before, after, strict=True) if a != b}))
    if not isinstance(before, dict) or not isinstance(after, dict) or before.get("path") != after.get("path"):
        return "is another file"
    return "changed on disk"


def _short(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= 40 else text[:37] + "..."


def describe_changes(found: list[str]) -> str:
    """The first few changes, and how many more."""
    shown = "; ".join(found[:_SHOWN_CHANGES])
    more = len(found) - _SHOWN_CHANGES
    return shown + (f"; and {more} more" if more > 0 else "")


Keep = Callable[[set[str]], Mapping[str, str]]  # changed names -> {entry to keep: what it is, for the log}


def prepare_run_dir(
    run_dir: Path,
    fingerprint: dict[str, Any],
    *,
    force: bool,
    keep: Keep = lambda changed: {},
    inputs: Inputs = None,
) -> bool:
    """Check RUN_DIR (held locked by the caller) against FINGERPRINT; True when resuming.

    A RUN_DIR that is, lies inside or holds one of INPUTS ({flag: path}) is refused first.

    An empty directory starts fresh. A directory with our fingerprint resumes if it matches; otherwise it
    is refused with what changed. With `force` it is emptied and started over, except the entries that
    `keep` names given what changed (caches still valid); the log says which. Anything else (a
    benchmark, files irbgen did not write) is refused even with `force`.
    """
    check_inputs(run_dir, inputs)
    path = run_dir / FINGERPRINT
    remove_stale_temps(run_dir)
    entries = [p for p in run_dir.iterdir() if p.name != LOCK]
    if not entries:
        write_json(path, fingerprint, sort_keys=True)
        return False
    if not path.is_file():
        if (run_dir / "manifest.json").is_file() and (run_dir / "corpus.jsonl").is_file():
            raise BadInputError(f"{run_dir}: holds a benchmark; give --out a new or empty run directory")
        if (run_dir / "stages").is_dir() and not force:  # a run directory from before fingerprints
            raise BadInputError(
                f"{run_dir}: a run directory without {FINGERPRINT}, so what it was made with is unknown; "
                "pass --force to start over"
            )
        if (run_dir / "stages").is_dir():  # what changed is unknown: keep what every setting allows
            return _start_over(
                run_dir, entries, fingerprint, keep(set(fingerprint["options"]) | {"irbgen"}), []
            )
        names = ", ".join(sorted(p.name for p in entries)[:3])
        raise BadInputError(
            f"{run_dir}: holds files irbgen did not write here ({names}); give --out a new or empty directory"
        )
    try:
        old = json.loads(path.read_bytes())
    except ValueError:
        old = {}
    old = old if isinstance(old, dict) else {}
    found = changes(old, fingerprint)
    if not found and not force:
        return True
    if not force:
        raise BadInputError(
            f"{run_dir}: made with other settings ({describe_changes(found)}); rerun with the same ones to "
            "resume, or pass --force to start over"
        )
    return _start_over(run_dir, entries, fingerprint, keep(changed_names(old, fingerprint)), found)


def _start_over(
    run_dir: Path, entries: list[Path], fingerprint: dict[str, Any], keep: Mapping[str, str], found: list[str]
) -> bool:
    kept = sorted({keep[entry.name] for entry in entries if keep.get(entry.name)})
    why = f" ({describe_changes(found)})" if found else ""
    log.warning("%s: starting over%s; kept: %s", run_dir, why, ", ".join(kept) or "nothing")
    for entry in entries:
        if entry.name in keep:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    write_json(run_dir / FINGERPRINT, fingerprint, sort_keys=True)
    return False


_STALE = re.compile(r"\..+\.(tmp-[0-9]+|old-[0-9]+|[A-Za-z0-9_]+\.tmp)")  # names our atomic writers use


def remove_stale_temps(directory: Path) -> None:
    """Remove temporary files and folders that killed writers left in DIRECTORY (hold its lock)."""
    for entry in Path(directory).iterdir():
        if _STALE.fullmatch(entry.name):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


def make_directory(path: Path, what: str = "--out") -> Path:
    """Create PATH (and parents) as a directory; one line and exit 2 when that is impossible."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise BadInputError(f"{path}: exists and is not a directory ({what})")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise BadInputError(f"{path}: cannot create the directory ({what}): {error.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise BadInputError(f"{path}: not writable ({what})")
    return path

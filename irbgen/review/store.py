"""Judgments as data: BENCH/reviews/<reviewer>.jsonl, appended one line per change; the latest line wins.

Each line is an audit `Judgment` (well_formed, answer_correct, supported, note) plus the sample id, the
reviewer, the time, the sha256 of the sample's line as judged, so a judgment of a sample that has
changed since is known to be stale, and the order the sample was shown in (`draw`), so a score can tell
whether the judged samples are a random sample. A scored audit sheet's judgments are kept the same way
in reviews/audits/. One `irbgen review` process writes a reviewer's file at a time (a lock). A line is
flushed and fsynced before the page hears "saved", so a crash or Ctrl-C loses at most the line being
written; that half line (no newline at the end) is ignored when read and cut off when the reviewer's
file is opened for writing again.
"""

from __future__ import annotations

import json
import os
import re
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from irbgen.audit.records import Judgment
from irbgen.benchmark import REVIEWS, describe_error
from irbgen.errors import BadInputError
from irbgen.pipeline.rundir import locked
from irbgen.review.draws import Draw

AUDITS = "audits"  # reviews/audits/: the judgments of scored audit sheets
REVIEWER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Review(Judgment):
    """One line of a reviewer's file: a judgment of one sample at one time."""

    sample: str
    reviewer: str
    time: str
    sample_sha256: str | None = None  # of the sample's line in samples.jsonl (None in older files)
    draw: Draw | None = None  # the order the sample was shown in (None in older files)

    def is_of(self, digest: str) -> bool:
        """Whether this judgment was made on the sample whose line has DIGEST (older lines: assumed)."""
        return self.sample_sha256 is None or self.sample_sha256 == digest

    @classmethod
    def of(
        cls,
        sample: str,
        judgment: Judgment,
        reviewer: str,
        time: str,
        sample_sha256: str | None = None,
        draw: Draw | None = None,
    ) -> Review:
        """The line recording REVIEWER's JUDGMENT of SAMPLE."""
        return cls(
            **judgment.model_dump(),
            sample=sample,
            reviewer=reviewer,
            time=time,
            sample_sha256=sample_sha256,
            draw=draw,
        )

    def judgment(self) -> Judgment:
        """The judgment alone, without sample, reviewer and time."""
        return Judgment(**self.model_dump(include=set(Judgment.model_fields)))


def check_reviewer(name: str) -> str:
    """NAME if it can name a file in reviews/ (letters, digits, '.', '_', '-'); else BadInputError."""
    if not name.strip():
        raise BadInputError(f"--reviewer {name!r}: empty; give your name, e.g. --reviewer maria")
    if not REVIEWER.match(name):
        raise BadInputError(
            f"--reviewer {name!r}: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


def review_file(benchmark: Path, reviewer: str) -> Path:
    """BENCH/reviews/<reviewer>.jsonl."""
    return Path(benchmark) / REVIEWS / f"{check_reviewer(reviewer)}.jsonl"


def read_file(file: Path) -> dict[str, Review]:
    """Sample id -> the latest review in FILE; a half-written last line is ignored."""
    latest: dict[str, Review] = {}
    data = file.read_bytes()
    lines = data.split(b"\n")
    complete = len(lines) - 1  # the part after the last newline was never finished
    for lineno, raw in enumerate(lines[:complete], 1):
        if not raw.strip():
            continue
        try:
            review = Review.model_validate_json(raw)
        except ValidationError as e:
            raise BadInputError(f"{file}:{lineno}: {describe_error(e)}") from None
        if review.reviewer != file.stem:
            raise BadInputError(f"{file}:{lineno}: reviewer {review.reviewer!r} in the file of {file.stem!r}")
        latest[review.sample] = review
    return latest


def read_reviews(benchmark: Path, sub: str = "") -> dict[str, dict[str, Review]]:
    """Reviewer -> sample id -> latest review, for every file in BENCH/reviews (or its folder SUB), sorted
    by reviewer."""
    folder = Path(benchmark) / REVIEWS / sub
    if not folder.is_dir():
        return {}
    files = sorted(path for path in folder.glob("*.jsonl") if REVIEWER.match(path.stem))
    return {file.stem: read_file(file) for file in files}


class ReviewWriter:
    """Appends one reviewer's judgments to their file, each line on disk before `append` returns."""

    def __init__(self, benchmark: Path, reviewer: str) -> None:
        self.reviewer = check_reviewer(reviewer)
        self.file = review_file(benchmark, reviewer)

    def lock(self) -> AbstractContextManager[None]:
        """Hold this reviewer's lock on the benchmark: a second `irbgen review` for them exits 2."""
        try:
            self.file.parent.mkdir(exist_ok=True)
        except OSError as e:
            raise self._unwritable(e) from None
        lock_file = self.file.parent / f".{self.reviewer}.lock"
        return locked(self.file, lock_file, "stop it first, or review as another --reviewer")

    def open(self) -> dict[str, Review]:
        """Create reviews/ if needed, cut off a half-written last line, and return the latest reviews."""
        try:
            self.file.parent.mkdir(exist_ok=True)
            if not self.file.is_file():
                self.file.touch()
                return {}
            data = self.file.read_bytes()
            if data and not data.endswith(b"\n"):
                os.truncate(self.file, data.rfind(b"\n") + 1)
        except OSError as e:
            raise self._unwritable(e) from None
        return read_file(self.file)

    def _unwritable(self, error: OSError) -> BadInputError:
        return BadInputError(f"{self.file}: cannot keep judgments here ({error.strerror})")

    def append(
        self, sample: str, judgment: Judgment, sample_sha256: str | None = None, draw: Draw | None = None
    ) -> Review:
        """Write one line for SAMPLE (whose line has SAMPLE_SHA256, shown in DRAW), flushed and fsynced."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        review = Review.of(sample, judgment, self.reviewer, now, sample_sha256, draw)
        line = json.dumps(review.model_dump(mode="json"), ensure_ascii=False) + "\n"
        with self.file.open("ab") as handle:
            handle.write(line.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        return review

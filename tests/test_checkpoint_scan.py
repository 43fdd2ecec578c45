"""The scan that tells whether the run's rejects hold a line of a stage about to run in shards."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from irbgen.pipeline import checkpoint

OURS = '{"stage": "fetch_cited",'


def by_lines(path: Path) -> bool:
    """The rule, read line by line: every line starts as another stage's line does."""
    with open(path, encoding="utf-8", newline="\n") as lines:
        return not any(line.startswith(OURS) or not line.startswith('{"stage": ') for line in lines)


def test_the_block_scan_agrees_with_reading_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoint, "_SCAN_BLOCK", 64)  # lines cross the blocks' ends
    rng = random.Random(7)
    path = tmp_path / "rejects.jsonl"
    for _ in range(2000):
        lines = []
        for _ in range(rng.randint(0, 8)):
            kind = rng.random()
            if kind < 0.7:
                lines.append(
                    json.dumps(
                        {"stage": rng.choice(["read", "keypoints"]), "reason": "x" * rng.randint(0, 90)}
                    )
                )
            elif kind < 0.8:
                lines.append(json.dumps({"stage": "fetch_cited", "reason": "http_404"}))
            elif kind < 0.9:
                lines.append(json.dumps({"reason": "dns", "stage": "read"}))  # not as irbgen writes it
            else:
                lines.append('{"stage": "read", "detail": "\u00e9' + "w" * rng.randint(0, 70) + '"}')
        path.write_text("\n".join(lines) + ("\n" if lines and rng.random() < 0.8 else ""), encoding="utf-8")
        assert checkpoint._only_others(path, OURS.encode()) == by_lines(path)


def test_a_stage_after_a_finished_one_skips_the_scan_yet_a_stale_line_is_still_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def reject(stage: str, key: str) -> dict:
        return {"stage": stage, "reason": "x", "key": key, "detail": "", "extra": {}}

    read = checkpoint.CheckpointStore(tmp_path, "read")
    with read:
        read.add("a", [], [reject("read", "a")])
    read.finish(read.summary())
    run_rejects = tmp_path / "rejects.jsonl"
    written = run_rejects.read_bytes()
    assert json.loads((tmp_path / checkpoint.SETTLED).read_text()) == {"size": len(written)}

    later = checkpoint.CheckpointStore(tmp_path, "keypoints")
    with monkeypatch.context() as patched:
        patched.setattr(checkpoint, "_only_others", lambda *args: pytest.fail("scanned"))
        later.clear_for_shards()  # nothing written since "read" finished: not even read
    assert run_rejects.read_bytes() == written

    with open(run_rejects, "a", encoding="utf-8") as lines:  # a merge of "keypoints" killed after this
        lines.write(json.dumps(reject("keypoints", "k"), ensure_ascii=False) + "\n")
    later.clear_for_shards()
    assert run_rejects.read_bytes() == written

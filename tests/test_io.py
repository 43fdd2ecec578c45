"""irbgen.io: every whole file irbgen writes appears at once or not at all, under one temporary name."""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from pathlib import Path

import pytest
from pydantic import BaseModel

from irbgen.errors import BadInputError
from irbgen.io import atomic_path, json_text, move_file, write_atomic, write_json, write_jsonl, write_manifest
from irbgen.pipeline.rundir import remove_stale_temps


class Item(BaseModel):
    name: str
    size: int


def test_write_atomic_takes_text_bytes_and_streamed_lines(tmp_path):
    path = tmp_path / "f.txt"
    write_atomic(path, "é\n")
    assert path.read_bytes() == "é\n".encode()
    write_atomic(path, b"\x00\xff")
    assert path.read_bytes() == b"\x00\xff"
    write_atomic(path, (f"{n}\n" for n in range(3)), durable=True)
    assert path.read_text() == "0\n1\n2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()  # as open() would make it, not 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("old\n")

    def lines():
        yield "new\n"
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_atomic(path, lines(), durable=True)
    assert path.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


def test_atomic_path_serves_other_writers_and_its_leftovers_are_known_as_stale(tmp_path):
    target = tmp_path / "t.bin"
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".t.bin.") and tmp.name.endswith(".tmp")
        tmp.write_bytes(b"data")
        assert not target.exists()
        (tmp_path / tmp.name.replace(".t.bin.", ".u.bin.")).write_bytes(b"")  # what a killed writer leaves
    assert target.read_bytes() == b"data"
    remove_stale_temps(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.bin"]


def test_json_files(tmp_path):
    write_json(tmp_path / "a.json", {"b": "ü", "a": [1]}, sort_keys=True)
    assert (tmp_path / "a.json").read_text() == json_text({"a": [1], "b": "ü"})
    assert json_text({"x": 1}) == '{\n  "x": 1\n}\n'
    write_json(tmp_path / "m.json", Item(name="n", size=2))
    assert json.loads((tmp_path / "m.json").read_text()) == {"name": "n", "size": 2}
    with pytest.raises(BadInputError, match=r"n\.json: cannot be written as JSON"):
        write_json(tmp_path / "n.json", {"x": math.nan})
    assert not (tmp_path / "n.json").exists()


def test_write_jsonl_counts_models_and_dicts(tmp_path):
    path = tmp_path / "r.jsonl"
    assert write_jsonl(path, iter([Item(name="é", size=1), {"name": "b", "size": 2}])) == 2
    assert path.read_text(encoding="utf-8") == '{"name": "é", "size": 1}\n{"name": "b", "size": 2}\n'
    assert write_jsonl(path, []) == 0 and path.read_bytes() == b""


def test_a_manifest_never_carries_a_key_given_in_a_url(tmp_path):
    path = tmp_path / "manifest.json"
    write_manifest(path, {"config": {"base_url": "https://user:sk-secret@example.org/v1"}})
    text = path.read_text()
    assert "sk-secret" not in text and "https://[redacted]@example.org/v1" in text


def test_nothing_in_irbgen_renames_a_temporary_file_of_its_own():
    """Whole files are written through irbgen.io."""
    root = Path(__file__).resolve().parents[1] / "irbgen"
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "os.replace(" in path.read_text(encoding="utf-8") and path.name != "io.py"
    ]
    assert found == []


def test_a_finished_file_is_moved_into_place(tmp_path):
    (tmp_path / "part").write_bytes(b"joined")
    (tmp_path / "corpus").write_bytes(b"old")
    assert move_file(tmp_path / "part", tmp_path / "corpus")
    assert (tmp_path / "corpus").read_bytes() == b"joined" and not (tmp_path / "part").exists()


def test_a_file_on_another_file_system_is_left_for_the_caller_to_copy(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no second file system at hand")
    with tempfile.TemporaryDirectory(dir=shm) as other:
        (Path(other) / "part").write_bytes(b"joined")
        assert not move_file(Path(other) / "part", tmp_path / "corpus")
        assert (Path(other) / "part").read_bytes() == b"joined" and not (tmp_path / "corpus").exists()

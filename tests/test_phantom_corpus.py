"""The articles written in parts by forked processes give the corpus of the single in-process pass."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import irbgen.phantom.articles as articles_module
from irbgen.benchmark import parts_directory, remove_stale_siblings
from irbgen.builds.output import write_output
from irbgen.builds.phantom import AskTemplates, build_phantom
from irbgen.errors import BadInputError, IrbgenError
from irbgen.phantom.articles import DocumentIds
from irbgen.phantom.config import PhantomConfig
from irbgen.phantom.corpus import CorpusWriters, can_fork
from irbgen.phantom.universe import generate_universe
from irbgen.phantom.vocabulary import load_vocabulary

pytestmark = pytest.mark.skipif(not can_fork(), reason="writer processes need fork")

CONFIG = PhantomConfig(n=301, seed=3, questions_per_template=2)


def files(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in directory.rglob("*") if path.is_file()
    }


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 people, so blocks and parts end at different people."""
    monkeypatch.setattr(articles_module, "ARTICLE_BLOCK", 7)


def test_parts_written_by_processes_give_the_same_benchmark(tmp_path, small_blocks):
    vocabulary = load_vocabulary()
    alone = build_phantom(CONFIG, vocabulary)
    write_output(alone, tmp_path / "alone")
    (tmp_path / "parts").mkdir()
    parted = build_phantom(CONFIG, vocabulary, parts=tmp_path / "parts")
    assert len(parted.documents.parts) == 1 and parted.timings.keys() >= {"articles"}
    write_output(parted, tmp_path / "parted")
    assert files(tmp_path / "parted") == files(tmp_path / "alone")


@pytest.mark.parametrize("writers", [1, 3, 5])
def test_any_number_of_writers_gives_the_same_corpus(tmp_path, small_blocks, writers):
    vocabulary = load_vocabulary()
    write_output(build_phantom(CONFIG, vocabulary), tmp_path / "alone")
    stage = AskTemplates(CONFIG, generate_universe(CONFIG, vocabulary))
    (tmp_path / "parts").mkdir()
    corpus = CorpusWriters(stage.index, stage.attributes.dob_text, tmp_path / "parts", writers).join()
    joined = b"".join(part.path.read_bytes() for part in corpus.parts)
    assert joined == (tmp_path / "alone" / "corpus.jsonl").read_bytes()
    assert sum(part.documents for part in corpus.parts) == CONFIG.n


def test_a_writer_that_fails_is_named_in_one_line(tmp_path):
    stage = AskTemplates(CONFIG, generate_universe(CONFIG, load_vocabulary()))
    writers = CorpusWriters(stage.index, stage.attributes.dob_text, tmp_path / "missing")
    try:
        with pytest.raises(IrbgenError, match=r"^article writer corpus-0: .*No such file") as raised:
            writers.join()
    finally:
        writers.stop()
    assert "\n" not in str(raised.value) and not isinstance(raised.value, BadInputError)


def _failing_after_the_first(monkeypatch, fail):
    """Writers other than the first call FAIL instead of rendering their articles."""
    import irbgen.phantom.corpus as corpus_module

    real = corpus_module.articles

    def articles(index, dob_text, first, end):
        if first > 0:
            fail()
        return real(index, dob_text, first, end)

    monkeypatch.setattr(corpus_module, "articles", articles)


@pytest.mark.parametrize("how", ["raises", "killed"])
def test_a_later_writer_that_fails_is_named_by_the_one_joining(tmp_path, monkeypatch, how):
    def raises():
        raise OSError("disk full")

    def killed():
        os.kill(os.getpid(), 9)

    _failing_after_the_first(monkeypatch, raises if how == "raises" else killed)
    stage = AskTemplates(CONFIG, generate_universe(CONFIG, load_vocabulary()))
    (tmp_path / "parts").mkdir()
    writers = CorpusWriters(stage.index, stage.attributes.dob_text, tmp_path / "parts", 3)
    expected = {
        "raises": r"^article writer corpus-1: disk full$",
        "killed": r"^article writer corpus-1 stopped \(exit code -9\) before finishing its part",
    }[how]
    try:
        with pytest.raises(IrbgenError, match=expected):
            writers.join()
    finally:
        writers.stop()
    assert not any(process.is_alive() for process in writers.writers)


def test_document_ids_hold_exactly_the_ids_of_the_world():
    ids = DocumentIds(400)
    assert "p0000000" in ids and "p0000399" in ids
    for other in ("p0000400", "p000001", "p00000001", "x0000001", "p000000\u0661", "p-000001", "", None, 1):
        assert other not in ids


def test_a_killed_runs_parts_are_removed_but_not_this_runs(tmp_path):
    out = tmp_path / "bench"
    stale = tmp_path / f".bench.parts-{os.getpid() + 1}"
    stale.mkdir()
    with parts_directory(out) as parts:
        (parts / "corpus-0.jsonl").write_text("{}\n")
        remove_stale_siblings(out)
        assert not stale.exists() and (parts / "corpus-0.jsonl").exists()
    assert not parts.exists()


@pytest.mark.parametrize("size", [1, 400, 10_000_000, 123_456_789])
def test_ids_made_as_arrays_read_as_the_ids_made_one_by_one(size):
    ids = DocumentIds(size)
    people = np.unique(np.array([0, 1, 9, 10, size // 2, size - 2, size - 1]).clip(0, size - 1))
    assert ids.of(people) == [ids[person] for person in people.tolist()]
    assert ids.of(np.zeros(0, dtype=np.int32)) == []

"""The 1,026 real entities of ../shared/realdata/wikidata-openrefine-1026.json.bz2 for tests (read once,
about 2 s; tests skip when the file is absent), and helpers to ask a chain of its statements."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest

from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject
from irbgen.wikidata.chains import chain_id
from irbgen.wikidata.dumps import read_wikidata_dump
from irbgen.wikidata.knowledge import KnowledgeBase
from irbgen.wikidata.questions import WriteChainQuestions
from irbgen.wikidata.records import Chain, ChainHop, ChainQuestion, Statement, WikidataEntity

# ../shared/realdata/ from the project root; IRBGEN_REALDATA names the folder for a checkout elsewhere
REALDATA = Path(
    os.environ.get("IRBGEN_REALDATA") or Path(__file__).resolve().parents[2] / "shared" / "realdata"
)
OPENREFINE = REALDATA / "wikidata-openrefine-1026.json.bz2"


@cache
def read_openrefine() -> KnowledgeBase:
    records = read_wikidata_dump(OPENREFINE)
    return KnowledgeBase([r for r in records if isinstance(r, WikidataEntity)])


def openrefine_kb() -> KnowledgeBase:
    """The base of the 1,026 entities; skips the test when the file is absent."""
    if not OPENREFINE.exists():
        pytest.skip(f"real data not found at {OPENREFINE}")
    return read_openrefine()


def one(kb: KnowledgeBase, head: str, prop: str) -> Statement:
    (statement,) = {s.tail.key: s for s in kb.tails(head, prop)}.values()
    return statement


def ask(kb: KnowledgeBase, *statements: Statement) -> ChainQuestion | Reject:
    hops = [ChainHop(statement=s, popularity=0.0, popular=False) for s in statements]
    stage = WriteChainQuestions("rules", kb=kb)
    (out,) = stage.process(Chain(id=chain_id(statements), hops=hops), StageContext(run_dir=Path(".")))
    return out

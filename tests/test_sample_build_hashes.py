"""The three bundled sample builds give byte-identical benchmarks, checked against committed hashes.

A change that alters a sample build on purpose updates the hashes here in the same commit, and says why.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from irbgen.cli import main

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"

BUILDS = {
    "phantom": ["phantom", "--n", "50", "--seed", "1"],
    "wikipedia": [
        "build", "--source", "wikipedia-dump", "--offline",
        "--dump", str(SAMPLES / "wiki" / "sample-pages-articles.xml.bz2"),
        "--warc", str(SAMPLES / "web" / "cited-pages.warc.gz"),
    ],
    "wikidata": [
        "build", "--source", "wikidata-dump", "--offline",
        "--dump", str(SAMPLES / "wikidata" / "wikidata-new.json.bz2"),
        "--old-dump", str(SAMPLES / "wikidata" / "wikidata-old.json.gz"),
    ],
}

EXPECTED = {
    "phantom": {
        "samples.jsonl": "a181e39bef0d265dd63dcd70b5c9ddd522ce2dd050d9b6732d899b01c7d1628a",
        "corpus.jsonl": "7bb61ae0916f438f71baef1f08659e80a3d3750c40553d2f6f9f42595c247797",
        "queries.jsonl": "6df71589428103a778359daff7f060727c9b8638349ac6febc0933b628ee6500",
        "qrels/test.tsv": "243794847dfa12e0b4797962e29d4213f8262f397bf24a195297466fb5fe1d2f",
        "manifest.json": "b7a4dd21b34da036bebe5f3f4a03676a7980fc6de393827eefcca0aa349b3aa7",
        "README.md": "4b1670f96229af50e809ff8c5700f496788793e56f2e37f9071580fb9675c82f",
    },
    "wikipedia": {
        "samples.jsonl": "7532f7ced2d8106d19d44d60b4b333500cd8d722a9bc10d2b02ceeabaf521503",
        "corpus.jsonl": "ec9254af7301752c222d2783061f388e46dbe697680870c6910a03096b367738",
        "queries.jsonl": "bdbc4d4ed8e0d61e5064eae3d59df32c2fe2d4a8b84eeed7d810bf5018131e21",
        "qrels/test.tsv": "93bc25447582a6da9752e751464bf87d539d1befeb78e404ec16a7df25f7a626",
        "manifest.json": "46d0fbca26038be44be53075df0174afe3abc966746fa809e0a1d41e6ceea052",
        "README.md": "b9491cce27fde339cbe4274b5afb504efe2be60ec445ba6b01a9bbd91417a17d",
        "../rejects.jsonl": "49dd1dd695b0f3266385ec0516c9699653c19b1cbffa0f9cc55b92a04147b79b",
    },
    "wikidata": {
        "samples.jsonl": "b7c3e6b0bb614407568e6efb03bdaa541074862b7aa9f8f6a158abfe6d0c3469",
        "corpus.jsonl": "a570b0c310f0881cb6147e0eddc2872b0fc24ee1a80d81fb782f156251592113",
        "queries.jsonl": "84a34b3c367c4c1f86046f25a08c193e4d5403f2d5531dda899eb24f8cfc0a91",
        "qrels/test.tsv": "8216788ddf80a8a9e2082bc04d7c442c31f7be54279b8bb3f8f83592f932791d",
        "manifest.json": "a72bf7787308db1dfe66f9865918636b151f46297c97f5aa0477b286e98dfc05",
        "README.md": "7067fe3eb12598a3e90634d70cc09cfa7bf6f7caa97a4e51af57b3895b0bead9",
        "../rejects.jsonl": "c952a884d4538e065e4947151c2b6c182d87d0c0ce00026c640327b3200661ff",
    },
}


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_sample_build_is_byte_identical_to_the_committed_hashes(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*BUILDS[name], "--out", name])
    assert result.exit_code == 0, result.output
    benchmark = tmp_path / name if name == "phantom" else tmp_path / name / "benchmark"
    changed = {
        file: sha256(benchmark / file)
        for file, expected in EXPECTED[name].items()
        if sha256(benchmark / file) != expected
    }
    assert not changed, f"{name} sample build changed: {changed}"

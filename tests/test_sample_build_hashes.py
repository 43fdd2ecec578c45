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
        "manifest.json": "ad0301ab762043fa4d6959874a1b4f160b0a40ab92099930f00a932311084798",
        "README.md": "924b5f5046ac65477e6e289490d0d41ca81e5ecb8813451e4ee033041caa8fc3",
        "../rejects.jsonl": "c79e0f615c1ffbafaf256f1951192d2a39ee10077f9ceb9e5a7d08d218c6bbf7",
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

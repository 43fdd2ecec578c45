#!/usr/bin/env python3
"""Speed and memory of the Wikidata dump reader, the knowledge base and chain sampling.

Writes a synthetic Wikidata JSON dump of --entities entities (120 property entities, then items shaped
like well-described real ones: terms in 20 languages, 20-60 claims with qualifiers and references,
sitelinks) as .json, .json.gz (level 6) and .json.bz2 (level 9) in a temp dir, then measures, each run
in a fresh child process on one core:

    baselines  `bzip2 -dc`, `zcat`, `cat` of each file > /dev/null                     (median of --runs)
    read       read_wikidata_dump over each format, 1 shard, and 2 shards in 2 processes at once
               (the slower shard's clock; a compressed shard decompresses the whole file)  (median of --runs)
    split      one pass per phase over the plain JSON: lines only, + json.loads, + what the reader
               asks of qwikidata (WikidataItem, truthy claim groups, labels), the full read, the
               full read with the garbage collector off; and lines only for .gz and .bz2
    fix-*      the full read with each claim's references dropped before qwikidata parses them
               ("refs"), and also with one WikidataClaim per truthy claim ("refs+once")
    profile    cProfile of one full read of the plain JSON (top functions by own time)
    kb         every entity of the plain JSON held in a list, then a KnowledgeBase: RSS per entity
    stage      the build's path: run_stage(ReadEntities) with its checkpoint, then
               KnowledgeBase(result.outputs()) as build_wikidata does
    select     the full read with no filter and with --min-sitelinks at the median and 90th percentile
    chains     a base of --chain-items synthetic items (5 entity edges and one date each) and an old
               base with 80% of it; sample_chains(hops=(h, h), per_hop=--per-hop) for h = 1..4, each
               call timed alone                                                      (median of --runs)
    chains-gc-off  the same once with the garbage collector off

--claims LO-HI sets the claims per item (default 20-60, about 44 KB per entity; 5-20 gives about 12 KB),
--no-chains skips the chain runs.

    python bench/wikidata_speed.py --entities 8000 --json /tmp/wikidata_speed.json
    python bench/wikidata_speed.py --entities 28000 --claims 5-20 --no-chains --json /tmp/wikidata_small.json
"""

from __future__ import annotations

import argparse
import bz2
import gc
import gzip
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LANGUAGES = "en de fr es it nl pl pt ru ja zh sv uk ca ar fa ko cs hu fi".split()
SCRIPTS = {
    "ru": "ка ло ми ра то ве ни ст ан ор",
    "uk": "ка ло ми ра то ве ні ст ан ор",
    "ja": "カ ロ ミ ラ ト ベ ニ ス ア オ",
    "zh": "卡 罗 米 拉 托 维 尼 斯 安 奥",
    "ar": "كا لو مي را تو في ني س ان ور",
    "fa": "کا لو می را تو وی نی س ان ور",
    "ko": "카 로 미 라 토 베 니 스 안 오",
}
LATIN = "ka lo mer sin dra vel tor en bru ash fen gal ri mo ut hes par quin do lev"
# datatypes of the 120 synthetic properties P1000..P1119, roughly Wikidata's mix of claims
DATATYPES = [
    *["wikibase-item"] * 60,
    *["external-id"] * 30,
    *["time"] * 10,
    *["quantity"] * 8,
    *["string"] * 4,
    *["monolingualtext"] * 3,
    *["globe-coordinate"] * 2,
    *["commonsMedia"] * 2,
    "url",
]
ENTITY = "http://www.wikidata.org/entity/"
SITES = [f"{language}wiki" for language in LANGUAGES] + [
    f"{language}wikiquote" for language in LANGUAGES[:10]
]
FORMATS = {"bz2": ("dump.json.bz2", ["bzip2", "-dc"]), "gz": ("dump.json.gz", ["zcat"])}
FORMATS["json"] = ("dump.json", ["cat"])


# --- the synthetic dump ---------------------------------------------------------------------------------


def _word(rng: random.Random, language: str = "en") -> str:
    word = "".join(rng.choice(SCRIPTS.get(language, LATIN).split()) for _ in range(rng.randint(2, 4)))
    return word if language in SCRIPTS else word.capitalize()


def _value(rng: random.Random, datatype: str, items: int) -> tuple[str, Any]:
    """(datavalue type, value) for a snak of that property datatype."""
    if datatype == "wikibase-item":  # 30% of links go to the top 1% of items, as to countries or classes
        n = 1 + (rng.randrange(items) if rng.random() < 0.7 else rng.randrange(max(1, items // 100)))
        return "wikibase-entityid", {"entity-type": "item", "numeric-id": n, "id": f"Q{n}"}
    if datatype == "time":
        precision = rng.choice((9, 11, 11))
        day = f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}" if precision == 11 else "00-00"
        time_ = {"time": f"+{rng.randint(1500, 2024)}-{day}T00:00:00Z", "timezone": 0, "before": 0}
        return "time", {**time_, "after": 0, "precision": precision, "calendarmodel": f"{ENTITY}Q1985727"}
    if datatype == "quantity":
        unit = f"{ENTITY}Q{rng.randint(1, 999)}" if rng.random() < 0.5 else "1"
        return "quantity", {"amount": f"+{rng.randint(1, 10**7)}", "unit": unit}
    if datatype == "monolingualtext":
        language = rng.choice(LANGUAGES[:8])
        return "monolingualtext", {"text": _word(rng, language), "language": language}
    if datatype == "globe-coordinate":
        at = {"latitude": rng.uniform(-80, 80), "longitude": rng.uniform(-180, 180), "altitude": None}
        return "globecoordinate", {**at, "precision": 0.0001, "globe": f"{ENTITY}Q2"}
    text = {
        "url": lambda: f"https://www.{_word(rng).lower()}.example.org/{rng.getrandbits(32):x}",
        "commonsMedia": lambda: f"{_word(rng)} {_word(rng)} {rng.randint(1, 99)}.jpg",
        "external-id": lambda: str(rng.getrandbits(40)),
    }.get(datatype, lambda: f"{_word(rng)} {_word(rng)}")()
    return "string", text


def _snak(rng: random.Random, pid: str, datatype: str, items: int) -> dict:
    snak = {"snaktype": "value", "property": pid, "hash": f"{rng.getrandbits(160):040x}"}
    if rng.random() < 0.01:
        return {**snak, "snaktype": "somevalue", "datatype": datatype}
    kind, value = _value(rng, datatype, items)
    return {**snak, "datavalue": {"value": value, "type": kind}, "datatype": datatype}


def _snaks(rng: random.Random, items: int, spec: list[tuple[str, str]]) -> dict:
    return {pid: [_snak(rng, pid, datatype, items)] for pid, datatype in spec}


def _claim(rng: random.Random, qid: str, pid: str, items: int, rank: str) -> dict:
    claim: dict[str, Any] = {"mainsnak": _snak(rng, pid, DATATYPES[int(pid[1:]) - 1000], items)}
    claim["type"] = "statement"
    if rng.random() < 0.25:
        spec = [("P585", "time")] + ([("P642", "wikibase-item")] if rng.random() < 0.4 else [])
        claim["qualifiers"] = _snaks(rng, items, spec)
        claim["qualifiers-order"] = list(claim["qualifiers"])
    claim["id"], claim["rank"] = f"{qid}${rng.getrandbits(128):032X}", rank
    if rng.random() < 0.7:
        claim["references"] = []
        for _ in range(rng.choice((1, 1, 2))):
            spec = [("P248", "wikibase-item"), ("P813", "time")] + (
                [("P854", "url")] if rng.random() < 0.3 else []
            )
            snaks = _snaks(rng, items, spec)
            claim["references"].append(
                {"hash": f"{rng.getrandbits(160):040x}", "snaks": snaks, "snaks-order": list(snaks)}
            )
    return claim


def _terms(rng: random.Random, share: float, english: bool, aliases: bool = False) -> dict:
    out: dict[str, Any] = {}
    for language in LANGUAGES:
        if aliases and rng.random() < (0.4 if language == "en" else 0.1):
            out[language] = [
                {"language": language, "value": _word(rng, language)} for _ in range(rng.randint(1, 3))
            ]
        elif not aliases and (english if language == "en" else rng.random() < share):
            out[language] = {"language": language, "value": f"{_word(rng, language)} {_word(rng, language)}"}
    return out


def _entity(rng: random.Random, kind: str, eid: str, number: int, english: bool) -> dict:
    return {
        "type": kind,
        "id": eid,
        "labels": _terms(rng, 0.75, english),
        "descriptions": _terms(rng, 0.5, english and rng.random() < 0.8),
        "aliases": _terms(rng, 0, english, aliases=True),
        "claims": {},
        "sitelinks": {},
        "pageid": number,
        "ns": 0 if kind == "item" else 120,
        "title": eid if kind == "item" else f"Property:{eid}",
        "lastrevid": 2_000_000_000 + number,
        "modified": "2025-02-17T14:30:09Z",
    }


def item_json(rng: random.Random, number: int, items: int, claims: tuple[int, int] = (20, 60)) -> dict:
    """One synthetic item; 10% have no English label (they become no_english_label rejects)."""
    item = _entity(rng, "item", f"Q{number}", number, english=rng.random() < 0.9)
    groups, wanted = item["claims"], rng.randint(*claims)
    while sum(map(len, groups.values())) < wanted:
        pid, size = f"P{1000 + rng.randrange(len(DATATYPES))}", rng.choice((1, 1, 1, 2, 3))
        ranks = ["preferred" if size > 1 and i == 0 and rng.random() < 0.3 else "normal" for i in range(size)]
        ranks[-1] = "deprecated" if rng.random() < 0.03 else ranks[-1]
        groups.setdefault(pid, []).extend(_claim(rng, item["id"], pid, items, rank) for rank in ranks)
    count, title = (0 if rng.random() < 0.4 else rng.randint(1, len(SITES))), f"{_word(rng)} {_word(rng)}"
    sites = SITES[:count] if rng.random() < 0.7 else SITES[1 : count + 1]  # 70% have an enwiki link
    item["sitelinks"] = {site: {"site": site, "title": title, "badges": []} for site in sites}
    return item


def make_dump(
    workdir: Path, entities: int, claims: tuple[int, int] = (20, 60), seed: int = 0
) -> dict[str, Any]:
    """Write dump.json, dump.json.gz and dump.json.bz2 (one entity per line); return their sizes."""
    rng = random.Random(seed)
    items = entities - len(DATATYPES)
    props = [_entity(rng, "property", f"P{1000 + i}", i + 10, True) for i in range(len(DATATYPES))]
    lines = [
        json.dumps({**p, "datatype": DATATYPES[i]}, ensure_ascii=False, separators=(",", ":"))
        for i, p in enumerate(props)
    ]
    total = 0
    for number in range(1, items + 1):
        item = item_json(rng, number, items, claims)
        total += sum(map(len, item["claims"].values()))
        lines.append(json.dumps(item, ensure_ascii=False, separators=(",", ":")))
    data = ("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8")
    (workdir / "dump.json").write_bytes(data)
    (workdir / "dump.json.gz").write_bytes(gzip.compress(data, 6, mtime=0))
    (workdir / "dump.json.bz2").write_bytes(bz2.compress(data, 9))
    item_bytes = len(data) - sum(len(line.encode("utf-8")) + 2 for line in lines[: len(DATATYPES)])
    sizes = {f"{fmt}_bytes": (workdir / name).stat().st_size for fmt, (name, _) in FORMATS.items()}
    return {
        "entities": entities,
        "items": items,
        "claims": total,
        "mean_entity_bytes": len(data) / entities,
        "mean_item_bytes": item_bytes / items,
        "mean_item_claims": total / items,
        **sizes,
    }


# --- measurements (each in a child process) -------------------------------------------------------------


def _status(field: str) -> float:
    return next(int(line.split()[1]) / 1024 for line in open("/proc/self/status") if line.startswith(field))


def peak_rss_mib() -> float:
    """This process's peak RSS since it started or since the last reset_peak() (VmHWM)."""
    return _status("VmHWM:")


def rss_mib() -> float:
    """This process's current RSS."""
    return _status("VmRSS:")


def reset_peak() -> None:
    """Restart VmHWM from the current RSS (Linux: write 5 to clear_refs)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")


def measure_read(path: Path, shard: int = 0, shards: int = 1) -> dict[str, Any]:
    """Every record of one shard: counts, seconds and peak RSS."""
    from irbgen.wikidata.dumps import read_wikidata_dump
    from irbgen.wikidata.records import WikidataEntity

    counts: Counter = Counter()
    start = time.perf_counter()
    for record in read_wikidata_dump(path, shard=shard, shards=shards):
        if isinstance(record, WikidataEntity):
            counts[record.kind] += 1
            counts["statements"] += len(record.statements)
        else:
            counts[f"reject:{record.reason}"] += 1
    seconds = time.perf_counter() - start
    lines = sum(n for key, n in counts.items() if key != "statements")
    return {"seconds": seconds, "lines": lines, **counts, "max_rss_mib": peak_rss_mib()}


def _lines(path: Path):
    from irbgen.wikidata.dumps import _OPENERS, _entity_line, dump_compression

    with (_OPENERS[dump_compression(path)] or (lambda p: open(p, "rb")))(path) as f:
        yield from (line for raw in f if (line := _entity_line(raw)) is not None)


def _qwikidata_only(obj: dict) -> int:
    """What the reader asks of qwikidata, without building our records; returns the truthy claims."""
    from qwikidata.entity import WikidataItem, WikidataProperty

    full = {"labels": {}, "descriptions": {}, "aliases": {}, "claims": {}, "sitelinks": {}, **obj}
    entity = WikidataItem(full) if obj["type"] == "item" else WikidataProperty(full)
    entity.get_label("en"), entity.get_aliases("en"), entity.get_description("en")
    groups = entity.get_truthy_claim_groups().values() if obj["type"] == "item" else []
    return sum(1 for group in groups for claim in group if claim.mainsnak.datavalue)


def measure_split(workdir: Path) -> dict[str, Any]:
    """One timed pass per phase: where the read time of the plain JSON goes; line reading per format."""
    from irbgen.wikidata.dumps import read_wikidata_dump

    phases = {
        "lines": lambda path: sum(1 for _ in _lines(path)),
        "json": lambda path: sum(1 for line in _lines(path) if json.loads(line)),
        "qwikidata": lambda path: sum(_qwikidata_only(json.loads(line)) for line in _lines(path)),
        "full": lambda path: sum(1 for _ in read_wikidata_dump(path)),
    }
    runs = [(name, name, "json") for name in phases]
    runs += [("full", "full_gc_off", "json"), ("lines", "lines_gz", "gz"), ("lines", "lines_bz2", "bz2")]
    out: dict[str, Any] = {}
    for phase, name, fmt in runs:
        gc.disable() if name.endswith("gc_off") else gc.enable()
        start = time.perf_counter()
        phase_count = phases[phase](workdir / FORMATS[fmt][0])
        out[name], out[f"{name}_count"] = time.perf_counter() - start, phase_count
    return out


def _without_references(obj: dict[str, Any]) -> dict[str, Any]:
    claims = obj.get("claims")
    if isinstance(claims, dict):
        strip = lambda c: {k: v for k, v in c.items() if k != "references"} if isinstance(c, dict) else c  # noqa: E731
        obj["claims"] = {p: [strip(c) for c in g] if isinstance(g, list) else g for p, g in claims.items()}
    return obj


def _truthy_once(item) -> list:
    """The reader's _statements, building one WikidataClaim per truthy claim (qwikidata builds each claim
    twice: get_truthy_claim_group makes the whole group, then the truthy group again)."""
    from qwikidata.claim import WikidataClaim

    from irbgen.wikidata import dumps
    from irbgen.wikidata.records import Statement

    out = []
    for pid, group in item._entity_dict["claims"].items():
        ranks = [str(claim.get("rank", "")).lower() for claim in group]
        best = "preferred" if "preferred" in ranks else "normal"
        claims = [WikidataClaim(claim) for claim, rank in zip(group, ranks, strict=True) if rank == best]
        pairs = [(c, value) for c in claims if (value := dumps.snak_value(c.mainsnak)) is not None]
        for claim, value in dumps._prefer_english(pairs):
            qualifiers = dumps._qualifiers(claim)
            out.append(
                Statement(head=item.entity_id, property=pid, tail=value, rank=best, qualifiers=qualifiers)
            )
    return out


def measure_fix(workdir: Path, variant: str) -> dict[str, Any]:
    """The full read of the plain JSON with a candidate fix patched in; checks the records stay the same."""
    from irbgen.wikidata import dumps

    def first_records() -> list[str]:
        return [r.model_dump_json() for r in dumps.read_wikidata_dump(workdir / "dump.json", limit=500)]

    before, parse = first_records(), dumps._parse
    dumps._parse = lambda obj: parse(_without_references(obj))
    if variant == "refs+once":
        dumps._statements = _truthy_once
    same = first_records() == before  # outside the clock
    return {**measure_read(workdir / "dump.json"), "variant": variant, "same_first_500_records": same}


def measure_profile(workdir: Path, top: int = 25) -> dict[str, Any]:
    """cProfile of one full read of the plain JSON: the top functions by own time."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(measure_read, workdir / "dump.json")
    stats = pstats.Stats(profiler)
    rows = [
        {
            "function": f"{file.split('site-packages/')[-1].replace(str(ROOT) + '/', '')}:{line}:{name}",
            "calls": calls,
            "own": own,
            "cumulative": cumulative,
        }
        for (file, line, name), (_, calls, own, cumulative, _) in stats.stats.items()  # type: ignore[attr-defined]
    ]
    return {"total": stats.total_tt, "top": sorted(rows, key=lambda row: -row["own"])[:top]}  # type: ignore[attr-defined]


def measure_kb(workdir: Path) -> dict[str, Any]:
    """RSS of every read entity held in a list, then of a KnowledgeBase over them."""
    from irbgen.wikidata.dumps import read_wikidata_dump
    from irbgen.wikidata.knowledge import KnowledgeBase
    from irbgen.wikidata.records import WikidataEntity

    base = rss_mib()
    entities = [r for r in read_wikidata_dump(workdir / "dump.json") if isinstance(r, WikidataEntity)]
    held = rss_mib()
    start = time.perf_counter()
    kb = KnowledgeBase(entities)
    return {
        "entities": len(kb.entities),
        "statements": len(kb.statements),
        "entities_mib": held - base,
        "kb_mib": rss_mib() - base,
        "kb_seconds": time.perf_counter() - start,
        "max_rss_mib": peak_rss_mib(),
    }


def measure_stage(workdir: Path) -> dict[str, Any]:
    """The build's read path: run_stage(ReadEntities) over one shard, then a KnowledgeBase of its outputs."""
    from irbgen.pipeline.runner import run_stage
    from irbgen.pipeline.stage import StageContext
    from irbgen.wikidata.dumps import ReadEntities, wikidata_shards
    from irbgen.wikidata.knowledge import KnowledgeBase

    with tempfile.TemporaryDirectory(prefix="irbgen-wd-stage-") as run_dir:
        start = time.perf_counter()
        shards = wikidata_shards(workdir / "dump.json")
        result = run_stage(ReadEntities(), shards, StageContext(run_dir=Path(run_dir)))
        out = {"stage_seconds": time.perf_counter() - start, "stage_max_rss_mib": peak_rss_mib()}
        out["checkpoint_bytes"] = sum(p.stat().st_size for p in Path(run_dir).rglob("*") if p.is_file())
        reset_peak()
        start = time.perf_counter()
        kb = KnowledgeBase(result.outputs())
        out.update(kb_seconds=time.perf_counter() - start, kb_entities=len(kb.entities))
        return {**out, "kb_max_rss_mib": peak_rss_mib()}


def measure_select(workdir: Path) -> dict[str, Any]:
    """The full read of the plain JSON with no filter, and with --min-sitelinks at the median and 90th
    percentile of the items' sitelink counts (two runs each; the faster is kept)."""
    from irbgen.wikidata.dumps import read_wikidata_dump
    from irbgen.wikidata.records import WikidataEntity
    from irbgen.wikidata.selection import EntityFilter

    path = workdir / "dump.json"
    counts = sorted(len(json.loads(line).get("sitelinks") or {}) for line in _lines(path))
    out: dict[str, Any] = {}
    for name, least in (
        ("none", 0),
        ("median", counts[len(counts) // 2]),
        ("p90", counts[len(counts) * 9 // 10]),
    ):
        runs = []
        for _ in range(2):
            start = time.perf_counter()
            kept = sum(
                isinstance(record, WikidataEntity)
                for record in read_wikidata_dump(
                    path, keep=EntityFilter(min_sitelinks=least) if least else None
                )
            )
            runs.append(time.perf_counter() - start)
        out[name] = {"min_sitelinks": least, "kept": kept, "seconds": min(runs)}
    return out


def chain_entities(items: int, seed: int = 0) -> tuple[list, list]:
    """Entities of a base of `items` items (5 entity edges and one date each) and of an old base with 80%."""
    from irbgen.wikidata.records import Statement, Value, WikidataEntity

    rng = random.Random(seed)
    functional = [f"P{2000 + i}" for i in range(16)]  # one tail per head
    multi = [f"P{2100 + i}" for i in range(4)]  # two tails on one head: never unique
    new = [
        WikidataEntity(id=p, kind="property", label=p, datatype="wikibase-item") for p in functional + multi
    ]
    new.append(WikidataEntity(id="P2200", kind="property", label="date of event", datatype="time"))
    old, old_ids = list(new), set(rng.sample(range(1, items + 1), int(items * 0.8)))

    def edge(head: str, pid: str) -> Statement:
        n = 1 + (rng.randrange(items) if rng.random() < 0.7 else rng.randrange(items // 100))  # hubs
        return Statement(
            head=head, property=pid, tail=Value(type="entity", id=f"Q{n}", text=f"Q{n}"), rank="normal"
        )

    for number in range(1, items + 1):
        qid, pid = f"Q{number}", rng.choice(multi)
        if rng.random() < 0.8:
            statements = [edge(qid, p) for p in rng.sample(functional, 5)]
        else:
            statements = [edge(qid, p) for p in rng.sample(functional, 3)] + [edge(qid, pid), edge(qid, pid)]
        year = rng.randint(1800, 2024)
        date = Value(type="time", text=str(year), raw=f"+{year}-00-00T00:00:00Z", precision=9)
        statements.append(Statement(head=qid, property="P2200", tail=date, rank="normal"))
        common = {
            "id": qid,
            "kind": "item",
            "label": f"item {number}",
            "sitelinks": int(rng.expovariate(1 / 12)),
        }
        new.append(WikidataEntity(**common, statements=statements))
        if number in old_ids:
            kept = [s for s in statements if s.tail.type != "entity" or int(s.tail.id[1:]) in old_ids]
            kept = [edge(qid, s.property) if rng.random() < 0.05 else s for s in kept]  # changed values
            old.append(WikidataEntity(**common, statements=kept))
    return new, old


def measure_chains(items: int, per_hop: int, gc_off: bool = False) -> dict[str, Any]:
    """Build the two bases of the chain graph, then time sample_chains for each hop count alone."""
    from irbgen.wikidata.chains import sample_chains
    from irbgen.wikidata.knowledge import KnowledgeBase
    from irbgen.wikidata.labels import Newness, make_popularity

    gc.disable() if gc_off else gc.enable()
    out: dict[str, Any] = {"gc": "off" if gc_off else "on"}
    base, start = rss_mib(), time.perf_counter()
    new_entities, old_entities = chain_entities(items)
    out.update(entities_seconds=time.perf_counter() - start, entities_mib=rss_mib() - base)
    start, before = time.perf_counter(), rss_mib()
    kb = KnowledgeBase(new_entities)
    out.update(kb_seconds=time.perf_counter() - start, kb_index_mib=rss_mib() - before)
    start = time.perf_counter()
    old = KnowledgeBase(old_entities)
    out.update(old_kb_seconds=time.perf_counter() - start, both_kbs_mib=rss_mib() - base)
    out.update(statements=len(kb.statements), old_statements=len(old.statements))
    out["entity_edges"] = sum(1 for s in kb.statements if s.tail.type == "entity")
    popularity, newness = make_popularity("sitelinks", kb), Newness(old)
    for hops in (1, 2, 3, 4):
        reset_peak()
        stats: Counter = Counter()
        collections, start = gc.get_stats()[2]["collections"], time.perf_counter()
        chains = sample_chains(
            kb,
            hops=(hops, hops),
            per_hop=per_hop,
            popularity=popularity,
            threshold=popularity.threshold,
            newness=newness,
            rng=random.Random(0),
            stats=stats,
        )
        out[f"hops{hops}"] = {
            "seconds": time.perf_counter() - start,
            "chains": len(chains),
            "strata": {k.split(":", 1)[1]: n for k, n in sorted(stats.items()) if k.startswith("chains_")},
            "candidates": sum(n for k, n in stats.items() if k.startswith("candidates_")),
            "expansions": stats[f"expansions_{hops}_hop"],
            "full_collections": gc.get_stats()[2]["collections"] - collections,
            "max_rss_mib": peak_rss_mib(),
        }
    return out


CHILDREN = {
    "read": lambda a: measure_read(a.workdir / FORMATS[a.format][0], a.shard, a.shards),
    "split": lambda a: measure_split(a.workdir),
    "fix-refs": lambda a: measure_fix(a.workdir, "refs"),
    "fix-refs+once": lambda a: measure_fix(a.workdir, "refs+once"),
    "profile": lambda a: measure_profile(a.workdir),
    "kb": lambda a: measure_kb(a.workdir),
    "stage": lambda a: measure_stage(a.workdir),
    "select": lambda a: measure_select(a.workdir),
    "chains": lambda a: measure_chains(a.chain_items, a.per_hop),
    "chains-gc-off": lambda a: measure_chains(a.chain_items, a.per_hop, gc_off=True),
}


# --- the parent -----------------------------------------------------------------------------------------


def child(kind: str, args: argparse.Namespace, fmt: str = "json", shard: int = 0, shards: int = 1):
    cmd = [sys.executable, __file__, "--child", kind, "--workdir", str(args.workdir), "--format", fmt]
    cmd += ["--shard", str(shard), "--shards", str(shards), "--chain-items", str(args.chain_items)]
    return subprocess.Popen([*cmd, "--per-hop", str(args.per_hop)], stdout=subprocess.PIPE, text=True)


def run_child(kind: str, args: argparse.Namespace, fmt: str = "json") -> dict[str, Any]:
    proc = child(kind, args, fmt)
    out, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"child {kind} {fmt} failed with {proc.returncode}")
    print(kind, fmt, out[:200], file=sys.stderr)
    return json.loads(out)


def two_shards(args: argparse.Namespace, fmt: str) -> dict[str, Any]:
    """Both shards of a dump in two processes at once; the slower shard's own clock."""
    shards = [json.loads(p.communicate()[0]) for p in [child("read", args, fmt, k, 2) for k in range(2)]]
    return {"seconds": max(s["seconds"] for s in shards), "shards": shards}


def command_seconds(cmd: list[str], path: Path) -> float:
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run([*cmd, str(path)], stdout=null, check=True)
    return time.perf_counter() - start


def median_of(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"median_seconds": statistics.median(r["seconds"] for r in runs), "runs": runs}


def measure_all(args: argparse.Namespace) -> dict[str, Any]:
    """Every measurement of the module docstring, in that order."""
    results: dict[str, Any] = {"machine": machine()}
    start = time.perf_counter()
    results["dump"] = make_dump(args.workdir, args.entities, tuple(map(int, args.claims.split("-"))))
    results["dump"]["write_seconds"] = time.perf_counter() - start
    print("dump", results["dump"], file=sys.stderr)
    for fmt, (name, cmd) in FORMATS.items():
        command_seconds(cmd, args.workdir / name)  # warms the page cache
        times = [command_seconds(cmd, args.workdir / name) for _ in range(args.runs)]
        results[f"baseline_{fmt}"] = {
            "command": " ".join(cmd),
            "runs": times,
            "median_seconds": statistics.median(times),
        }
    for fmt in FORMATS:
        results[f"read_{fmt}"] = median_of([run_child("read", args, fmt) for _ in range(args.runs)])
    for fmt in FORMATS:
        results[f"read_{fmt}_2shards"] = median_of([two_shards(args, fmt) for _ in range(args.runs)])
    for kind in ("split", "fix-refs", "fix-refs+once", "profile", "kb", "stage"):
        results[kind] = run_child(kind, args)
    if not args.no_chains:
        runs = [run_child("chains", args) for _ in range(args.runs)]
        results["chains"] = {f"hops{h}": median_of([r[f"hops{h}"] for r in runs]) for h in (1, 2, 3, 4)}
        results["chains"]["builds"] = [{k: v for k, v in r.items() if not k.startswith("hops")} for r in runs]
        results["chains_gc_off"] = run_child("chains-gc-off", args)
    results["machine"]["load_after"] = os.getloadavg()
    return results


def machine() -> dict[str, Any]:
    from importlib.metadata import version

    def run(*cmd: str) -> str:
        done = subprocess.run(cmd, capture_output=True, text=True)
        return (done.stdout or done.stderr).strip()

    cpu = [line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")]
    return {
        "cpu": cpu[0] if cpu else "",
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "commit": run("git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"),
        "irbgen_changes": run("git", "-C", str(ROOT), "status", "--porcelain", "irbgen"),
        "qwikidata": version("qwikidata"),
        "pydantic": version("pydantic"),
        "bzip2": run("bzip2", "--help").splitlines()[0],
        "gzip": run("gzip", "--version").splitlines()[0],
        "load_before": os.getloadavg(),
    }


def report(r: dict[str, Any]) -> None:
    """Print the main numbers (RESULTS.md is written from the JSON)."""
    d = r["dump"]
    size = f"{d['json_bytes'] / 1e6:.1f} MB, {d['mean_entity_bytes']:,.0f} B/entity"
    print(f"dump: {d['entities']:,} entities, {size}")
    for name in [f"read_{fmt}{shards}" for shards in ("", "_2shards") for fmt in FORMATS]:
        secs, base = r[name]["median_seconds"], r[f"baseline_{name.split('_')[1]}"]["median_seconds"]
        rate = f"{d['entities'] / secs:,.0f} entities/s, {d['json_bytes'] / 1e6 / secs:.1f} MB/s"
        print(f"{name}: {secs:.2f} s, {rate}, {base / secs:.3f} x baseline ({base:.2f} s)")
    for name in ("split", "fix-refs", "fix-refs+once", "kb", "stage"):
        print(f"{name}: {json.dumps(r[name])}")
    for h in (1, 2, 3, 4) if "chains" in r else ():
        m, off = r["chains"][f"hops{h}"], r["chains_gc_off"][f"hops{h}"]
        peak = max(x["max_rss_mib"] for x in m["runs"])
        print(
            f"chains {h} hops: {m['median_seconds']:.2f} s, {m['runs'][0]['chains']} chains, {peak:.0f} MiB"
        )
        print(f"    gc off: {off['seconds']:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--entities", type=int, default=8_000, help="entities in the synthetic dump")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per measurement (the median is used)")
    parser.add_argument("--claims", default="20-60", help="claims per item, LO-HI (uniform)")
    parser.add_argument("--no-chains", action="store_true", help="skip the chain-sampling runs")
    parser.add_argument("--chain-items", type=int, default=200_000, help="items of the chain-sampling graph")
    parser.add_argument("--per-hop", type=int, default=10_000, help="chains asked for per hop count")
    parser.add_argument(
        "--workdir", type=Path, default=None, help="where the dump goes (default: a temp dir)"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--format", default="json", choices=sorted(FORMATS), help=argparse.SUPPRESS)
    parser.add_argument("--shard", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--shards", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    with tempfile.TemporaryDirectory(prefix="irbgen-wikidata-bench-") as tmp:
        args.workdir = args.workdir or Path(tmp)
        args.workdir.mkdir(parents=True, exist_ok=True)
        results = measure_all(args)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

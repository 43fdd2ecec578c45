"""Write a large Wikidata JSON dump from the shapes of the 100 real entities in ../shared/realdata.

Each generated item copies a real entity's claims, keeping a random subset of its property groups (so
the mean number of statements per item is near `--claims`), with its own id, an English label, a few
other-language labels and a sitelink count drawn from the real ones. Item values point at other
generated items (so chains exist); references are dropped (the reader never reads them). Optionally a
second, "old" dump of the same items with about `--change` of the statements changed or missing.

    python bench/make_wikidata_dump.py --statements 20000000 --out /tmp/wd20m.json
    python bench/make_wikidata_dump.py --statements 1000000 --out /tmp/new.json --old /tmp/old.json
"""

from __future__ import annotations

import argparse
import bz2
import json
import random
from pathlib import Path

REAL = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "wikidata-100-entities.json.bz2"


def real_entities(path: Path) -> list[dict]:
    entities = []
    with bz2.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line not in ("[", "]", ""):
                entity = json.loads(line)
                for group in entity.get("claims", {}).values():
                    for claim in group:
                        claim.pop("references", None)
                entities.append(entity)
    return entities


def remap(claim: dict, items: int, rng: random.Random) -> dict:
    """The claim with its item value (and the id it carries) pointing at a random generated item."""
    value = claim.get("mainsnak", {}).get("datavalue", {}).get("value")
    if isinstance(value, dict) and value.get("entity-type") == "item":
        target = rng.randrange(1, items + 1)
        claim = {**claim, "mainsnak": {**claim["mainsnak"]}}
        claim["mainsnak"]["datavalue"] = {**claim["mainsnak"]["datavalue"]}
        value = {"entity-type": "item", "numeric-id": target, "id": f"Q{target}"}
        claim["mainsnak"]["datavalue"]["value"] = value
    return claim


def item(number: int, template: dict, keep: float, items: int, rng: random.Random) -> dict:
    claims = {}
    for prop, group in template.get("claims", {}).items():
        if rng.random() < keep:
            claims[prop] = [remap(claim, items, rng) for claim in group]
    qid = f"Q{number}"
    labels = {"en": {"language": "en", "value": f"item {number}"}}
    for language in ("de", "fr", "es"):
        labels[language] = {"language": language, "value": f"{language} {number}"}
    count = min(len(template.get("sitelinks", {})), rng.choice((0, 1, 3, 12, 40)))
    sitelinks = {f"site{k}wiki": {"site": f"site{k}wiki", "title": f"item {number}"} for k in range(count)}
    return {"type": "item", "id": qid, "labels": labels, "descriptions": {}, "aliases": {},
            "claims": claims, "sitelinks": sitelinks}  # fmt: skip


def changed(entity: dict, change: float, rng: random.Random) -> dict:
    """An older version: about `change` of the property groups dropped."""
    claims = {prop: group for prop, group in entity["claims"].items() if rng.random() >= change}
    return {**entity, "claims": claims}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=20_000_000)
    parser.add_argument("--claims", type=float, default=20.0, help="mean statements per item")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--old", type=Path, help="also write an older dump of the same items")
    parser.add_argument("--change", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    templates = real_entities(REAL)
    sizes = [sum(len(g) for g in t.get("claims", {}).values()) for t in templates]
    items = max(1, round(args.statements / args.claims))
    written = 0
    old = args.old.open("w") if args.old else None
    with args.out.open("w") as out:
        out.write("[\n")
        if old:
            old.write("[\n")
        number = 0
        while written < args.statements:
            number += 1
            index = rng.randrange(len(templates))
            keep = min(1.0, args.claims / max(sizes[index], 1))
            entity = item(number, templates[index], keep, items, rng)
            written += sum(len(group) for group in entity["claims"].values())
            out.write(json.dumps(entity, ensure_ascii=False) + ",\n")
            if old:
                old.write(json.dumps(changed(entity, args.change, rng), ensure_ascii=False) + ",\n")
        out.write("]\n")
        if old:
            old.write("]\n")
            old.close()
    print(json.dumps({"items": number, "statements": written, "bytes": args.out.stat().st_size}))


if __name__ == "__main__":
    main()

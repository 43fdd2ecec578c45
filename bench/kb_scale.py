"""Build the columnar knowledge base straight from a dump and report its size per statement.

    python bench/kb_scale.py DUMP [--limit N] [--save DIR] [--keep-all-statements]

Prints one JSON line: entities and statements read, seconds to read and to build, resident bytes per
statement (fixed-width columns and the id index) and string-table bytes per statement, peak RSS.
`--keep-all-statements` reads as the build's flag does: also the statements no question can use.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import time
from pathlib import Path

from irbgen.wikidata.columns import ColumnsBuilder
from irbgen.wikidata.dumps import read_wikidata_dump
from irbgen.wikidata.records import WikidataEntity


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--keep-all-statements", action="store_true")
    args = parser.parse_args()
    gc.disable()
    builder = ColumnsBuilder()
    started = time.perf_counter()
    entities = 0
    records = read_wikidata_dump(args.dump, limit=args.limit, keep_all_statements=args.keep_all_statements)
    for record in records:
        if isinstance(record, WikidataEntity):
            builder.add_entity(record)
            entities += 1
    read_and_add = time.perf_counter() - started
    started = time.perf_counter()
    columns = builder.finish()
    finish = time.perf_counter() - started
    n = columns.statement_count
    report = {
        "entities": entities,
        "statements": n,
        "read_and_add_s": round(read_and_add, 1),
        "finish_s": round(finish, 1),
        "resident_bytes_per_statement": round(columns.resident_bytes() / n, 1),
        "string_bytes_per_statement": round(columns.string_bytes() / n, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    if args.save:
        started = time.perf_counter()
        columns.save(args.save)
        report["save_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report))


if __name__ == "__main__":
    main()

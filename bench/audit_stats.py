"""Figures of a held-out audit sheet: valid overall and per kind with Wilson 95% intervals.

    python bench/audit_stats.py SHEET.md VERDICTS.txt

SHEET.md is what bench/heldout_draw.py printed; VERDICTS.txt has one line per item, "N valid" or
"N invalid: why", written by the person who read the sheet.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

from irbgen.audit.score import wilson


def main() -> None:
    sheet, verdicts = sys.argv[1], sys.argv[2]
    kinds = dict(re.findall(r"^(\d+)\. `[^`]+` \([^,]+, (\w+)\)", open(sheet, encoding="utf-8").read(), re.M))
    judged = dict(re.findall(r"^(\d+) (valid|invalid)", open(verdicts, encoding="utf-8").read(), re.M))
    totals, valids = Counter(), Counter()
    for number, verdict in judged.items():
        for group in ("all", kinds[number]):
            totals[group] += 1
            valids[group] += verdict == "valid"
    groups = ["all", *sorted(set(kinds[number] for number in judged))]  # single_hop, ... or 1_hop, ...
    for group in groups:
        low, high = wilson(valids[group], totals[group])
        share = valids[group] / totals[group] if totals[group] else 0.0
        print(f"{group}: {valids[group]} of {totals[group]} valid, {share:.0%} [{low:.0%}, {high:.0%}]")


if __name__ == "__main__":
    main()

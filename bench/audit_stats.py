"""Figures of a held-out audit sheet: valid overall and per kind with Wilson 95% intervals.

    python bench/audit_stats.py SHEET.md VERDICTS.txt

SHEET.md is what bench/heldout_draw.py printed; VERDICTS.txt has one line per item, "N valid" or
"N invalid: why", written by the person who read the sheet.
"""

from __future__ import annotations

import math
import re
import sys
from collections import Counter


def wilson(valid: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of valid/total."""
    if total == 0:
        return (0.0, 0.0)
    share = valid / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return centre - half, centre + half


def main() -> None:
    sheet, verdicts = sys.argv[1], sys.argv[2]
    kinds = dict(re.findall(r"^(\d+)\. `[^`]+` \([^,]+, (\w+)\)", open(sheet, encoding="utf-8").read(), re.M))
    judged = dict(re.findall(r"^(\d+) (valid|invalid)", open(verdicts, encoding="utf-8").read(), re.M))
    totals, valids = Counter(), Counter()
    for number, verdict in judged.items():
        for group in ("all", kinds[number]):
            totals[group] += 1
            valids[group] += verdict == "valid"
    for group in ("all", "single_hop", "multi_hop", "false_premise"):
        low, high = wilson(valids[group], totals[group])
        share = valids[group] / totals[group] if totals[group] else 0.0
        print(f"{group}: {valids[group]} of {totals[group]} valid, {share:.0%} [{low:.0%}, {high:.0%}]")


if __name__ == "__main__":
    main()

"""The report's hop-necessity section: per hop-ablation run, the share of samples that need every hop."""

from __future__ import annotations

from irbgen.eval.report.document import Block, Heading, Paragraph, Table
from irbgen.eval.report.runs import EvalRun


def hop_necessity_section(runs: list[EvalRun]) -> list[Block]:
    """A table of hop-ablation runs by hop count (nothing when no run is one)."""
    ablated = [run for run in runs if run.hop_ablation is not None]
    if not ablated:
        return []
    rows = []
    for run in ablated:
        summary = run.hop_ablation or {}
        rule = f"{summary.get('by')} >= {summary.get('threshold')}"
        cells = {**summary["by_hops"], "all": summary.get("overall") or {}}
        for hops, cell in cells.items():
            if not cell.get("ablated"):
                continue
            share = cell.get("share")
            rows.append(
                (
                    run.label,
                    rule,
                    hops,
                    f"{cell['ablated']:,}",
                    f"{cell.get('needs_every_hop', 0):,}",
                    "n/a" if share is None else f"{share:.3f}",
                    _count(cell.get("answered")),
                    _count(cell.get("answered_need_every_hop")),
                )
            )
    text = (
        "Each multi-hop sample was asked again once per hop with that hop's evidence documents left out. "
        "It needs every hop when no such ablation still answers, that is, meets the rule in the table. "
        "Single-hop and false-premise samples are not ablated. A sample the model gets wrong even with all "
        "its evidence fails every ablation too: the last two columns count the samples answered with all "
        "the evidence, and of those the ones that need every hop."
    )
    header = ("run", "still answers when", "hops", "ablated", "needs every hop", "share")
    header += ("answered with all", "of those, need every hop")
    return [Heading(3, "Hop necessity"), Paragraph(text), Table(header, tuple(rows))]


def _count(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) else "n/a"

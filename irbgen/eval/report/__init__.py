"""One report over several evaluation directories: report.md and report.html with the same content, plus PNGs.

An evaluation directory holds config.json, metrics.json and per_query.jsonl (see irbgen.eval.evaldir).
The report shows overall metrics per run, metrics per attribute value per run with counts, QA measures
against difficulty and hops, retrieval nDCG per attribute value, and the answer-count histogram of every
benchmark the runs name. The same inputs give the same files.

Modules: `runs` (read an evaluation directory: EvalRun, read_eval), `document` (the blocks: Heading,
Paragraph, Bullets, Table, Image), `render` (Markdown and HTML), `tables`, `charts` (the PNGs and the
blocks that show them) and `build` (write_report: the sections in order, the files written).
"""

from irbgen.eval.report.build import write_report
from irbgen.eval.report.runs import EvalRun, read_eval
from irbgen.eval.report.tables import measure_order

__all__ = ["EvalRun", "measure_order", "read_eval", "write_report"]

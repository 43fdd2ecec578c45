"""Reports and comparisons a person can read: notes once, columns in reading order, counts on bars,
small buckets marked, answers counted once per value, no "(none)" plotted."""

from __future__ import annotations

import json
from pathlib import Path

from irbgen.eval.compare import _shares, answer_key
from irbgen.eval.plots import Panel, Series, bar_chart
from irbgen.eval.report import measure_order, write_report


def test_columns_go_retrieval_then_answers_then_judge() -> None:
    names = ["judge", "em", "AP", "contains", "R@4", "f1", "nDCG@4", "RR@10", "precision", "recall"]
    assert sorted(names, key=measure_order) == [
        "nDCG@4", "R@4", "RR@10", "AP", "f1", "em", "precision", "recall", "contains", "judge",
    ]


def test_a_note_in_config_and_metrics_is_printed_once(tmp_path: Path) -> None:
    run = tmp_path / "eval"
    run.mkdir()
    note = "in-context: the corpus was cut at 100,000 tokens"
    config = {"kind": "qa", "benchmark": "nowhere", "method": "rag", "model": "m", "notes": [note]}
    metrics = {"queries": 2, "overall": {"f1": 0.5}, "by": {}, "notes": [note]}
    (run / "config.json").write_text(json.dumps(config))
    (run / "metrics.json").write_text(json.dumps(metrics))
    (run / "per_query.jsonl").write_text("")
    markdown = (write_report([run], tmp_path / "report") / "report.md").read_text()
    assert markdown.count(note) == 1
    assert "byte-identical" not in markdown and "FreeType" not in markdown


def test_bars_carry_counts_and_small_buckets_are_marked(tmp_path: Path) -> None:
    points = (("1", 0.5), ("2", 0.25))
    plain = bar_chart(tmp_path / "plain.png", Panel("t", "x", "y", (Series("run", points),)))
    counted = Series("run", points, (("1", 40), ("2", 3)))
    assert counted.count("1") == 40 and not counted.small("1") and counted.small("2")
    drawn = bar_chart(tmp_path / "counted.png", Panel("t", "x", "y", (counted,)))
    again = bar_chart(tmp_path / "again.png", Panel("t", "x", "y", (counted,)))
    assert drawn.read_bytes() != plain.read_bytes()  # counts and hatching are drawn
    assert drawn.read_bytes() == again.read_bytes()  # and drawn the same way every time


def test_spellings_of_one_answer_count_once() -> None:
    dates = {answer_key(a) for a in ["15 July 1968", "July 15, 1968", "1968-07-15"]}
    assert dates == {("date", "1968-07-15")}
    numbers = {answer_key(a) for a in ["7,060,000 Sundrian krona", "7060000", "7,060,000"]}
    assert numbers == {("numeric", "7060000.0")}
    assert answer_key("92 minute") == answer_key("92")
    assert answer_key("The Kingdom of Aldermark!") == ("name_or_text", "the kingdom of aldermark")
    assert len({answer_key(a) for a in ["Halvoria", "HV", "Republic of Halvoria"]}) == 3  # aliases apart


def test_samples_without_a_difficulty_are_not_plotted() -> None:
    assert _shares({"(none)": 3, "2": 1}) == (("2", 0.25),)
    assert _shares({"(none)": 4}) == ()

"""Reports a reader trusts at a glance: a run keeps one colour in every figure, the numbers over grouped
bars never overlap, and samples without an answer are counted in the answers histogram."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_eval_report import make_benchmark, qa_eval, retrieval_eval

from irbgen.benchmark import read_manifest, read_samples, write_benchmark
from irbgen.eval import plots
from irbgen.eval.plots import UNLABELLED_NOTE, Panel, Series, bar_figure
from irbgen.eval.report import write_report
from irbgen.schema import Document, Provenance, Sample

pytest.importorskip("matplotlib")


def drawn_colours(fig: Any) -> dict[str, set[str]]:
    """Series label -> the colours its lines and bars are drawn in, read from the figure's artists."""
    from matplotlib.colors import to_hex

    colours: dict[str, set[str]] = {}
    for ax in fig.axes:
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                colours.setdefault(line.get_label(), set()).add(to_hex(line.get_color()))
        for bars in ax.containers:
            drawn = {to_hex(patch.get_facecolor(), keep_alpha=False) for patch in bars.patches}
            colours.setdefault(bars.get_label(), set()).update(drawn)
    return colours


def test_a_run_keeps_one_colour_in_every_figure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three retrieval runs and two QA runs; the runs are given in another order than their names sort."""
    figures: dict[str, Any] = {}
    save = plots._save

    def keep(fig: Any, path: Path) -> Path:
        figures[Path(path).name] = fig
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", keep)
    bench = make_benchmark(tmp_path / "bench")
    runs = [
        retrieval_eval(tmp_path / "splade", bench, "splade", 0.8),
        qa_eval(tmp_path / "qa-b", bench),
        retrieval_eval(tmp_path / "bm25", bench, "bm25", 1.0),
        qa_eval(tmp_path / "qa-a", bench),
        retrieval_eval(tmp_path / "dense", bench, "dense", 0.5),
    ]
    write_report(runs, tmp_path / "report")
    assert sorted(figures) == [
        "answers-histogram.png", "qa-by-difficulty.png", "qa-by-hops.png", "retrieval-by-hops.png",
        "retrieval-by-topic.png",
    ]  # fmt: skip
    seen: dict[str, set[str]] = {}
    for fig in figures.values():
        for label, colours in drawn_colours(fig).items():
            seen.setdefault(label, set()).update(colours)
    runs_drawn = {label: colours for label, colours in seen.items() if label != "tiny"}
    assert sorted(runs_drawn) == ["bm25", "dense", "rag/gpt-x (qa-a)", "rag/gpt-x (qa-b)", "splade"]
    assert all(len(colours) == 1 for colours in seen.values()), seen
    assert len({colour for colours in seen.values() for colour in colours}) == len(seen)  # no two alike
    # by sorted name: the same run gets the same colour in any report it is in
    assert seen["bm25"] == {plots.PALETTE[0]} and seen["splade"] == {plots.PALETTE[4]}


def texts_overlap(fig: Any) -> bool:
    renderer = fig.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for ax in fig.axes for text in ax.texts if text.get_text()]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :])


def grouped(runs: int, values: int, count: int) -> Panel:
    points = tuple((str(x), 0.5) for x in range(values))
    series = tuple(
        Series(f"run {i}", points, tuple((x, count) for x, _ in points)) for i in range(runs)
    )
    return Panel("t", "x", "y", series)


def test_numbers_over_grouped_bars_stand_apart() -> None:
    """Four runs over ten values, each bar over 33 queries: every number shown, none overlapping (not a
    row of "3333" where side-by-side numbers run together)."""
    with bar_figure(grouped(4, 10, 33)) as fig:
        numbers = [text for text in fig.axes[0].texts if text.get_text()]
        assert [text.get_text() for text in numbers] == ["33"] * 40
        assert not texts_overlap(fig)
        assert UNLABELLED_NOTE not in [text.get_text() for text in fig.texts]


def test_numbers_too_many_to_fit_are_left_out_with_a_note() -> None:
    with bar_figure(grouped(6, 30, 3333)) as fig:
        assert not texts_overlap(fig)
        assert [text for text in fig.axes[0].texts if text.get_text()] == []
        assert any(UNLABELLED_NOTE in text.get_text() for text in fig.texts)


def test_samples_without_an_answer_are_counted(tmp_path: Path) -> None:
    """A false premise (no answers) and a sample whose only answer is blank are counted in (empty)."""
    bench = make_benchmark(tmp_path / "bench")
    samples = list(read_samples(bench))
    made = {"hops": 1, "source": "phantom", "provenance": Provenance(generator="test")}
    samples += [
        Sample(id="q5", question="Who?", answers=[" "], **made),
        Sample(id="q6", question="Who else?", answers=["Zoe", ""], **made),
    ]
    documents = [Document(_id="d1", title="Ada", text="Ada Lovelace wrote the first program."),
                 Document(_id="d2", title="Babbage", text="Babbage designed the Analytical Engine."),
                 Document(_id="d3", title="Zoe", text="Zoe is a friend of Ada.")]  # fmt: skip
    write_benchmark(tmp_path / "bench2", documents, samples, read_manifest(bench))
    run = retrieval_eval(tmp_path / "bm25", tmp_path / "bench2", "bm25", 1.0)
    markdown = (write_report([run], tmp_path / "report") / "report.md").read_text(encoding="utf-8")
    assert "| answers | tiny |\n|---|---|\n| (empty) | 2 |\n| 1 | 3 |\n| 2 | 1 |" in markdown

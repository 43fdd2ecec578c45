"""PNG charts for reports and benchmark comparisons: line panels and grouped bars, drawn reproducibly.

Every chart is drawn on a fresh `Figure` with the Agg canvas (no pyplot, no global backend switch), under
matplotlib's default style whatever the user's matplotlibrc says, at a fixed size and dpi, and saved
without the "Software" PNG tag, so the same data and the same matplotlib/FreeType give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irbgen.extras import missing_extra

DPI = 100
PANEL_SIZE = (5.5, 4.0)  # inches per panel
MAX_LEGEND_COLUMNS = 3
MAX_LABELLED_TICKS = 20  # numeric axes with more values get matplotlib's own ticks


@dataclass(frozen=True)
class Series:
    """One line or one set of bars: a label and (x value, y value) points; x values are text."""

    label: str
    points: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Panel:
    """One set of axes: a title, axis labels and the series drawn on it."""

    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]


def value_order(value: str) -> tuple[int, float, str]:
    """Sort key for attribute values: numbers in numeric order first, then text in text order."""
    try:
        number = float(value)
    except ValueError:
        return (1, 0.0, value)
    if math.isnan(number):
        return (1, 0.0, value)
    return (0, number, value)


def ordered(values: Iterable[str]) -> list[str]:
    """Distinct values in value_order."""
    return sorted(set(values), key=value_order)


def line_chart(path: Path, panels: Sequence[Panel], *, ylim: tuple[float, float] | None = None) -> Path:
    """Draw panels side by side, one line with markers per series; numeric x values keep their spacing."""
    with _figure(len(panels)) as (fig, axes):
        for ax, panel in zip(axes, panels, strict=True):
            xs = ordered(x for series in panel.series for x, _ in series.points)
            numeric = all(value_order(x)[0] == 0 for x in xs)
            position = {x: (float(x) if numeric else float(i)) for i, x in enumerate(xs)}
            for series in panel.series:
                points = sorted(series.points, key=lambda point: value_order(point[0]))
                ax.plot(
                    [position[x] for x, _ in points],
                    [y for _, y in points],
                    marker="o",
                    label=_label(series.label),
                )
            if not numeric or len(xs) <= MAX_LABELLED_TICKS:  # otherwise matplotlib picks numeric ticks
                ax.set_xticks([position[x] for x in xs], [_plain(x) for x in xs], rotation=_rotation(xs))
            _decorate(ax, panel, ylim)
        fig.tight_layout()
        return _save(fig, path)


def bar_chart(
    path: Path, panel: Panel, *, ylim: tuple[float, float] | None = None, integer_y: bool = False
) -> Path:
    """Draw grouped bars: one group per x value (in value_order), one bar per series within a group."""
    with _figure(1) as (fig, axes):
        ax = axes[0]
        xs = ordered(x for series in panel.series for x, _ in series.points)
        n = max(len(panel.series), 1)
        width = 0.8 / n
        for i, series in enumerate(panel.series):
            values = dict(series.points)
            offset = (i - (n - 1) / 2) * width
            present = [j for j, x in enumerate(xs) if x in values]  # a missing value draws no bar, not 0
            ax.bar(
                [j + offset for j in present],
                [values[xs[j]] for j in present],
                width=width,
                label=_label(series.label),
            )
        ax.set_xticks(list(range(len(xs))), [_plain(x) for x in xs], rotation=_rotation(xs))
        if integer_y:
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _decorate(ax, panel, ylim)
        fig.tight_layout()
        return _save(fig, path)


def _plain(text: str) -> str:
    """Text shown as written: a `$` would otherwise start matplotlib's math mode."""
    return text.replace("$", r"\$")


def _label(text: str) -> str:
    """A legend label shown as written: matplotlib hides labels that start with an underscore."""
    text = _plain(text)
    return " " + text if text.startswith("_") else text


def _rotation(xs: list[str]) -> int:
    return 45 if len(xs) > 8 or any(len(x) > 8 for x in xs) else 0


def _decorate(ax: Any, panel: Panel, ylim: tuple[float, float] | None) -> None:
    ax.set_title(_plain(panel.title))
    ax.set_xlabel(_plain(panel.xlabel))
    ax.set_ylabel(_plain(panel.ylabel))
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.grid(axis="y", alpha=0.3)
    if panel.series:
        ax.legend(fontsize="small", ncols=min(len(panel.series), MAX_LEGEND_COLUMNS), loc="best")


@contextmanager
def _figure(panels: int) -> Iterator[tuple[Any, list[Any]]]:
    """A fresh Agg figure with `panels` axes in a row, drawn under matplotlib's default style."""
    matplotlib = _matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = max(panels, 1)
    with matplotlib.style.context("default"):
        fig = Figure(figsize=(PANEL_SIZE[0] * panels, PANEL_SIZE[1]), dpi=DPI)
        FigureCanvasAgg(fig)
        yield fig, [fig.add_subplot(1, panels, i + 1) for i in range(panels)]


def _save(fig: Any, path: Path) -> Path:
    path = Path(path)
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.style
    except ImportError as e:
        raise missing_extra(e.name or "matplotlib", "plots") from None
    return matplotlib

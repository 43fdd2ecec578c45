"""PNG charts for reports and benchmark comparisons: line panels and grouped bars, drawn reproducibly.

Every chart is drawn on a fresh `Figure` with the Agg canvas (no pyplot, no global backend switch), under
matplotlib's default style whatever the user's matplotlibrc says, at a fixed size and dpi, and saved
without the "Software" PNG tag, so the same data and the same matplotlib/FreeType give the same bytes.
A series may name its colour (see `colour_map`), so one run is drawn alike in every chart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from irbgen.eval.breakdown import ordered, value_order
from irbgen.extras import missing_extra

DPI = 100
PANEL_SIZE = (5.5, 4.0)  # inches per panel
MAX_LEGEND_COLUMNS = 3
MAX_LABELLED_TICKS = 20  # numeric axes with more values get matplotlib's own ticks
SMALL_BUCKET = 5  # a point or bar over fewer queries than this is marked: its value is shaky
SMALL_NOTES = {
    "bar": f"hatched bars: fewer than {SMALL_BUCKET} queries",
    "line": f"open markers: fewer than {SMALL_BUCKET} queries",
}
UNLABELLED_NOTE = "too many bars to number; the tables give the counts"
# matplotlib's tab10 then tab20's lighter shades, greys left out: they are kept for series that are no run
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
    "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#dbdb8d", "#9edae5",
)  # fmt: skip


def colour_map(names: Iterable[str], start: int = 0) -> dict[str, str]:
    """A colour per name: the sorted distinct names take PALETTE in turn from START (wrapping round)."""
    return {name: PALETTE[(start + i) % len(PALETTE)] for i, name in enumerate(sorted(set(names)))}


@dataclass(frozen=True)
class Series:
    """One line or one set of bars: a label and (x value, y value) points; x values are text."""

    label: str
    points: tuple[tuple[str, float], ...]
    counts: tuple[tuple[str, int], ...] = ()  # queries behind each point, where known
    colour: str | None = None  # None: matplotlib's colour cycle

    @property
    def style(self) -> dict[str, str]:
        """The keyword arguments that give the series its colour, if it names one."""
        return {"color": self.colour} if self.colour else {}

    def count(self, x: str) -> int | None:
        """The number of queries behind the point at x, or None if not known."""
        return dict(self.counts).get(x)

    def small(self, x: str) -> bool:
        """Whether the point at x stands on fewer than SMALL_BUCKET queries."""
        n = self.count(x)
        return n is not None and n < SMALL_BUCKET


@dataclass(frozen=True)
class Panel:
    """One set of axes: a title, axis labels and the series drawn on it."""

    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    order: tuple[str, ...] = ()  # the x values in this order, if given; else in value_order

    def xs(self) -> list[str]:
        """The x values of every series, in the panel's order."""
        values = {x for series in self.series for x, _ in series.points}
        if self.order:
            return [x for x in self.order if x in values] + ordered(values - set(self.order))
        return ordered(values)


def line_chart(path: Path, panels: Sequence[Panel], *, ylim: tuple[float, float] | None = None) -> Path:
    """Draw panels side by side, one line with markers per series; numeric x values keep their spacing."""
    with line_figure(panels, ylim=ylim) as fig:
        return _save(fig, path)


@contextmanager
def line_figure(panels: Sequence[Panel], *, ylim: tuple[float, float] | None = None) -> Iterator[Any]:
    """The figure line_chart saves, drawn and laid out (to save, or to look at its artists)."""
    with _figure(len(panels)) as (fig, axes):
        for ax, panel in zip(axes, panels, strict=True):
            xs = panel.xs()
            numeric = all(value_order(x)[0] == 0 for x in xs)
            position = {x: (float(x) if numeric else float(i)) for i, x in enumerate(xs)}
            for series in panel.series:
                points = sorted(series.points, key=lambda point: position[point[0]])
                (line,) = ax.plot(
                    [position[x] for x, _ in points],
                    [y for _, y in points],
                    marker="o",
                    label=_label(series.label),
                    **series.style,
                )
                small = [(position[x], y) for x, y in points if series.small(x)]
                if small:  # open markers over the filled ones
                    ax.plot(*zip(*small, strict=True), linestyle="none", marker="o", markerfacecolor="white",
                            markeredgecolor=line.get_color())
            if not numeric or len(xs) <= MAX_LABELLED_TICKS:  # otherwise matplotlib picks numeric ticks
                ax.set_xticks([position[x] for x in xs], [_plain(x) for x in xs], rotation=_rotation(xs))
            _decorate(ax, panel, ylim)
        _legend_below(fig, axes[0], panels, [SMALL_NOTES["line"]])
        yield fig


def bar_chart(
    path: Path, panel: Panel, *, ylim: tuple[float, float] | None = None, integer_y: bool = False
) -> Path:
    """Draw grouped bars: one group per x value (in the panel's order), one bar per series within a group.

    Each bar is numbered with its count of queries, where known: upright over a lone series, turned on
    its side over grouped bars, and left out of the whole chart (with a note) if numbers would overlap.
    """
    with bar_figure(panel, ylim=ylim, integer_y=integer_y) as fig:
        return _save(fig, path)


@contextmanager
def bar_figure(
    panel: Panel, *, ylim: tuple[float, float] | None = None, integer_y: bool = False
) -> Iterator[Any]:
    """The figure bar_chart saves, drawn and laid out (to save, or to look at its artists)."""
    with _figure(1) as (fig, axes):
        ax = axes[0]
        xs = panel.xs()
        n = max(len(panel.series), 1)
        width = 0.8 / n
        numbers: list[Any] = []  # the count texts over the bars
        for i, series in enumerate(panel.series):
            values = dict(series.points)
            offset = (i - (n - 1) / 2) * width
            present = [j for j, x in enumerate(xs) if x in values]  # a missing value draws no bar, not 0
            bars = ax.bar(
                [j + offset for j in present],
                [values[xs[j]] for j in present],
                width=width,
                label=_label(series.label),
                **series.style,
            )
            for bar, j in zip(bars, present, strict=True):
                if series.small(xs[j]):
                    bar.set_hatch("///")
                    bar.set_alpha(0.55)
            if series.counts:  # the number of queries above each bar
                labels = [_count_text(series.count(xs[j])) for j in present]
                turn = 90 if n > 1 else 0  # grouped bars are narrow: their numbers stand on end
                numbers += ax.bar_label(bars, labels=labels, fontsize=6, padding=1, rotation=turn)
        ax.set_xticks(list(range(len(xs))), [_plain(x) for x in xs], rotation=_rotation(xs))
        if integer_y:
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        _decorate(ax, panel, ylim)
        notes = [SMALL_NOTES["bar"]]
        if numbers and _overlapping(fig, numbers):
            for text in numbers:
                text.remove()
            notes.append(UNLABELLED_NOTE)
        _legend_below(fig, ax, [panel], notes)
        yield fig


def _count_text(count: int | None) -> str:
    return "" if count is None else str(count)


def _overlapping(fig: Any, texts: list[Any]) -> bool:
    """Whether any two of these texts overlap once the figure is laid out."""
    fig.tight_layout()
    renderer = fig.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in texts if text.get_text()]
    boxes.sort(key=lambda box: box.x0)
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if b.x0 <= a.x1)


def _legend_below(fig: Any, ax: Any, panels: Sequence[Panel], notes: list[str]) -> None:
    """One legend for the figure, under the axes where it covers nothing, and the notes that apply: the
    small-bucket key (the first note) if a point or bar stands on few queries, and every other note."""
    fig.tight_layout()
    handles, labels = ax.get_legend_handles_labels()
    small = any(s.small(x) for p in panels for s in p.series for x, _ in s.points)
    shown = notes[:1] if small else []
    shown += notes[1:]
    if handles:
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize="small",
                   ncols=min(len(handles), MAX_LEGEND_COLUMNS), frameon=False)
    if shown:
        rows = -(-len(handles) // MAX_LEGEND_COLUMNS) if handles else 0
        fig.text(0.5, -0.02 - 0.05 * rows, "; ".join(shown), ha="center", va="top", fontsize="small")


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
    # "tight" grows the canvas to hold the legend under the axes; it is computed, so still reproducible.
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None}, bbox_inches="tight")
    return path


def _matplotlib() -> Any:
    try:
        import matplotlib
        import matplotlib.style
    except ImportError as e:
        raise missing_extra(e.name or "matplotlib", "plots") from None
    return matplotlib

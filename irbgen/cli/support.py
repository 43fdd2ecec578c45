"""What every irbgen command shares: one-line errors with exit codes, the benchmark argument, and a
progress display."""

from __future__ import annotations

import functools
import logging
import math
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from irbgen.errors import BadInputError, IrbgenError, redact
from irbgen.progress import Progress, silent


class FiniteFloat(click.ParamType):
    """A number option that refuses inf and nan, naming the option (exit 2)."""

    name = "float"

    def convert(self, value, param, ctx) -> float:  # noqa: ANN001 - click's signature
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


REAL = FiniteFloat()  # a finite real number: the type of every float option


def benchmark_input(required: bool = True) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The benchmark a command reads, given as BENCHMARK or as --benchmark (one of them, not both); the
    command gets it as `benchmark` (None when not required and not given)."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def run(*args, benchmark_argument: Path | None, benchmark_option: Path | None, **kwargs) -> None:  # noqa: ANN002, ANN003
            command(*args, benchmark=_one_benchmark(benchmark_argument, benchmark_option, required), **kwargs)

        path = click.Path(path_type=Path)
        help_text = "Benchmark directory (or give it as BENCHMARK)."
        run = click.option("--benchmark", "benchmark_option", type=path, metavar="DIR", help=help_text)(run)
        return click.argument("benchmark_argument", metavar="BENCHMARK", required=False, type=path)(run)

    return decorate


def _one_benchmark(argument: Path | None, option: Path | None, required: bool) -> Path | None:
    """The benchmark given once; one line and exit 2 if it is given twice or, when required, not at all."""
    with reporting_errors():
        if argument is not None and option is not None:
            raise BadInputError(f"the benchmark given twice ({argument} and --benchmark {option}): give one")
        if required and argument is None and option is None:
            raise BadInputError("no benchmark given: give it as BENCHMARK or as --benchmark DIR")
    return argument if argument is not None else option


def _terminate(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    raise SystemExit(128 + signum)


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn irbgen's own errors into one line and an exit code; SIGTERM unwinds like Ctrl-C."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    except IrbgenError as error:
        click.echo(redact(f"irbgen: error: {error}"), err=True)
        sys.exit(error.exit_code)
    except ModuleNotFoundError as error:
        if (error.name or "irbgen").split(".")[0] == "irbgen":
            raise  # a bug in irbgen, not a missing package
        from irbgen.extras import missing_extra

        click.echo(f"irbgen: error: {missing_extra(error.name)}", err=True)
        sys.exit(1)
    except OSError as error:  # the disk or the OS refused (full, read-only, gone): one line, exit 1
        where = f"{error.filename}: " if error.filename else ""
        reason = error.strerror or type(error).__name__
        click.echo(redact(f"irbgen: error: {where}{reason}"), err=True)
        sys.exit(2 if isinstance(error, PermissionError | NotADirectoryError | FileExistsError) else 1)
    except KeyboardInterrupt:
        click.echo("irbgen: interrupted; nothing half-written was kept", err=True)
        sys.exit(130)
    finally:
        signal.signal(signal.SIGTERM, previous)


class RedactingFormatter(logging.Formatter):
    """Log lines with credentials in URLs replaced (see irbgen.errors.redact)."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class OnceHandler(logging.StreamHandler):
    """Writes each distinct log line once; `summarise` then gives each repeated one again, with a count."""

    def __init__(self) -> None:
        super().__init__()
        self.repeats: dict[str, int] = {}  # line -> times seen after the first

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # noqa: BLE001 - logging's own contract: report, never raise
            self.handleError(record)
            return
        if line in self.repeats:
            self.repeats[line] += 1
            return
        self.repeats[line] = 0
        super().emit(record)

    def summarise(self) -> None:
        """One line per message that came again: "<line> (N more times)"."""
        repeated = {line: count for line, count in self.repeats.items() if count}
        self.repeats.clear()
        for line, count in repeated.items():
            try:
                self.stream.write(f"{line} ({count:,} more {'time' if count == 1 else 'times'})\n")
                self.flush()
            except (OSError, ValueError):
                return


@contextmanager
def progress_display(enabled: bool) -> Iterator[Progress]:
    """A progress callback drawn with rich on a terminal (stderr), silent elsewhere.

    Each stage is a line with its bar, done/total, rate per second and time left.
    """
    if not enabled or not sys.stderr.isatty():
        yield silent
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
    from rich.progress import Progress as Bars

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeRemainingColumn(),
    )
    with Bars(*columns, console=Console(stderr=True), transient=True) as bars:
        tasks: dict[str, int] = {}

        def update(stage: str, done: int, total: int | None) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total, rate="")
            task = tasks[stage]
            bars.update(task, completed=done, total=total)
            speed = bars.tasks[task].speed
            bars.update(task, rate=f"{speed:,.1f}/s" if speed else "")

        yield update


def counting(items: Iterable, stage: str, total: int, progress: Progress, every: int = 10_000) -> Iterator:
    """Pass items through, reporting progress every `every` items."""
    for number, item in enumerate(items, start=1):
        if number % every == 0:
            progress(stage, number, total)
        yield item
    progress(stage, total, total)

"""`irbgen review`: judge a benchmark's samples in the browser, or score the judgments into the card."""

from __future__ import annotations

import errno
import getpass
import ipaddress
import re
import socket
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import click

from irbgen.cli.scores import score_reviews_command
from irbgen.cli.support import benchmark_input, reporting_errors
from irbgen.errors import BadInputError

if TYPE_CHECKING:
    from irbgen.review.draws import Order

DEFAULT_PORT = 8765
LOOPBACK = "127.0.0.1"
HOST_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$|^\[[0-9A-Fa-f:.]+\]$")


@click.command()
@benchmark_input()
@click.option(
    "--sample",
    "size",
    type=click.IntRange(min=1),
    help="Review N samples: the N that irbgen audit --sample N --seed S draws, or with --order file the "
    "first N.  [default: all]",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random order.")
@click.option(
    "--order",
    type=click.Choice(["random", "file"]),
    default="random",
    show_default=True,
    help="Show the samples in a random order (with --seed), or in file order (then the judged samples are "
    "not a random sample and --score gives no interval).",
)
@click.option(
    "--reviewer", help="Your name; judgments go to BENCH/reviews/NAME.jsonl.  [default: login name]"
)
@click.option("--host", default=LOOPBACK, show_default=True, help="Address to listen on.")
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="A host name (or address) browsers use to reach the page; repeatable. Needed with a --host that "
    "is not loopback: requests naming any other host get 403.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="0 picks a free port.",
)
@click.option(
    "--score", is_flag=True, help="Score the judgments in BENCH/reviews and write them into the card."
)
def review(
    benchmark: Path,
    size: int | None,
    seed: int,
    order: Order,
    reviewer: str | None,
    host: str,
    allow_hosts: tuple[str, ...],
    port: int,
    score: bool,
) -> None:
    """Judge samples in a local web page (one per screen), or --score the judgments into the card."""
    if score:
        if size is not None or reviewer is not None:
            raise click.UsageError("--score takes no --sample or --reviewer")
        score_reviews_command(benchmark)
        return
    serve(benchmark, size, seed, order, reviewer, host, list(allow_hosts), port)


def serve(
    benchmark: Path,
    size: int | None,
    seed: int,
    order: Order,
    reviewer: str | None,
    host: str,
    allow_hosts: list[str],
    port: int,
) -> None:
    """Index the benchmark, lock and open the reviewer's file and serve the app until Ctrl-C."""
    from irbgen.audit.sheet import check_benchmark
    from irbgen.benchmark import read_manifest
    from irbgen.review.index import BenchmarkIndex
    from irbgen.review.store import ReviewWriter

    with ExitStack() as held:
        with reporting_errors():
            reviewer = _login() if reviewer is None else reviewer
            allowed = allowed_hosts(host, allow_hosts)
            uvicorn = _uvicorn()  # before importing the app, so a missing extra is one line naming it
            from irbgen.review.app import Session, create_app

            check_benchmark(benchmark)
            manifest = read_manifest(benchmark)
            held.enter_context(ReviewWriter(benchmark, reviewer).lock())
            index = BenchmarkIndex.build(benchmark)
            session = Session.open(index, manifest, reviewer, size, seed, order)
            listener = bind(host, port)
        app = create_app(session, allowed)
        shown = host if _is_loopback(host) else allow_hosts[0]
        address = f"http://{_url_host(shown)}:{listener.getsockname()[1]}/"
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
        try:
            click.echo(
                f"reviewing {len(session.order):,} samples of {manifest.name} as {reviewer} "
                f"({len(session.complete):,} judged; judgments go to {session.writer.file})"
            )
            if not _is_loopback(host):
                click.echo(
                    f"listening on {host}: anyone who can reach it as {', '.join(allow_hosts)} can read "
                    "this benchmark; requests naming any other host get 403 and no page",
                    err=True,
                )
            click.echo(f"open {address} in a browser; Ctrl-C to stop", nl=True)
            click.get_text_stream("stdout").flush()
            server.run(sockets=[listener])
        except KeyboardInterrupt:
            pass  # uvicorn has shut down cleanly and re-raised the Ctrl-C; every saved judgment is on disk
    click.echo(f"stopped; {len(session.complete):,} of {len(session.order):,} samples judged by {reviewer}")


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on HOST:PORT; BadInputError for a port in use or an address not on this machine."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise BadInputError(f"--host {host}: {e.strerror}") from None
    listener = socket.socket(family, kind, proto)
    try:
        listener.bind(address)
        listener.listen(128)
    except OSError as e:
        listener.close()
        if e.errno == errno.EADDRINUSE:
            raise BadInputError(
                f"--port {port}: {host}:{port} is in use; pick another port or --port 0"
            ) from None
        raise BadInputError(f"--host {host} --port {port}: cannot listen there ({e.strerror})") from None
    return listener


def _uvicorn():
    from irbgen.extras import require

    require("review", "irbgen review")  # one line naming the extra, as every command says it
    import uvicorn

    return uvicorn


def _login() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    if not name.strip():
        raise BadInputError("cannot tell who you are (no login name); pass --reviewer NAME")
    return name


def allowed_hosts(host: str, names: list[str]) -> list[str]:
    """The host names the app answers besides loopback: NAMES, and HOST itself when it is loopback.

    A HOST that is not loopback needs NAMES: answering any Host would let a page of any site whose name
    resolves here read the benchmark and the session token."""
    for name in names:
        if not HOST_NAME.match(name):
            raise BadInputError(f"--allow-host {name!r}: give one host name or address, without port or '*'")
    if _is_loopback(host):
        return [_url_host(host), *names]
    if not names:
        raise BadInputError(
            f"--host {host}: not a loopback address; pass --allow-host NAME for each name browsers will use "
            "to reach the page (requests naming any other host are refused)"
        )
    return names


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host

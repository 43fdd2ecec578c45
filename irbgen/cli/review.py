"""`irbgen review`: judge a benchmark's samples in the browser, or score the judgments into the card."""

from __future__ import annotations

import errno
import getpass
import socket
from pathlib import Path

import click

from irbgen.cli.scores import score_reviews_command
from irbgen.cli.support import reporting_errors
from irbgen.errors import BadInputError

DEFAULT_PORT = 8765
LOOPBACK = "127.0.0.1"


@click.command()
@click.argument("benchmark", type=click.Path(path_type=Path))
@click.option(
    "--sample",
    "size",
    type=click.IntRange(min=1),
    help="Review N samples drawn at random, as irbgen audit draws them.  [default: all, in file order]",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the --sample draw.")
@click.option(
    "--reviewer", help="Your name; judgments go to BENCH/reviews/NAME.jsonl.  [default: login name]"
)
@click.option("--host", default=LOOPBACK, show_default=True, help="Address to listen on.")
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
    benchmark: Path, size: int | None, seed: int, reviewer: str | None, host: str, port: int, score: bool
) -> None:
    """Judge samples in a local web page (one per screen), or --score the judgments into the card."""
    if score:
        if size is not None or reviewer is not None:
            raise click.UsageError("--score takes no --sample or --reviewer")
        score_reviews_command(benchmark)
        return
    serve(benchmark, size, seed, reviewer or _login(), host, port)


def serve(benchmark: Path, size: int | None, seed: int, reviewer: str, host: str, port: int) -> None:
    """Index the benchmark, open the reviewer's file and serve the app until Ctrl-C."""
    from irbgen.audit.sheet import check_benchmark
    from irbgen.benchmark import read_manifest
    from irbgen.review.index import BenchmarkIndex

    with reporting_errors():
        uvicorn = _uvicorn()  # before importing the app, so a missing extra is one line naming it
        from irbgen.review.app import Session, create_app

        check_benchmark(benchmark)
        manifest = read_manifest(benchmark)
        session = Session.open(BenchmarkIndex.build(benchmark), manifest, reviewer, size, seed)
        listener = bind(host, port)
    app = create_app(session, _allowed_hosts(host))
    address = f"http://{_url_host(host)}:{listener.getsockname()[1]}/"
    click.echo(
        f"reviewing {len(session.order):,} samples of {manifest.name} as {reviewer} "
        f"({len(session.complete):,} judged; judgments go to {session.writer.file})"
    )
    if host != LOOPBACK:
        click.echo(f"listening on {host}: anyone who can reach it can read this benchmark", err=True)
    click.echo(f"open {address} in a browser; Ctrl-C to stop", nl=True)
    click.get_text_stream("stdout").flush()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    try:
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
        return getpass.getuser()
    except (KeyError, OSError):
        raise click.UsageError("cannot tell who you are; pass --reviewer NAME") from None


def _allowed_hosts(host: str) -> list[str]:
    if host in ("0.0.0.0", "::"):
        return ["*"]  # any name can reach it; the session token still guards every write
    return [host]


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host

"""The review web app: one Starlette application over one benchmark, one reviewer and one session token.

Routes: `/` goes to the first unjudged sample, `/sample/{id}` shows one sample, and `POST /judge`
appends a judgment. Sample ids are only ever looked up in the index, never joined to a path, so no
request can make the app read outside the benchmark directory. A request whose Host header is not a
loopback name or one of the allowed names gets 403 and no page (so no session token), whatever address
the server listens on: a page of another site that resolves its name to this machine reads nothing.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field

from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from irbgen.audit.records import Judgment
from irbgen.errors import IrbgenError
from irbgen.review.draws import Draw, Order
from irbgen.review.index import BenchmarkIndex, ChangedError
from irbgen.review.page import Screen, judgment_status, render, render_message, sample_path
from irbgen.review.store import Review, ReviewWriter
from irbgen.review.view import build_view
from irbgen.schema import Manifest

TOKEN_HEADER = "X-Review-Token"
MAX_BODY = 64 * 1024  # a judgment with a long note is a few KB
LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]", "::1"]
FOREIGN_HOST = 403


class JudgmentRequest(Judgment):
    """What the page sends: a judgment and the sample it is for."""

    sample: str


@dataclass
class Session:
    """One reviewer's run of the app: the samples in review order, their judgments, and the token."""

    index: BenchmarkIndex
    manifest: Manifest
    writer: ReviewWriter
    order: list[str]
    draw: Draw | None = None  # how ORDER was drawn, recorded with every judgment
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    reviews: dict[str, Review] = field(default_factory=dict)
    position: dict[str, int] = field(init=False)
    complete: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.position = {sample_id: n for n, sample_id in enumerate(self.order)}
        self.reviews = {sid: review for sid, review in self.reviews.items() if self._current(sid, review)}
        self.complete = {
            sid for sid, review in self.reviews.items() if sid in self.position and not review.missing()
        }

    def _current(self, sample_id: str, review: Review) -> bool:
        """A judgment of the sample as it is now (a changed sample is shown unjudged, to judge again)."""
        return sample_id in self.index.samples and review.is_of(self.digest(sample_id))

    def digest(self, sample_id: str) -> str:
        """The sha256 of the sample's line as it is now."""
        return self.index.digest(sample_id)

    @classmethod
    def open(
        cls,
        index: BenchmarkIndex,
        manifest: Manifest,
        reviewer: str,
        size: int | None,
        seed: int,
        order: Order = "random",
    ) -> Session:
        """Start a session: SIZE samples (default all) in a random order drawn with SEED as `irbgen audit`
        draws, or with ORDER "file", the first SIZE in file order. The caller holds the writer's lock."""
        ids = index.samples.ids
        draw = Draw(order=order, seed=seed if order == "random" else None, size=size, population=len(ids))
        writer = ReviewWriter(index.benchmark, reviewer)
        return cls(index, manifest, writer, draw.ids(ids), draw, reviews=writer.open())

    def judgment(self, sample_id: str) -> Judgment:
        """This reviewer's latest judgment of the sample, or an empty one."""
        review = self.reviews.get(sample_id)
        return Judgment() if review is None else review.judgment()

    def record(self, sample_id: str, judgment: Judgment) -> None:
        """Append the judgment to the reviewer's file and remember it."""
        self.reviews[sample_id] = self.writer.append(sample_id, judgment, self.digest(sample_id), self.draw)
        if judgment.missing():
            self.complete.discard(sample_id)
        else:
            self.complete.add(sample_id)

    def first_unjudged(self) -> str | None:
        """The first sample in review order this reviewer has not fully judged."""
        return next((sid for sid in self.order if sid not in self.complete), None)

    def neighbour(self, sample_id: str, step: int, unjudged: bool) -> str | None:
        """The next (step 1) or previous (step -1) sample; with UNJUDGED, the nearest unjudged (wrapping)."""
        at = self.position[sample_id]
        if not unjudged:
            there = at + step
            return self.order[there] if 0 <= there < len(self.order) else None
        count = len(self.order)
        for distance in range(1, count):
            candidate = self.order[(at + step * distance) % count]
            if candidate not in self.complete:
                return candidate
        return None


class HostCheck:
    """Answer 403 with no page to a request whose Host header names none of ALLOWED (port ignored)."""

    def __init__(self, app: ASGIApp, allowed: list[str]) -> None:
        self.app = app
        self.allowed = {name.lower() for name in allowed}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            if host_name(Headers(scope=scope).get("host", "")) not in self.allowed:
                refusal = PlainTextResponse("irbgen review: this host name is not allowed\n", FOREIGN_HOST)
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def host_name(header: str) -> str:
    """The name in a Host header, lower case, without its port ("[::1]:80" -> "[::1]")."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[: end + 1] if end > 0 else ""
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def create_app(session: Session, allowed_hosts: list[str] | None = None) -> Starlette:
    """The ASGI app for SESSION; requests whose Host is not loopback (or ALLOWED_HOSTS) get 403."""

    async def home(request: Request) -> Response:
        target = session.first_unjudged() or (session.order[0] if session.order else None)
        if target is None:
            return _html(404, "Nothing to review", "This benchmark has no samples.")
        return RedirectResponse(sample_path(target), status_code=303)

    async def sample_page(request: Request) -> Response:
        sample_id = request.path_params["sample_id"]
        if sample_id not in session.position:
            return _html(404, "No such sample", "This review holds no sample with that id.")
        nonce = secrets.token_urlsafe(16)
        screen = Screen(
            view=build_view(session.index, sample_id),
            benchmark=session.manifest.name,
            reviewer=session.writer.reviewer,
            position=session.position[sample_id],
            total=len(session.order),
            judged=len(session.complete),
            judgment=session.judgment(sample_id),
            prev=session.neighbour(sample_id, -1, False),
            next=session.neighbour(sample_id, 1, False),
            prev_unjudged=session.neighbour(sample_id, -1, True),
            next_unjudged=session.neighbour(sample_id, 1, True),
            token=session.token,
            nonce=nonce,
        )
        return HTMLResponse(render(screen), headers=_headers(nonce))

    async def judge(request: Request) -> Response:
        sent = request.headers.get(TOKEN_HEADER, "")
        if not hmac.compare_digest(sent.encode(), session.token.encode()):
            return JSONResponse({"error": "missing or wrong session token"}, status_code=403)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": "request too large"}, status_code=413)
        try:
            sent_judgment = JudgmentRequest.model_validate_json(body)
        except ValidationError as e:
            return JSONResponse({"error": _first_error(e)}, status_code=422)
        if sent_judgment.sample not in session.position:
            return JSONResponse({"error": "no such sample in this review"}, status_code=404)
        judgment = Judgment(**sent_judgment.model_dump(exclude={"sample"}))
        session.record(sent_judgment.sample, judgment)
        return JSONResponse(
            {
                "judged": len(session.complete),
                "total": len(session.order),
                "status": "saved · " + judgment_status(judgment),
            }
        )

    routes = [
        Route("/", home),
        Route("/sample/{sample_id:path}", sample_page),
        Route("/judge", judge, methods=["POST"]),
    ]
    hosts = LOOPBACK_HOSTS + list(allowed_hosts or [])
    return Starlette(
        routes=routes,
        middleware=[Middleware(HostCheck, allowed=hosts)],
        exception_handlers={IrbgenError: _failure},
    )


async def _failure(request: Request, error: Exception) -> Response:
    """irbgen's own errors (a changed or broken file) as one line on a page, not a traceback."""
    status = 409 if isinstance(error, ChangedError) else 500
    return _html(status, "irbgen review cannot show this", str(error))


def _headers(nonce: str) -> dict[str, str]:
    policy = (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; connect-src 'self'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    return {
        "Content-Security-Policy": policy,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def _html(status: int, title: str, message: str) -> HTMLResponse:
    nonce = secrets.token_urlsafe(16)
    return HTMLResponse(render_message(title, message, nonce), status_code=status, headers=_headers(nonce))


def _first_error(error: ValidationError) -> str:
    item = error.errors()[0]
    return f"{'.'.join(str(part) for part in item['loc'])}: {item['msg']}"

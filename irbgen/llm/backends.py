"""Which backend a model-backed stage runs: "llm" (a model through the client) or "rules" (offline)."""

from __future__ import annotations

from irbgen.errors import BadInputError

BACKENDS = ("llm", "rules")
MAX_RAW_CHARS = 2000  # of a bad reply kept in a reject


def check_backend(backend: str, known: tuple[str, ...] = BACKENDS) -> str:
    """The backend name, or BadInputError listing the known ones."""
    if backend not in known:
        raise BadInputError(f"unknown backend {backend!r} (choose from: {', '.join(sorted(known))})")
    return backend


def model_name(client: object) -> str | None:
    """The model a client calls, for provenance (None for the rules backend)."""
    return getattr(getattr(client, "settings", None), "model", None)

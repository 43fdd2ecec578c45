"""Which backend a model-backed stage runs: "llm" (a model through the client) or "rules" (offline).

The command line's `--llm` names where a model comes from ("openai": any OpenAI-compatible endpoint) or
"rules" for none; `stage_backend` is the one place that turns that choice into a stage backend.
"""

from __future__ import annotations

from irbgen.errors import BadInputError

BACKENDS = ("llm", "rules")
LLM_CHOICES = ("rules", "openai")  # the values of --llm (LLMOptions.llm)
MAX_RAW_CHARS = 2000  # of a bad reply kept in a reject


def check_backend(backend: str, known: tuple[str, ...] = BACKENDS) -> str:
    """The backend name, or BadInputError listing the known ones."""
    if backend not in known:
        raise BadInputError(f"unknown backend {backend!r} (choose from: {', '.join(sorted(known))})")
    return backend


def stage_backend(llm: str) -> str:
    """The stage backend for a --llm choice: "rules" for "rules", "llm" for a model API ("openai")."""
    if llm not in LLM_CHOICES:
        raise BadInputError(f"unknown --llm {llm!r} (choose from: {', '.join(LLM_CHOICES)})")
    return "rules" if llm == "rules" else "llm"


def model_name(client: object) -> str | None:
    """The model a client calls, for provenance (None for the rules backend)."""
    return getattr(getattr(client, "settings", None), "model", None)

"""Test helpers that ship with irbgen: loopback servers that stand in for real services."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from irbgen.testing.openai_server import Fault, OpenAIStubServer

__all__ = ["Fault", "OpenAIStubServer"]


def __getattr__(name: str) -> Any:
    # Imported on first use, so `python -m irbgen.testing.openai_server` runs the module only once.
    if name in __all__:
        from irbgen.testing import openai_server

        return getattr(openai_server, name)
    raise AttributeError(f"module 'irbgen.testing' has no attribute {name!r}")

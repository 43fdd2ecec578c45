"""One base for the model-backed stages: backend dispatch, prompts, reply checks, rejects and provenance.

A stage has two backends, chosen by name (`irbgen.llm.backends`): "rules" runs its offline rule,
"llm" asks a model through the injected client (`StageContext.llm`). A subclass declares its prompts
with their reply models (`prompts`) and implements:

- `key(record)`: the input record's stable key;
- `rules(record)`: the offline rule, one output or a Reject;
- `values(record)` and `accept(record, reply, raw)` for a stage of one call: the prompt's placeholders,
  and the check that turns a parsed reply into an output (or a Reject). A stage of several calls
  overrides `llm` instead and composes `ask`s;
- `gate(record, output)` if it has quality gates: they run on the output of either backend.

A failed call or a reply that does not parse into its reply model is a Reject "llm_error" that keeps the
raw reply (cut to MAX_RAW_CHARS). A rerun asks again; the response cache makes finished calls free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from irbgen.errors import BadInputError
from irbgen.llm.backends import MAX_RAW_CHARS, check_backend, model_name
from irbgen.llm.prompts import Prompt, load_prompt
from irbgen.pipeline.stage import StageContext
from irbgen.records import Reject


@dataclass(frozen=True)
class Answer:
    """A reply that parsed into its reply model, with the raw text it came from."""

    reply: Any
    raw: str


class LLMStage:
    """The shared part of a stage with a "rules" and an "llm" backend (see the module docstring)."""

    name: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    output_model: ClassVar[type[BaseModel]]
    prompts: ClassVar[dict[str, type[BaseModel]]]  # prompt name -> its reply model; the first is the main one
    what: ClassVar[str]  # the stage in the missing-client error: "the llm <what> backend"

    def __init__(
        self, backend: str = "rules", *, temperature: float = 0.0, prompt_dir: Path | str | None = None
    ) -> None:
        self.backend = check_backend(backend)
        self.temperature = temperature
        self.prompt_dir = prompt_dir
        self._prompts: dict[str, Prompt] = {}  # loaded on first use: constructing does no I/O

    def __repr__(self) -> str:
        return f"{type(self).__name__}(backend={self.backend!r})"

    # --- what a subclass implements -----------------------------------------------------------------

    def key(self, record: Any) -> str:
        """The input record's stable key."""
        raise NotImplementedError

    def rules(self, record: Any) -> Any:
        """The offline backend: one output or a Reject."""
        raise NotImplementedError

    def values(self, record: Any) -> dict[str, str]:
        """The main prompt's placeholders for one record (a stage of one call)."""
        raise NotImplementedError

    def accept(self, record: Any, reply: Any, raw: str) -> Any:
        """The output made from a parsed reply, or a Reject (a stage of one call)."""
        raise NotImplementedError

    def gate(self, record: Any, output: Any) -> Reject | None:
        """A Reject naming the first quality gate the output fails, or None (no gates by default)."""
        return None

    # --- dispatch ------------------------------------------------------------------------------------

    @property
    def io_bound(self) -> bool:
        """The llm backend waits on a model; the rules backend computes, so the runner spreads it."""
        return self.backend != "rules"

    def process(self, record: Any, context: StageContext) -> list[Any]:
        """The rules backend (the llm backend is asynchronous: use `aprocess`)."""
        if self.backend != "rules":
            raise TypeError(f"backend {self.backend!r} is asynchronous: call aprocess")
        return [self._gated(record, self.rules(record))]

    async def aprocess(self, record: Any, context: StageContext) -> list[Any]:
        """Either backend; the llm one calls `context.llm`."""
        if self.backend == "rules":
            return [self._gated(record, self.rules(record))]
        return [self._gated(record, await self.llm(record, self.client(context)))]

    def client(self, context: StageContext) -> Any:
        """The context's LLM client; without one the llm backend cannot run (BadInputError)."""
        if context.llm is None:
            raise BadInputError(f"the llm {self.what} backend needs an LLM client (context.llm is None)")
        return context.llm

    async def llm(self, record: Any, client: Any) -> Any:
        """The llm backend of a stage of one call: ask the main prompt, accept the reply, add provenance."""
        answer = await self.ask(client, record, self.main_prompt, self.values(record))
        if isinstance(answer, Reject):
            return answer
        output = self.accept(record, answer.reply, answer.raw)
        if isinstance(output, Reject):
            return output
        return output.model_copy(update=self.provenance(client))

    def _gated(self, record: Any, output: Any) -> Any:
        if isinstance(output, Reject):
            return output
        return self.gate(record, output) or output

    # --- prompts, calls, rejects, provenance -----------------------------------------------------------

    @property
    def main_prompt(self) -> str:
        """The name of the stage's first prompt."""
        return next(iter(self.prompts))

    def prompt(self, name: str | None = None) -> Prompt:
        """A prompt of the stage (default: the main one) with its output model, loaded once."""
        name = name or self.main_prompt
        if name not in self._prompts:
            models = {model.__name__: model for model in self.prompts.values()}
            self._prompts[name] = load_prompt(name, self.prompt_dir, models=models)
        return self._prompts[name]

    def messages(self, record: Any) -> list[dict[str, str]]:
        """The chat messages of the main prompt for one record."""
        return self.prompt().render(**self.values(record))

    async def ask(
        self, client: Any, record: Any, name: str, values: Mapping[str, str], where: str = ""
    ) -> Answer | Reject:
        """One call of prompt `name`: the parsed reply, or a Reject "llm_error" ("<where>: <error>")."""
        prompt, model = self.prompt(name), self.prompts[name]
        completion = await client.complete(
            prompt.render(**values),
            stage=self.name,
            response_model=prompt.output_model or model,
            temperature=self.temperature,
        )
        raw = completion.text or ""
        if not completion.ok:
            error = completion.error or "no reply"
        elif not isinstance(completion.parsed, model):
            error = f"reply is not a {model.__name__}"
        else:
            return Answer(completion.parsed, raw)
        return self.reject(record, "llm_error", f"{where}: {error}" if where else error, raw=raw)

    def reject(self, record: Any, reason: str, detail: str, raw: str | None = None, **extra: Any) -> Reject:
        """A Reject of this stage for the record; `raw` (a model's reply) is kept, cut to MAX_RAW_CHARS."""
        if raw:
            extra["raw"] = raw[:MAX_RAW_CHARS]
        return Reject(stage=self.name, reason=reason, key=self.key(record), detail=detail, extra=extra)

    def provenance(self, client: Any) -> dict[str, Any]:
        """The output's provenance: `prompt` (or `prompts`, for a stage of several) and `model`."""
        refs = [self.prompt(name).ref for name in self.prompts]
        prompts: dict[str, Any] = {"prompts": refs} if len(refs) > 1 else {"prompt": refs[0]}
        return {**prompts, "model": model_name(client)}

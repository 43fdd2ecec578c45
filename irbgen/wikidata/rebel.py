"""REBEL-style triple extraction: article passages -> a local seq2seq model -> (head, relation, tail) spans.

A REBEL checkpoint writes the triples of a passage as one linearised string: `<triplet>` opens a head
span, each `<subj>` opens one of its tail spans and the following `<obj>` opens that tail's relation
label, so one head can carry several tail/relation pairs. `parse_triplets` reads that string back and
skips malformed pieces; `RebelExtractor` runs a checkpoint from a local directory (never downloaded).
Linking the spans to Wikidata ids and counting them is in `irbgen.wikidata.linking`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from irbgen.errors import BadInputError
from irbgen.extras import missing_extra
from irbgen.wikipedia.records import Page
from irbgen.wikipedia.wikitext import parse_article, split_sentences

EXTRA = "rebel"  # the pyproject extra that installs transformers and torch
TRIPLET, SUBJ, OBJ = "<triplet>", "<subj>", "<obj>"
MARKERS = (TRIPLET, SUBJ, OBJ)
MAX_WORDS = 100  # ~130 subword tokens: REBEL was trained on passages well under its 256-token input

_SPLIT = re.compile(r"(<triplet>|<subj>|<obj>)")
# Any other tag-like token (<s>, </s>, <pad>, <unk>, REBEL's unused <head>/<tail>) is noise in a span.
_OTHER_TAG = re.compile(r"<(?!(?:triplet|subj|obj)>)/?[A-Za-z_]+>")
_PARAGRAPHS = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class ExtractedTriple:
    """One triple as the model wrote it: surface spans, not yet linked."""

    head: str
    relation: str
    tail: str


class Extractor(Protocol):
    """Anything that turns passages into triples, one list per passage (RebelExtractor or a fake)."""

    def extract(self, passages: list[str]) -> list[list[ExtractedTriple]]: ...


# --- parsing -----------------------------------------------------------------------------------------


def _span(text: str | None) -> str:
    return " ".join(text.split()) if text else ""


def parse_triplets(text: str, *, complete: bool = True) -> list[ExtractedTriple]:
    """The triples of one linearised generation, in order; malformed pieces are skipped, never raised.

    `complete=False` says the generation was cut at its token limit: its last triple may hold a
    truncated relation label, so it is dropped.
    """
    out: list[ExtractedTriple] = []
    head: str | None = None
    tail: str | None = None
    relation: str | None = None
    state: str | None = None  # which span the text now belongs to: "head", "tail", "relation" or None

    def flush() -> None:
        nonlocal tail, relation
        if _span(head) and _span(tail) and _span(relation):
            out.append(ExtractedTriple(_span(head), _span(relation), _span(tail)))
        tail = relation = None

    for piece in _SPLIT.split(_OTHER_TAG.sub(" ", text or "")):
        if piece == TRIPLET:
            flush()
            head, state = "", "head"
        elif piece == SUBJ:
            flush()
            if _span(head):
                tail, state = "", "tail"
            else:  # a tail with no head: skip until the next <triplet>
                head, state = None, None
        elif piece == OBJ:
            if state == "tail" and _span(tail):
                relation, state = "", "relation"
            else:  # <obj> without a tail before it, or a second <obj>: drop the group
                flush()
                state = None
        elif state == "head":
            head = (head or "") + piece
        elif state == "tail":
            tail = (tail or "") + piece
        elif state == "relation":
            relation = (relation or "") + piece
    if complete:
        flush()
    return out


# --- passages ----------------------------------------------------------------------------------------


def pack_sentences(sentences: Iterable[str], max_words: int = MAX_WORDS) -> list[str]:
    """Consecutive sentences joined into passages of at most `max_words` words; longer sentences are cut."""
    if max_words < 1:
        raise ValueError(f"max_words must be >= 1, got {max_words}")
    passages: list[str] = []
    current: list[str] = []
    for sentence in sentences:
        words = sentence.split()
        if current and len(current) + len(words) > max_words:
            passages.append(" ".join(current))
            current = []
        while len(words) > max_words:
            passages.append(" ".join(words[:max_words]))
            words = words[max_words:]
        current.extend(words)
    if current:
        passages.append(" ".join(current))
    return passages


def article_passages(page_text: str, max_words: int = MAX_WORDS) -> list[str]:
    """Plain article text -> sentence-aligned passages; paragraphs (blank-line separated) never merge."""
    passages: list[str] = []
    for paragraph in _PARAGRAPHS.split(page_text):
        paragraph = " ".join(paragraph.split())
        sentences = [paragraph[start:end] for start, end in split_sentences(paragraph)]
        passages.extend(pack_sentences(sentences, max_words))
    return passages


def page_passages(page: Page, max_words: int = MAX_WORDS) -> list[str]:
    """A dump page's wikitext rendered to plain sentences and packed per section block.

    Raises `irbgen.wikipedia.wikitext.UnparsableWikitext` for a page the bounded parser refuses.
    """
    blocks: dict[int, list[str]] = {}
    for sentence in parse_article(page.wikitext).sentences:
        blocks.setdefault(sentence.block, []).append(sentence.text)
    return [passage for block in sorted(blocks) for passage in pack_sentences(blocks[block], max_words)]


# --- the model ---------------------------------------------------------------------------------------


def _import_transformers() -> tuple[Any, Any]:
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise missing_extra(exc.name or "transformers", "REBEL extraction", EXTRA) from None
    return torch, transformers


class RebelExtractor:
    """A local REBEL-format seq2seq checkpoint, loaded on first use with `transformers`; never downloads."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        max_input_tokens: int = 256,
        max_new_tokens: int = 128,
        num_beams: int = 1,
        batch_size: int = 8,
    ) -> None:
        for name, value in (
            ("max_input_tokens", max_input_tokens),
            ("max_new_tokens", max_new_tokens),
            ("num_beams", num_beams),
            ("batch_size", batch_size),
        ):
            if value < 1:
                raise BadInputError(f"REBEL {name} must be >= 1, got {value}")
        self.model_path = Path(model_path)
        self.device = device
        self.max_input_tokens = max_input_tokens
        self.max_new_tokens = max_new_tokens
        self.num_beams = num_beams
        self.batch_size = batch_size
        self._tokenizer: Any = None
        self._model: Any = None
        self._drop_ids: frozenset[int] = frozenset()
        self._limits = (max_input_tokens, max_new_tokens)  # capped at the model's positions on load

    def load(self) -> None:
        """Load tokenizer and model (once); BadInputError when the path is not a REBEL-format checkpoint."""
        if self._model is not None:
            return
        _, transformers = _import_transformers()
        where = self.model_path
        if not where.is_dir():
            raise BadInputError(f"--rebel-model {where}: no such directory (a local checkpoint is required)")
        try:
            tokenizer = transformers.AutoTokenizer.from_pretrained(str(where), local_files_only=True)
            model = transformers.AutoModelForSeq2SeqLM.from_pretrained(str(where), local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise BadInputError(f"--rebel-model {where}: cannot load a seq2seq checkpoint: {exc}") from exc
        marker_ids = {marker: tokenizer.convert_tokens_to_ids(marker) for marker in MARKERS}
        missing = [m for m, i in marker_ids.items() if i is None or i == tokenizer.unk_token_id]
        if missing:
            raise BadInputError(
                f"--rebel-model {where}: tokenizer lacks the REBEL markers {' '.join(missing)}"
            )
        # Decoding keeps special tokens so the markers survive; every other special token is cut first.
        self._drop_ids = frozenset(set(tokenizer.all_special_ids) - set(marker_ids.values()))
        # A decoder run past its learned positions fails with an index error (beams that never end do).
        positions = getattr(model.config, "max_position_embeddings", None) or None
        self._limits = (
            min(self.max_input_tokens, positions or self.max_input_tokens),
            min(self.max_new_tokens, positions - 1 if positions else self.max_new_tokens),
        )
        model.eval()
        self._model = model.to(self.device)
        self._tokenizer = tokenizer

    def generate(self, passages: list[str]) -> list[tuple[str, bool]]:
        """The decoded generation of each passage with whether it ended (eos) before the token limit."""
        self.load()
        out: list[tuple[str, bool]] = []
        for start in range(0, len(passages), self.batch_size):
            out.extend(self._generate_batch(passages[start : start + self.batch_size]))
        return out

    def extract(self, passages: list[str]) -> list[list[ExtractedTriple]]:
        """Triples per passage (one list per passage, in order); blank passages give []."""
        texts = [p for p in passages if p.strip()]
        generated = iter(self.generate(texts)) if texts else iter(())
        result: list[list[ExtractedTriple]] = []
        for passage in passages:
            if not passage.strip():
                result.append([])
                continue
            text, complete = next(generated)
            result.append(parse_triplets(text, complete=complete))
        return result

    def _generate_batch(self, batch: list[str]) -> list[tuple[str, bool]]:
        torch, _ = _import_transformers()
        tokenizer, model = self._tokenizer, self._model
        max_input, max_new = self._limits
        inputs = tokenizer(batch, return_tensors="pt", padding=True, truncation=True, max_length=max_input)
        with torch.inference_mode():
            sequences = model.generate(
                **inputs.to(self.device), max_new_tokens=max_new, num_beams=self.num_beams, do_sample=False
            )
        return [self._decode(row.tolist()) for row in sequences]

    def _decode(self, ids: list[int]) -> tuple[str, bool]:
        eos = self._tokenizer.eos_token_id
        generated = ids[1:]  # an encoder-decoder output starts with the decoder start token
        complete = eos in generated
        if complete:
            generated = generated[: generated.index(eos)]
        kept = [i for i in generated if i not in self._drop_ids]
        return self._tokenizer.decode(kept, skip_special_tokens=False), complete

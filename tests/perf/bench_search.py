"""Search at scale, the old way and the new side by side in one run. Prints JSON, each
figure with the load average beside it.

* **Full text** on the 10k-note synthetic vault of bench_index.py (every note drawn
  from the same 64 words: the worst case for a query of everyday words): the
  previous query (every word of three letters or more, OR-ed, ranked over all its
  matches) against the bounded plan (desktop/vault/fulltext.py), p50/p99 ms.
* **Vectors**, top 10 of 10k and 100k: ``@`` (BLAS, its threads), ``einsum``
  (exact, one thread) and the two-stage approximate search past
  :data:`~desktop.vault.vectors.APPROX_FROM` with its recall@10 against exact. The
  vectors are mixtures of real sentence embeddings (corpus.py and the sample vault's
  sentences, int8 embedder): random vectors would be isotropic, which embeddings are not.
* **Hybrid search** (query embedding + full text + vectors + fusion) at 10k, with
  the query embedding's share.

Run: ``python tests/perf/bench_search.py`` (the 10k vault is written and indexed
without vectors first, ~1 minute; ``--workdir`` keeps it between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from desktop.vault import search as search_module
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel, VectorStore
from tests.perf.bench_index import QUERIES, make_vault

ROOT = Path(__file__).resolve().parents[2]
_TERM = re.compile(r"\w+")


def load() -> float:
    return round(os.getloadavg()[0], 2)


def pct(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {
        "p50_ms": round(s[len(s) // 2] * 1000, 2),
        "p99_ms": round(s[min(len(s) - 1, int(len(s) * 0.99))] * 1000, 2),
        "load": load(),
    }


def previous_match(_index: VaultIndex, query: str) -> str | None:
    """The query before the bounded plan (every word, OR-ed, last one a prefix)."""
    terms = _TERM.findall(query)
    if not terms:
        return None
    terms = [t for t in terms if len(t) > 2] or terms
    quoted = [f'"{t}"' for t in terms]
    quoted[-1] = f"{quoted[-1]}*" if len(terms[-1]) >= 3 else quoted[-1]
    return " OR ".join(quoted)


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def each(fn: Callable[[Any], object], items: Any) -> list[float]:
    """Seconds of ``fn(item)`` for each item."""
    out = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        out.append(time.perf_counter() - t0)
    return out


def full_text(index: VaultIndex, rounds: int) -> dict[str, Any]:
    bounded = search_module._match
    out: dict[str, Any] = {}
    for name, match in (("previous", previous_match), ("bounded", bounded)):
        search_module._match = match  # type: ignore[assignment]
        samples: list[float] = []
        for _ in range(rounds):
            for q in QUERIES:
                samples += timed(lambda q=q: search_module.full_text(index, q, 50), 1)
        out[name] = pct(samples)
    search_module._match = bounded
    out["ratio_p99"] = round(out["previous"]["p99_ms"] / max(0.01, out["bounded"]["p99_ms"]), 1)
    return out


def realistic_vectors(n: int, real: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(real), n), rng.integers(0, len(real), n)
    mix = rng.uniform(0, 0.8, (n, 1)).astype(np.float32)
    noise = 0.02 * rng.standard_normal((n, real.shape[1])).astype(np.float32)
    v = real[i] + mix * real[j] + noise
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def sentence_embeddings() -> np.ndarray:
    from inference.embedder import EmbedderSettings, OnnxEmbedder
    from inference.registry import resolve_model
    from tests.perf.corpus import notes

    texts: list[str] = []
    for note in notes():
        texts += [s for s in re.split(r"(?<=[.!?])\s+", note) if len(s) > 20]
    for path in (ROOT / "resources" / "sample-vault").rglob("*.md"):
        body = path.read_text(encoding="utf-8", errors="ignore")
        texts += [s for s in re.split(r"(?<=[.!?])\s+|\n", body) if len(s) > 20]
    embedder = OnnxEmbedder(resolve_model("embedder"), EmbedderSettings(int8=True))
    return embedder.embed(list(dict.fromkeys(texts)))


def vectors(real: np.ndarray) -> list[dict[str, Any]]:
    out = []
    for n in (10_000, 100_000):
        data = realistic_vectors(n, real, 3)
        queries = realistic_vectors(200, real, 4)
        store = VectorStore(data.shape[1])
        t0 = time.perf_counter()
        store.upsert((f"n{i}", data[i]) for i in range(n))
        loaded = time.perf_counter() - t0
        row: dict[str, Any] = {"vectors": n, "load_s": round(loaded, 2)}
        row["blas"] = pct(each(lambda q: data @ q, queries))  # noqa: B023 - used at once
        basis = store._basis
        store._basis = None  # the exact path
        exact = [[p for p, _ in store.nearest(q, 10)] for q in queries]
        row["einsum_exact"] = pct(each(lambda q: store.nearest(q, 10), queries))  # noqa: B023
        store._basis = basis
        if store.approximate:
            approx = [[p for p, _ in store.nearest(q, 10)] for q in queries]
            row["approximate"] = pct(each(lambda q: store.nearest(q, 10), queries))  # noqa: B023
            hits = [len(set(a) & set(b)) / 10 for a, b in zip(exact, approx, strict=True)]
            row["approximate"]["recall_at_10"] = round(float(np.mean(hits)), 3)
        out.append(row)
    return out


def hybrid(index: VaultIndex, rounds: int, *, int8: bool = True) -> dict[str, Any]:
    """Search with a query embedding, on the 10k vault with vectors of its own words."""
    from desktop.flows.embedding import embedding_model
    from inference.embedder import EmbedderSettings, OnnxEmbedder
    from inference.registry import resolve_model

    embedder = OnnxEmbedder(resolve_model("embedder"), EmbedderSettings(int8=int8))
    model = embedding_model(embedder)
    rng = np.random.default_rng(5)
    paths = [n.path for n in index.notes()]
    base = embedder.embed(QUERIES)
    store = VectorStore(model.dimension)
    pick = rng.integers(0, len(QUERIES), len(paths))
    noisy = base[pick] + 0.5 * rng.standard_normal((len(paths), model.dimension)).astype(
        np.float32
    ) / np.sqrt(model.dimension)
    store.upsert(zip(paths, noisy / np.linalg.norm(noisy, axis=1, keepdims=True), strict=True))
    index.embedding = EmbeddingModel(model.model_id, model.dimension, model.embed)
    index.vectors = store
    embed_only: list[float] = []
    total: list[float] = []
    for _ in range(rounds):
        for q in QUERIES:
            embed_only += timed(lambda q=q: embedder.embed([q]), 1)
            total += timed(lambda q=q: search_module.search(index, q, 10), 1)
    return {"search": pct(total), "query_embedding_alone": pct(embed_only)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workdir", type=Path)
    ap.add_argument("--rounds", type=int, default=12)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="antinomy-search-"))
    os.environ.setdefault("ANTINOMY_HOME", str(work / "home"))
    root = work / "vault-10000"
    if not root.exists():
        make_vault(root, 10_000)
    index = VaultIndex(root)
    index.update()
    result: dict[str, Any] = {"load_start": load()}
    result["full_text_10k"] = full_text(index, args.rounds)
    result["vectors"] = vectors(sentence_embeddings())
    result["hybrid_10k"] = hybrid(index, args.rounds)  # the app's int8 embedder
    result["hybrid_10k_fp32"] = hybrid(index, args.rounds, int8=False)
    index.close()
    result["load_end"] = load()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

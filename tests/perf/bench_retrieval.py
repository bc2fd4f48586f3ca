"""Retrieval quality, fp32 against int8 vectors, on labelled queries over the sample vault.

Two query sets: the sample vault's known contradictions (each quote is a query whose
relevant notes are the two notes of its pair: tests/data/sample_vault_expected.json)
and questions written in other words than the notes' (tests/data/retrieval_queries.json).
For each precision the vault is indexed from scratch with that embedder, and every
query runs through the app's hybrid search (BM25 + cosine, rank fusion) and through
cosine alone. Prints nDCG@10 and recall@10 (binary relevance), the difference
int8 − fp32 in points, and the cosine of each note's int8 vector to its fp32 one.

Run: ``python tests/perf/bench_retrieval.py``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from desktop.flows.embedding import embedding_model
from desktop.resources import sample_vault_source
from desktop.vault.index import VaultIndex
from desktop.vault.search import search
from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.registry import resolve_model

DATA = Path(__file__).resolve().parents[1] / "data"
K = 10


def query_sets() -> dict[str, list[tuple[str, set[str]]]]:
    expected = json.loads((DATA / "sample_vault_expected.json").read_text(encoding="utf-8"))
    quotes: list[tuple[str, set[str]]] = []
    for pair in expected["contradictions"]:
        relevant = {pair["note_a"], pair["note_b"]}
        quotes.append((pair["quote_a"], relevant))
        quotes.append((pair["quote_b"], relevant))
    own = json.loads((DATA / "retrieval_queries.json").read_text(encoding="utf-8"))
    written = [(q["query"], set(q["relevant"])) for q in own["queries"]]
    return {"contradiction_quotes": quotes, "written_queries": written}


def ndcg(ranked: list[str], relevant: set[str], k: int = K) -> float:
    gain = sum(1.0 / math.log2(i + 2) for i, p in enumerate(ranked[:k]) if p in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return gain / ideal


def recall(ranked: list[str], relevant: set[str], k: int = K) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant)


def evaluate(index: VaultIndex, queries: list[tuple[str, set[str]]]) -> dict[str, float]:
    assert index.embedding is not None and index.vectors is not None
    out: dict[str, list[float]] = {k: [] for k in ("ndcg", "recall", "sem_ndcg", "sem_recall")}
    for text, relevant in queries:
        hybrid = [h.note.path for h in search(index, text, K)]
        qvec = index.embedding.embed([text])[0]
        semantic = [p for p, _ in index.vectors.nearest(qvec, K)]
        out["ndcg"].append(ndcg(hybrid, relevant))
        out["recall"].append(recall(hybrid, relevant))
        out["sem_ndcg"].append(ndcg(semantic, relevant))
        out["sem_recall"].append(recall(semantic, relevant))
    return {k: round(100 * float(np.mean(v)), 2) for k, v in out.items()}


def main() -> None:
    model = resolve_model("embedder")
    sets = query_sets()
    results: dict[str, Any] = {
        "load_avg": os.getloadavg(),
        "queries": {k: len(v) for k, v in sets.items()},
    }
    vectors: dict[str, dict[str, np.ndarray]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for precision in ("fp32", "int8"):
            root = Path(tmp) / precision
            shutil.copytree(sample_vault_source(), root)
            embedder = OnnxEmbedder(model, EmbedderSettings(int8=precision == "int8"))
            index = VaultIndex(root, embedding=embedding_model(embedder))
            t0 = time.perf_counter()
            index.update()
            seconds = time.perf_counter() - t0
            assert index.vectors is not None
            vectors[precision] = {
                p: index.vectors.vector(p) for p in (n.path for n in index.notes())
            }
            results[precision] = {
                "index_seconds": round(seconds, 2),
                "model_id": embedding_model(embedder).model_id,
                **{name: evaluate(index, qs) for name, qs in sets.items()},
            }
            index.close()
    results["int8_minus_fp32_points"] = {
        name: {
            k: round(results["int8"][name][k] - results["fp32"][name][k], 2)
            for k in results["fp32"][name]
        }
        for name in sets
    }
    common = [
        p
        for p in vectors["fp32"]
        if vectors["fp32"][p] is not None and vectors["int8"].get(p) is not None
    ]
    cos = [float(np.dot(vectors["fp32"][p], vectors["int8"][p])) for p in common]
    results["note_vector_cosine_int8_vs_fp32"] = {
        "notes": len(cos),
        "mean": round(float(np.mean(cos)), 4),
        "min": round(float(np.min(cos)), 4),
    }
    results["load_avg_end"] = os.getloadavg()
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()

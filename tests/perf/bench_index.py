"""Index and search at scale, on synthetic vaults (50–400 words a note).

For each size (default 1k and 10k notes): full index time and notes/s
(reading + full text, then embedding with the shipped embedder), incremental
re-index after changing one note, search latency p50/p99 (query embedding +
BM25 + vectors + fusion), database size and peak memory. Then exact vector
search alone at 10k and 100k vectors, p50/p99. Prints one JSON object.

Run: ``python tests/perf/bench_index.py [--sizes 1000,10000] [--no-embed]
[--precisions int8,fp32:1000]`` (the int8 embedder at every size, fp32 at 1k beside it).
The 10k embedding pass takes several minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numpy as np

from desktop.flows.embedding import embedding_model
from desktop.vault.index import VaultIndex
from desktop.vault.search import search
from desktop.vault.vectors import VectorStore
from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.registry import resolve_model

WORDS = [
    "team",
    "deploy",
    "release",
    "friday",
    "weekend",
    "review",
    "note",
    "decision",
    "context",
    "option",
    "reason",
    "cost",
    "risk",
    "user",
    "customer",
    "garden",
    "tomato",
    "run",
    "morning",
    "habit",
    "sleep",
    "focus",
    "meeting",
    "project",
    "plan",
    "budget",
    "quarter",
    "design",
    "test",
    "code",
    "bug",
    "fix",
    "support",
    "email",
    "calendar",
    "travel",
    "family",
    "book",
    "write",
    "draft",
    "idea",
    "principle",
    "tension",
    "trust",
    "speed",
    "care",
    "quality",
    "debt",
    "refactor",
    "hire",
    "goal",
    "health",
    "coffee",
    "walk",
    "river",
    "city",
    "train",
    "rain",
    "winter",
    "summer",
    "learn",
    "teach",
    "mentor",
    "feedback",
]
TYPES = ["tension", "substrate", "principle", "decision", "subject", None, None, None]
QUERIES = [
    "when do we deploy",
    "friday release risk",
    "sleep and morning habits",
    "budget for next quarter",
    "tomatoes in the garden",
    "feedback from the team",
    "refactor technical debt",
    "travel by train in winter",
]


def make_vault(root: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(n):
        folder = root / f"Area {i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        kind = TYPES[i % len(TYPES)]
        words = rng.randint(50, 400)
        sentences = []
        remaining = words
        while remaining > 0:
            length = min(remaining, rng.randint(6, 18))
            sentence = " ".join(rng.choice(WORDS) for _ in range(length))
            sentences.append(sentence.capitalize() + ".")
            remaining -= length
        links = " ".join(f"[[Note {rng.randrange(n):05d}]]" for _ in range(rng.randint(0, 4)))
        front = f"---\ntype: {kind}\nstatus: open\n---\n" if kind else ""
        text = f"{front}# Note {i:05d}\n\n{' '.join(sentences)}\n\n{links}\n"
        (folder / f"Note {i:05d}.md").write_text(text, encoding="utf-8")


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 2), "p99_ms": round(p99 * 1000, 2)}


def bench_size(
    n: int, embed: bool, threads: int, tmp: Path, *, int8: bool = True
) -> dict[str, object]:
    root = tmp / f"vault-{n}-{'int8' if int8 else 'fp32'}"
    make_vault(root, n)
    model = None
    if embed:
        settings = EmbedderSettings(threads=threads, int8=int8)
        model = embedding_model(OnnxEmbedder(resolve_model("embedder"), settings))
    phases: dict[str, float] = {}
    last = {"t": time.perf_counter(), "phase": ""}

    def progress(done: int, total: int, phase: str) -> None:
        now = time.perf_counter()
        if phase != last["phase"]:
            last["phase"] = phase
        phases[phase] = phases.get(phase, 0.0) + now - float(last["t"])
        last["t"] = now

    index = VaultIndex(root, embedding=model)
    t0 = time.perf_counter()
    last["t"] = t0
    report = index.update(progress=progress)
    full = time.perf_counter() - t0
    target = root / "Area 03" / "Note 00003.md"
    target.write_text(target.read_text() + "\nOne more sentence about deploying on Mondays.\n")
    incr = []
    for _ in range(5):
        t1 = time.perf_counter()
        r = index.update()
        incr.append(time.perf_counter() - t1)
        assert r.updated == ("Area 03/Note 00003.md",) or not r.updated
        target.write_text(target.read_text() + "x\n")
    incr.pop()  # the last edit was not indexed
    nothing = []
    index.update()
    for _ in range(5):
        t1 = time.perf_counter()
        index.update()
        nothing.append(time.perf_counter() - t1)
    latencies = []
    for _ in range(10):
        for q in QUERIES:
            t1 = time.perf_counter()
            search(index, q, 10)
            latencies.append(time.perf_counter() - t1)
    index.close()
    db = root / ".antinomy" / "index.db"
    size = sum(p.stat().st_size for p in db.parent.glob("index.db*"))
    return {
        "notes": n,
        "embedder": "int8" if int8 else "fp32",
        "full_index_s": round(full, 2),
        "notes_per_s": round(n / full, 1),
        "phases_s": {k: round(v, 2) for k, v in phases.items()},
        "embedded": report.embedded,
        "incremental_one_note_s": {
            "median": round(statistics.median(incr), 4),
            "max": round(max(incr), 4),
        },
        "update_nothing_changed_s": round(statistics.median(nothing), 4),
        "search": percentiles(latencies),
        "db_mb": round(size / 1048576, 1),
        "vault_mb": round(sum(f.stat().st_size for f in root.rglob("*.md")) / 1048576, 1),
    }


def bench_vectors(n: int, dim: int = 384) -> dict[str, object]:
    rng = np.random.default_rng(1)
    store = VectorStore(dim)
    data = rng.standard_normal((n, dim)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    t0 = time.perf_counter()
    store.upsert((f"n{i}", data[i]) for i in range(n))
    load = time.perf_counter() - t0
    queries = rng.standard_normal((200, dim)).astype(np.float32)
    samples = []
    for q in queries:
        t1 = time.perf_counter()
        store.nearest(q, 10)
        samples.append(time.perf_counter() - t1)
    t1 = time.perf_counter()
    store.upsert([("n5", queries[0])])
    one_update = time.perf_counter() - t1
    return {
        "vectors": n,
        "load_s": round(load, 2),
        "top10": percentiles(samples),
        "one_row_update_ms": round(one_update * 1000, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--no-embed", action="store_true")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--precisions",
        default="int8,fp32:1000",
        help="embedders to index with, side by side: int8 (the default) and "
        "fp32; NAME:SIZES limits one to those sizes (fp32 takes ~20 min at 10k)",
    )
    args = ap.parse_args()
    runs: list[tuple[int, bool]] = []
    for item in args.precisions.split(","):
        name, _, only = item.partition(":")
        for size in (int(x) for x in args.sizes.split(",")):
            if not only or str(size) in only.split("+"):
                runs.append((size, name == "int8"))
    tmp = Path(tempfile.mkdtemp(prefix="antinomy-bench-"))
    os.environ.setdefault("ANTINOMY_HOME", str(tmp / "home"))
    try:
        sizes = [bench_size(n, not args.no_embed, args.threads, tmp, int8=int8) for n, int8 in runs]
        vectors = [bench_vectors(n) for n in (10_000, 100_000)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        json.dumps(
            {
                "embedder_threads": args.threads,
                "sizes": sizes,
                "vector_search": vectors,
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

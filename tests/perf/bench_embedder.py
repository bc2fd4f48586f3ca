"""Embedder speed and quality: the shipped file against its int8 copy, in one run.

Variants, each at 1 and 2 intra-op threads:

* ``shipped``     — the shipped ONNX file (int8 weights, fp32 arithmetic),
  ``max_batch`` = the batch size;
* ``int8``        — the int8 copy from ``inference.int8.prepare_int8``, batched
  the same way (a batch shares one activation scale);
* ``int8_single`` — the int8 copy one text per ONNX run
  (``EmbedderSettings(int8=True)``); the batch size does not apply to it, so
  each cell times it on the cell's first few texts, for a side-by-side ratio.

Throughput (texts/s) for batches of 1, 8, 32, 128 texts of ~20 and ~200 words
(tests/perf/corpus.py), single-text latency p50/p99, quality (cosine to the
shipped vectors on the ~150-note corpus; a text alone vs in a batch), peak RSS,
and the one-off preparation time. Ratios are against ``shipped`` in the same
cell, measured interleaved, because this machine is noisy.

Prints one JSON object. Run: ``python tests/perf/bench_embedder.py`` (~4½
minutes on 2 quiet cores, half of it the four cells of 128 long texts). The
int8 copy is prepared in a temporary ANTINOMY_HOME, so the run also times a
cold preparation and leaves nothing behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import onnxruntime as ort
from corpus import notes, texts_of_about

from inference.embedder import EmbedderSettings, OnnxEmbedder
from inference.registry import ResolvedModel, resolve_model

BATCHES = (1, 8, 32, 128)
LENGTHS = {"short20": 20, "long200": 200}
#: Fewest texts timed per cell; a batch of 128 times 128 texts.
MIN_TEXTS = {"short20": 64, "long200": 16}
#: One pass per cell keeps the run under ~5 minutes; variants are interleaved.
REPEATS = {"short20": 1, "long200": 1}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    c = (a * b).sum(axis=1)  # rows are unit vectors
    return {"mean": round(float(c.mean()), 5), "min": round(float(c.min()), 5)}


def prepare(model: ResolvedModel) -> tuple[Path, dict[str, Any]]:
    import onnx

    from inference.int8 import prepare_int8

    t0 = time.perf_counter()
    path = prepare_int8(model)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    prepare_int8(model)
    cached = time.perf_counter() - t0
    ops = Counter(n.op_type for n in onnx.load(str(path)).graph.node)
    return path, {
        "cold_s": round(cold, 2),
        "cached_s": round(cached, 5),
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "ops": {k: ops[k] for k in ("MatMulInteger", "DynamicQuantizeLinear", "MatMul")},
        "peak_rss_mb_after": round(peak_rss_mb()),
    }


def make(model: ResolvedModel, variant: str, threads: int, int8_file: Path) -> OnnxEmbedder:
    if variant == "shipped":  # the shipped file as it is (fp32 arithmetic)
        return OnnxEmbedder(model, EmbedderSettings(threads=threads, int8=False))
    if variant == "int8":  # the int8 file, batched like the shipped one
        settings = EmbedderSettings(threads=threads, int8=False)
        return OnnxEmbedder(model, settings, onnx_path=int8_file)
    return OnnxEmbedder(model, EmbedderSettings(threads=threads, int8=True))


def rate(embedder: OnnxEmbedder, texts: list[str], batch: int, repeats: int) -> float:
    """Texts per second, calling ``embed`` with ``batch`` texts at a time."""
    embedder.settings = dataclasses.replace(embedder.settings, max_batch=batch)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for start in range(0, len(texts), batch):
            embedder.embed(texts[start : start + batch])
        best = min(best, time.perf_counter() - t0)
    return len(texts) / best


def throughput(embedders: dict[str, OnnxEmbedder], pools: dict[str, list[str]]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    variants = list(embedders)
    for length, pool in pools.items():
        rows: dict[str, Any] = {}
        for k, batch in enumerate(BATCHES):
            texts = pool[: max(batch, MIN_TEXTS[length])]
            cell: dict[str, float] = {}
            for v in variants[k % 3 :] + variants[: k % 3]:  # rotate who goes first
                if v == "int8_single":  # one run per text: a few texts are enough
                    cell[v] = rate(embedders[v], texts[: MIN_TEXTS[length]], 1, REPEATS[length])
                else:
                    cell[v] = rate(embedders[v], texts, batch, REPEATS[length])
            row = {v: round(cell[v], 1) for v in variants}
            for v in variants[1:]:
                row[f"{v}/shipped"] = round(cell[v] / cell["shipped"], 2)
            rows[str(batch)] = row
        best = max(r["shipped"] for r in rows.values())
        single = statistics.median(r["int8_single"] for r in rows.values())
        rows["int8_single_median/best_shipped"] = round(single / best, 2)
        table[length] = rows
    return table


def latency(embedders: dict[str, OnnxEmbedder], texts: list[str]) -> dict[str, Any]:
    """One short text per call, variants interleaved call by call."""
    # A single text runs alone either way: int8 and int8_single are the same here.
    names = ["shipped", "int8"]
    samples: dict[str, list[float]] = {n: [] for n in names}
    for text in texts:
        for name in names:
            t0 = time.perf_counter()
            embedders[name].embed([text])
            samples[name].append((time.perf_counter() - t0) * 1000)
    out: dict[str, Any] = {}
    for name, ms in samples.items():
        q = statistics.quantiles(ms, n=100)
        out[name] = {"p50": round(q[49], 2), "p99": round(q[98], 2)}
    out["int8/shipped_p50"] = round(out["int8"]["p50"] / out["shipped"]["p50"], 2)
    return out


def quality(model: ResolvedModel, int8_file: Path) -> dict[str, Any]:
    texts = notes()
    shipped = make(model, "shipped", 2, int8_file)
    batched = make(model, "int8", 2, int8_file)
    single = make(model, "int8_single", 2, int8_file)
    ref = shipped.embed(texts)  # batches of 32, length-sorted: the app's default
    in_batch = batched.embed(texts)
    one_by_one = single.embed(texts)
    alone_ship = np.vstack([shipped.embed([t]) for t in texts])
    alone_int8 = np.vstack([batched.embed([t]) for t in texts])
    result: dict[str, Any] = {
        "texts": len(texts),
        "int8_single_vs_shipped": cosines(one_by_one, ref),
        "int8_batched_vs_shipped": cosines(in_batch, ref),
        "alone_vs_batch32": {
            "shipped": cosines(alone_ship, ref),
            "int8_batched": cosines(alone_int8, in_batch),
            "int8_single": cosines(alone_int8, one_by_one),
        },
    }
    q = result["int8_single_vs_shipped"]
    result["int8_single_meets_criteria"] = (
        q["mean"] >= 0.99
        and q["min"] >= 0.98
        and result["alone_vs_batch32"]["int8_single"]["min"] >= 0.999
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--latency-calls", type=int, default=200)
    args = parser.parse_args()

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="antinomy-bench-") as home:
        os.environ["ANTINOMY_HOME"] = home
        model = resolve_model("embedder")
        int8_file, prep = prepare(model)
        pools = {name: texts_of_about(words, 128) for name, words in LENGTHS.items()}
        probe = make(model, "shipped", 1, int8_file)
        tokens = {
            name: round(float(probe._encode(pool)[1].sum(axis=1).mean()), 1)
            for name, pool in pools.items()
        }
        probe.close()
        report: dict[str, Any] = {
            "onnxruntime": ort.__version__,
            "cpus": os.cpu_count(),
            "mean_tokens": tokens,
            "prepare": prep,
            "quality": quality(model, int8_file),
            "throughput_texts_per_s": {},
            "latency_ms": {},
        }
        for threads in args.threads:
            embedders = {
                v: make(model, v, threads, int8_file) for v in ("shipped", "int8", "int8_single")
            }
            for e in embedders.values():  # ONNX Runtime sets kernels up on the first run
                e.embed(pools["short20"][:2] + pools["long200"][:2])
            key = f"threads={threads}"
            report["latency_ms"][key] = latency(embedders, texts_of_about(20, args.latency_calls))
            report["throughput_texts_per_s"][key] = throughput(embedders, pools)
            for e in embedders.values():
                e.close()
        report["peak_rss_mb"] = round(peak_rss_mb())
        report["elapsed_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

"""First index of a synthetic vault: the in-process embedder vs the HTTP embedder.

The server is ``antinomy serve`` in its own process on loopback (the same ONNX
model, the same settings), so the difference between the two runs is the cost of
the protocol: JSON both ways, one HTTP round trip per batch, the server's
micro-batcher and token counting. Runs alternate (local, http, local, http…) so
both see the same load on this shared machine; the ratio is the robust figure.

Run: ``python tests/perf/bench_http_embedder.py [--notes 1000] [--rounds 1]``.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.embedding import embedding_model
from desktop.vault.index import VaultIndex
from desktop.vault.vectors import EmbeddingModel, note_chunks
from inference.embedder import Embedder, OnnxEmbedder, Vectors
from inference.http_embedder import HttpEmbedderSettings, OpenAIHttpEmbedder
from inference.registry import resolve_model
from tests.perf.bench_index import make_vault


class Counting(Embedder):
    """Counts the texts and calls that reach an embedder."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.model = getattr(inner, "model", None)
        self.texts = 0
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        self.calls += 1
        return self.inner.embed(texts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(home: Path, vault: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    port = free_port()
    env = os.environ | {"ANTINOMY_HOME": str(home), "OMP_WAIT_POLICY": "PASSIVE"}
    log = (home / "serve.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "desktop.cli.main",
            "serve",
            "--vault",
            str(vault),
            "--port",
            str(port),
            "--no-guard",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 180
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                if json.loads(r.read()).get("models") == "ready":
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError((home / "serve.log").read_text()[-2000:])
        time.sleep(0.5)
    token = (home / "config" / "endpoint-token").read_text().strip()
    return proc, f"http://127.0.0.1:{port}/v1", token


def first_index(source: Path, work: Path, embedder: Counting) -> dict[str, float]:
    vault = work / "vault"
    shutil.rmtree(vault, ignore_errors=True)
    shutil.copytree(source, vault)
    before_texts, before_calls = embedder.texts, embedder.calls
    t0 = time.perf_counter()
    index = VaultIndex(vault, embedding=embedding_model(embedder))
    try:
        report = index.update()
    finally:
        index.close()
    seconds = time.perf_counter() - t0
    texts = embedder.texts - before_texts
    return {
        "seconds": round(seconds, 2),
        "notes": report.notes_indexed,
        "embedded": report.embedded,
        "texts": texts,
        "index_calls": embedder.calls - before_calls,
        "notes_per_s": round(report.notes_indexed / seconds, 1),
        "texts_per_s": round(texts / seconds, 1),
    }


def embed_only(texts: list[str], embedder: Embedder, batch: int) -> float:
    """Seconds to embed ``texts`` in index-sized calls, nothing else around it."""
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start : start + batch])
    return time.perf_counter() - t0


def summary(times: dict[str, list[float]], texts: int) -> dict[str, object]:
    fastest = {k: min(v) for k, v in times.items()}
    return {
        "texts": texts,
        "local_s": [round(x, 3) for x in times["local"]],
        "http_s": [round(x, 3) for x in times["http"]],
        "ms_per_text_local": round(fastest["local"] / texts * 1000, 2),
        "ms_per_text_http": round(fastest["http"] / texts * 1000, 2),
        "overhead_ms_per_text": round((fastest["http"] - fastest["local"]) / texts * 1000, 2),
        "ratio_http_over_local": round(fastest["http"] / fastest["local"], 3),
        "ratio_of_medians": round(
            statistics.median(times["http"]) / statistics.median(times["local"]), 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--texts", type=int, default=400, help="embedding alone: this many index chunks"
    )
    parser.add_argument("--no-index", action="store_true", help="embedding alone only")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-http-embed-"))
    try:
        source = tmp / "source"
        make_vault(source, args.notes)
        home = tmp / "home"
        home.mkdir()
        (tmp / "empty-vault").mkdir()
        proc, url, token = start_server(home, tmp / "empty-vault")
        try:
            local = Counting(OnnxEmbedder(resolve_model("embedder")))
            remote_inner = OpenAIHttpEmbedder(
                HttpEmbedderSettings(url, api_key=token, batch_size=args.batch_size)
            )
            remote = Counting(remote_inner)
            runs: dict[str, list[dict[str, float]]] = {"local": [], "http": []}
            for _ in range(0 if args.no_index else args.rounds):
                runs["local"].append(first_index(source, tmp / "local", local))
                runs["http"].append(first_index(source, tmp / "http", remote))
            # The same index chunks embedded alone, alternating, so the load is shared.
            chunks = [
                chunk
                for path in sorted(source.rglob("*.md"))
                for chunk in note_chunks(path.stem, path.read_text(encoding="utf-8"))
            ][: args.texts]
            # And short texts (a title, a guard summary): the embedding is cheap, so the
            # protocol's own cost per text shows.
            short = [" ".join(c.split()[:8]) for c in chunks]
            alone: dict[str, list[float]] = {"local": [], "http": []}
            alone_short: dict[str, list[float]] = {"local": [], "http": []}
            for _ in range(args.rounds):
                alone["local"].append(embed_only(chunks, local.inner, 32))
                alone["http"].append(embed_only(chunks, remote_inner, 32))
                alone_short["local"].append(embed_only(short, local.inner, 32))
                alone_short["http"].append(embed_only(short, remote_inner, 32))
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        model: EmbeddingModel = embedding_model(remote_inner)
        result: dict[str, object] = {
            "embedding_alone": summary(alone, len(chunks)),
            "embedding_alone_short_texts": summary(alone_short, len(short)),
        }
        if runs["local"]:
            best = {k: min(v, key=lambda r: r["seconds"]) for k, v in runs.items()}
            texts = best["local"]["texts"]
            overhead = (best["http"]["seconds"] - best["local"]["seconds"]) / max(texts, 1)
            result |= {
                "first_index": runs,
                "ratio_http_over_local": round(
                    best["http"]["seconds"] / best["local"]["seconds"], 3
                ),
                "overhead_ms_per_text": round(overhead * 1000, 3),
            }
        print(
            json.dumps(
                result
                | {
                    "notes": args.notes,
                    "rounds": args.rounds,
                    "batch_size": args.batch_size,
                    "server": "antinomy serve (separate process, loopback)",
                    "http_model_id": model.model_id,
                    "http_requests": remote_inner.requests,
                    "http_retries": remote_inner.retries,
                    "loadavg": [round(x, 1) for x in os.getloadavg()],
                },
                indent=1,
            )
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

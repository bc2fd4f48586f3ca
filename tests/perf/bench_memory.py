"""Memory: consolidation throughput, recall latency over 1k subject pages, capture latency.

* **consolidate** — the shipped model on the first ``--lines`` turns' lines of the
  recorded conversation (tests/data/memory/conversation.json): source lines per
  second, seconds per step, tokens in/out.
* **recall** — 1,000 subject pages of 4 facts each written to a temporary vault
  (synthetic but varied text), the shipped embedder; the cold build (embed every
  summary and fact, cache on disk), a rebuild from the disk cache, then
  ``--queries`` queries: p50/p99 of a warm recall (one query embedding + one
  matrix product over 5,000 vectors).
* **capture** — ``--captures`` turns: in-process ``capture_turn`` (masking,
  withdrawal check, atomic rewrite of the open batch with fsync), and, with
  ``--endpoint``, the same through ``POST /v1/capture`` on a real endpoint.

Prints one JSON object. Run: ``python tests/perf/bench_memory.py``
(``--skip-consolidate`` to leave the LLM out).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.memory import RecallIndex, capture_turn, close_open_batch, consolidate
from desktop.flows.memory.lazy import LazyGenerator, load_embedder

DATA = Path(__file__).resolve().parents[1] / "data" / "memory"

_WORDS = (
    "project budget deadline travel flight hotel family sister brother doctor dentist report "
    "contract renewal release deploy server database migration team lead hiring interview "
    "garden bike marathon training recipe dinner birthday gift concert tickets train car "
    "insurance bank mortgage apartment lease move kitchen paint holiday beach mountain ski "
    "book course exam python rust go editor laptop phone backup invoice tax meeting client"
)
WORDS = _WORDS.split()
_NAMES = (
    "Atlas Helios Lisbon Porto Giulia Marco Ana Neon Fly Berlin Milan Lyon Orion Vega Nova "
    "Zephyr Juniper Cedar Maple Willow Aurora Comet Delta Echo Falcon Harbor Iris Jasper"
)
NAMES = _NAMES.split()


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def ms(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(pct(values, 0.5) * 1000, 2),
        "p99_ms": round(pct(values, 0.99) * 1000, 2),
        "max_ms": round(max(values) * 1000, 2),
        "n": len(values),
    }


def bench_consolidate(lines: int) -> dict[str, Any]:
    vault = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    turns = json.loads((DATA / "conversation.json").read_text())["turns"]
    written = 0
    for t in turns:
        if written >= lines:
            break
        ts = datetime.fromisoformat(t["ts"].replace("Z", "+00:00"))
        r = capture_turn(vault, role=t["role"], text=t["text"], session_id=t["session"], ts=ts)
        written += len(r.line_ids)
    close_open_batch(vault)
    gen = LazyGenerator()
    load = time.perf_counter()
    gen.count_tokens("warm")
    load = time.perf_counter() - load
    report = consolidate(vault, gen, force=True)
    gen.close()
    return {
        "status": report.status,
        "model_load_s": round(load, 2),
        "source_lines": written,
        "lines_read": report.lines_read,
        "steps": report.steps,
        "seconds": report.seconds,
        "lines_per_s": round(report.lines_read / report.seconds, 2) if report.seconds else None,
        "seconds_per_step": round(report.seconds / max(1, report.steps), 1),
        "tokens_in": report.tokens_in,
        "tokens_out": report.tokens_out,
        "accepted": len(report.accepted),
        "rejected": len(report.rejected),
    }


def _pages(vault: Path, n: int, rng: random.Random) -> list[str]:
    folder = vault / "Antinomy" / "Subjects"
    folder.mkdir(parents=True)
    queries = []
    for i in range(n):
        name = f"{rng.choice(NAMES)} {rng.choice(WORDS)} {i}"
        facts = []
        for j in range(4):
            words = " ".join(rng.sample(WORDS, 6))
            facts.append(f"- {rng.choice(NAMES)} {words} — [2026-11-30#L{4 * i + j + 1}](x)")
        summary = f"{name}: " + " ".join(rng.sample(WORDS, 8))
        folder.joinpath(f"{name}.md").write_text(
            f'---\ntype: subject\nsummary: "{summary}"\n---\n# {name}\n\n## Notes\n\n'
            + "\n".join(facts)
            + "\n"
        )
        if i % 5 == 0:
            queries.append(" ".join(rng.sample(WORDS, 4)))
    return queries


def bench_recall(pages: int, queries: int) -> dict[str, Any]:
    rng = random.Random(7)
    vault = Path(tempfile.mkdtemp(prefix="bench-recall-"))
    qs = _pages(vault, pages, rng)
    embedder = load_embedder()
    t = time.perf_counter()
    index = RecallIndex(vault, embedder)
    items = index.refresh()
    cold = time.perf_counter() - t
    t = time.perf_counter()
    again = RecallIndex(vault, embedder)
    again.refresh()
    cached = time.perf_counter() - t
    index.recall("warm up")
    times = []
    for i in range(queries):
        q = qs[i % len(qs)]
        t = time.perf_counter()
        index.recall(q, k=5)
        times.append(time.perf_counter() - t)
    embed_only = []
    for i in range(min(queries, 100)):
        t = time.perf_counter()
        embedder.embed([qs[i % len(qs)]])
        embed_only.append(time.perf_counter() - t)
    embedder.close()
    return {
        "pages": pages,
        "items": items,
        "cold_build_s": round(cold, 2),
        "rebuild_from_cache_s": round(cached, 2),
        "warm_recall": ms(times),
        "query_embedding_only": ms(embed_only),
    }


def bench_capture(n: int, endpoint: bool) -> dict[str, Any]:
    vault = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    text = "We decided to move the Atlas API to Fly.io; the cutover is on 15 December."
    times = []
    for i in range(n):
        t = time.perf_counter()
        capture_turn(vault, role="user" if i % 2 == 0 else "assistant", text=text, session_id="b")
        times.append(time.perf_counter() - t)
    out: dict[str, Any] = {"in_process": ms(times), "lines_in_batch_at_end": n}
    if endpoint:
        out["endpoint"] = _capture_endpoint(n, text)
    return out


def _capture_endpoint(n: int, text: str) -> dict[str, Any]:
    import http.client

    from desktop.service.server import start_endpoint
    from inference.runtime import Runtime

    vault = Path(tempfile.mkdtemp(prefix="bench-capture-ep-"))
    runtime = Runtime()
    runtime.start()
    runtime.wait_ready(timeout=120)
    token = "bench-token-" + "x" * 40
    handle = start_endpoint(
        runtime=runtime, vault_root=vault, port=0, token=token, publish=False, guard=False
    )
    try:
        conn = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=10)
        headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        }
        times = []
        for i in range(n):
            body = json.dumps({"role": "user", "text": text, "session_id": f"b{i % 3}"})
            t = time.perf_counter()
            conn.request("POST", "/v1/capture", body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            times.append(time.perf_counter() - t)
            assert resp.status == 200, resp.status
        return ms(times)
    finally:
        handle.stop()
        runtime.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lines", type=int, default=100)
    p.add_argument("--pages", type=int, default=1000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--captures", type=int, default=300)
    p.add_argument("--skip-consolidate", action="store_true")
    p.add_argument("--endpoint", action="store_true", help="capture through POST /v1/capture too")
    args = p.parse_args()
    result: dict[str, Any] = {"machine_note": "2 cores shared with other work; noisy"}
    result["capture"] = bench_capture(args.captures, args.endpoint)
    result["recall"] = bench_recall(args.pages, args.queries)
    if not args.skip_consolidate:
        result["consolidate"] = bench_consolidate(args.lines)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

"""Memory: consolidation throughput, recall latency over 1k subject pages, capture latency.

* **consolidate** — the shipped LLM and embedder (and the judge, when one is installed
  or given with ``--judge``) on the recorded 204-turn conversation
  (tests/data/memory/conversation.json): planted facts kept on the right subject page
  with a correct citation (of 12), unsupported facts written, pages created, junk
  subject names (judged here independently of the flow's own name check), lines per
  second; then recall on its 20 questions (tests/data/memory/recall_questions.json:
  the right fact in the top 3) and 10 unrelated queries (nothing returned).
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
import os
import random
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.memory import RecallIndex, capture_turn, close_open_batch, consolidate
from desktop.flows.memory.recall import RECALL_FLOOR
from inference.engines import LazyGenerator
from inference.engines import open_embedder as load_embedder

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


def _junk_name(name: str, cited: str) -> str | None:
    """Why a page name is junk, judged independently of the flow's own name check."""
    words = name.split()
    low = [w.lower().strip(".'") for w in words]
    if len(words) > 4:
        return "more than 4 words"
    if any(w in JUNK_WORDS for w in low):
        return "a pronoun or a verb"
    if "_" in name or "…" in name:
        return "a fragment"
    cited_low = cited.lower()
    if not any(w[:5] in cited_low for w in low):
        return "no word of it was said"
    return None


JUNK_WORDS = {
    "i", "we", "you", "he", "she", "they", "it", "this", "that", "user", "me", "us",
    "is", "are", "was", "will", "decided", "moved", "said",
}  # fmt: skip


def bench_consolidate(lines: int, judge_path: str | None) -> dict[str, Any]:
    """The recorded conversation through the shipped LLM and embedder (and a judge if given)."""
    from desktop.flows.memory import subject_pages
    from desktop.flows.memory.batches import RawStore
    from desktop.flows.memory.support import SUPPORT_THRESHOLD, support_ratio, unsupported_names

    vault = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    data = json.loads((DATA / "conversation.json").read_text())
    written = 0
    planted_ids: dict[str, str] = {}
    for t in data["turns"]:
        if written >= lines:
            break
        ts = datetime.fromisoformat(t["ts"].replace("Z", "+00:00"))
        r = capture_turn(vault, role=t["role"], text=t["text"], session_id=t["session"], ts=ts)
        written += len(r.line_ids)
        if t["role"] == "user" and r.line_ids:
            planted_ids.setdefault(t["text"], r.line_ids[0])
    close_open_batch(vault)
    gen = LazyGenerator()
    load = time.perf_counter()
    gen.count_tokens("warm")
    embedder = load_embedder()
    embedder.embed(["warm"])
    judge = _judge(judge_path)
    load = time.perf_counter() - load
    reports = []
    for _ in range(5):
        report = consolidate(vault, gen, embedder=embedder, judge=judge, force=True)
        reports.append(report)
        if report.status != "ok" or not report.lines_pending:
            break
    seconds = sum(r.seconds for r in reports)
    store = RawStore(vault)
    pages = subject_pages(vault)
    unsupported = []
    junk = []
    for page in pages:
        cited_all = ""
        for fact in page.facts:
            cited = "\n".join((store.line(c) or _NO_LINE).text for c in fact.citations)
            cited_all += cited + "\n"
            allowed = (page.name, fact.section)
            if support_ratio(fact.text, cited, allowed=allowed) < SUPPORT_THRESHOLD or (
                unsupported_names(fact.text, cited, allowed=allowed)
            ):
                unsupported.append(f"{page.name}: {fact.text}")
        why = _junk_name(page.name, cited_all)
        if why:
            junk.append(f"{page.name} ({why})")
    kept = []
    missed = []
    for planted in data["planted"]:
        line_id = planted_ids.get(planted["text"])
        hits = [
            (p.name, f.text)
            for p in pages
            for f in p.facts
            if line_id in f.citations and any(w in p.name.lower() for w in planted["subjects"])
        ]
        (kept if hits else missed).append(planted["text"] if not hits else hits[0])
    accepted = [f for r in reports for f in r.accepted]
    lines_read = sum(r.lines_read for r in reports)
    result = {
        "statuses": [r.status for r in reports],
        "judge": judge.name if judge is not None else None,
        "models_load_s": round(load, 2),
        "source_lines": written,
        "lines_read": lines_read,
        "seconds": round(seconds, 1),
        "lines_per_s": round(lines_read / seconds, 2) if seconds else None,
        "candidates": sum(r.candidates for r in reports),
        "facts_written": len(accepted),
        "rephrased": sum(1 for f in accepted if f.wording == "rephrased"),
        "verbatim": sum(1 for f in accepted if f.wording == "verbatim"),
        "subject_names_refused": sum(1 for f in accepted if f.subject_refused),
        "summaries": dict(Counter(v for r in reports for v in r.summaries.values())),
        "duplicates": sum(r.duplicates for r in reports),
        "planted_kept": f"{len(kept)}/{len(data['planted'])}",
        "planted_missed": missed,
        "unsupported_written": unsupported,
        "pages_created": len(pages),
        "page_names": sorted(p.name for p in pages),
        "junk_subject_names": junk,
        "tokens_in": sum(r.tokens_in for r in reports),
        "tokens_out": sum(r.tokens_out for r in reports),
        "line_outcomes": dict(Counter(o.outcome for r in reports for o in r.lines)),
    }
    result["recall"] = _bench_recall_questions(vault, embedder, planted_ids, data)
    gen.close()
    embedder.close()
    return result


class _NoLine:
    text = ""


_NO_LINE = _NoLine()


def _judge(path: str | None) -> Any:
    """The judge when one is given or installed (``--judge``), else None (lexical checks only)."""
    if path == "none":
        return None
    from inference.engines import open_judge_or_none as load_judge_or_none

    if path:
        from inference.judge import OnnxJudge
        from inference.registry import resolve_model

        return OnnxJudge(resolve_model("judge", path))
    judge, _why = load_judge_or_none()
    return judge


def _bench_recall_questions(
    vault: Path, embedder: Any, planted_ids: dict[str, str], data: dict[str, Any]
) -> dict[str, Any]:
    """20 questions about the planted facts (right fact in the top 3), 10 unrelated queries."""
    questions = json.loads((DATA / "recall_questions.json").read_text())
    index = RecallIndex(vault, embedder)
    index.refresh()
    top3 = []
    wrong = []
    times = []
    for q in questions["questions"]:
        line_id = planted_ids.get(data["planted"][q["planted"]]["text"])
        t = time.perf_counter()
        result = index.recall(q["query"], k=3)
        times.append(time.perf_counter() - t)
        if any(line_id in h.citations for h in result.facts):
            top3.append(q["query"])
        else:
            wrong.append({q["query"]: [h.text for h in result.facts]})
    empty = []
    noisy = []
    for q in questions["unrelated"]:
        result = index.recall(q, k=3)
        if not result.facts and not result.subjects:
            empty.append(q)
        else:
            noisy.append({q: [(h.text, h.score) for h in (*result.subjects, *result.facts)]})
    return {
        "right_fact_in_top3": f"{len(top3)}/{len(questions['questions'])}",
        "missed": wrong,
        "unrelated_empty": f"{len(empty)}/{len(questions['unrelated'])}",
        "unrelated_with_hits": noisy,
        "floor": RECALL_FLOOR,
        "latency": ms(times),
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
    p.add_argument("--lines", type=int, default=10_000, help="source lines taken (default: all)")
    p.add_argument("--pages", type=int, default=1000)
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--captures", type=int, default=300)
    p.add_argument("--skip-consolidate", action="store_true")
    p.add_argument(
        "--skip-synthetic", action="store_true", help="leave out capture and 1k-page recall"
    )
    p.add_argument(
        "--judge",
        metavar="ONNX",
        help="judge model file ('none' for lexical checks only; default: the installed one)",
    )
    p.add_argument("--endpoint", action="store_true", help="capture through POST /v1/capture too")
    args = p.parse_args()
    result: dict[str, Any] = {"machine_note": "2 cores shared with other work; noisy"}
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    if not args.skip_synthetic:
        result["capture"] = bench_capture(args.captures, args.endpoint)
        result["recall"] = bench_recall(args.pages, args.queries)
    if not args.skip_consolidate:
        result["consolidate"] = bench_consolidate(args.lines, args.judge)
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

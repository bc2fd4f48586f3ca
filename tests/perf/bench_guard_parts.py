"""What one guard check costs, part by part, in-process (no HTTP, no hook process).

For vaults of 1k and 10k synthetic decisions (bench_guard.make_vault) plus the sample
vault's own: the summary's embedding on the urgent lane (the int8 copy the guard uses,
and the fp32 embedder beside it), the decision scores and candidate selection, and the
judge on the chosen sentence pairs — p50/p99 ms each and in total, with the load
average. Side by side on the same checks: the decision as shipped (the judge skipped
when no sentence of the near decisions reaches ``SENTENCE_FLOOR``) and with every near
decision judged (``sentence_floor`` off, the previous behaviour); and the old way of
finding the near decisions' sentences (a walk over all of them) against the spans. The
hook's end-to-end figure (a new interpreter per call, HTTP) is bench_guard.py's.

Run: ``python tests/perf/bench_guard_parts.py [--sizes 1000 10000] [--checks 200]``.
Embedding 10k decisions and their sentences once takes a few minutes here
(``--workdir`` keeps the vaults and their vector caches).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.embedding import embedding_model
from desktop.flows.guard import SENTENCE_FLOOR, Activation, Guard
from desktop.service.hook import summarize
from desktop.vault.index import VaultIndex
from inference.runtime import Runtime
from tests.perf.bench_guard import make_vault, payloads

ROOT = Path(__file__).resolve().parents[2]


def pct(values: list[float]) -> dict[str, float]:
    s = sorted(values)
    return {
        "p50_ms": round(s[len(s) // 2], 2),
        "p99_ms": round(s[min(len(s) - 1, int(len(s) * 0.99))], 2),
    }


def summaries() -> list[str]:
    out = [summarize(p["tool_name"], p["tool_input"], p.get("cwd", "")) for p in payloads()]
    out += [
        "Move the billing ledger from SQLite to the shared Postgres cluster",
        "Deploy the release to production on Friday evening",
        "Replace the query cache with an in-process LRU",
        "Edit README.md: fix a typo in the install section",
        "Run the test suite with coverage and upload the report",
    ]
    return out


class TimedJudge:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.model_id, self.thresholds = inner.name, inner.model_id, inner.thresholds
        self.ms: list[float] = []
        self.pairs: list[int] = []

    def score(self, pairs: Any) -> Any:
        t0 = time.perf_counter()
        out = self.inner.score(pairs)
        self.ms.append((time.perf_counter() - t0) * 1000)
        self.pairs.append(len(pairs))
        return out


def bench(rt: Runtime, root: Path, checks: int) -> dict[str, Any]:
    index = VaultIndex(root)
    index.update()
    guard_embedder = rt.guard_embedder()
    t0 = time.perf_counter()
    guard = Guard(
        root,
        index=index,
        embed=lambda texts: rt.submit_embed(texts, embedder=guard_embedder).result(),
        model_id=embedding_model(guard_embedder).model_id,
    )
    guard.refresh()
    refresh_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    guard.refresh()
    refresh_same = time.perf_counter() - t0
    judge = TimedJudge(rt.direct_judge())
    on = Activation(active=True, mode="warn", threshold=0.5)
    texts = summaries()
    parts: dict[str, list[float]] = {
        "embed_int8": [],
        "embed_fp32": [],
        "scores_and_pick": [],
        "judge_when_called": [],
        "decide": [],
        "total": [],
        "decide_every_near_judged": [],
        "total_every_near_judged": [],
    }
    verdicts: dict[str, int] = {}
    verdicts_all: dict[str, int] = {}
    judged = judged_all = 0
    for i in range(checks):
        summary = texts[i % len(texts)]
        start = time.perf_counter()
        vec = rt.submit_embed([summary], urgent=True, embedder=guard_embedder).result()
        embedded = time.perf_counter()
        calls = len(judge.ms)
        verdict = guard.decide(
            vector=vec[0], session_id=f"s{i}", activation=on, summary=summary, judge=judge
        )
        done = time.perf_counter()
        judge_ms = sum(judge.ms[calls:])
        judged += len(judge.ms) > calls
        if len(judge.ms) > calls:
            parts["judge_when_called"].append(judge_ms)
        parts["embed_int8"].append((embedded - start) * 1000)
        parts["decide"].append((done - embedded) * 1000)
        parts["scores_and_pick"].append((done - embedded) * 1000 - judge_ms)
        parts["total"].append((done - start) * 1000)
        verdicts[verdict.verdict] = verdicts.get(verdict.verdict, 0) + 1
        guard.sentence_floor = -1.0  # the previous behaviour: every near decision judged
        calls = len(judge.ms)
        t1 = time.perf_counter()
        verdict = guard.decide(
            vector=vec[0], session_id=f"all{i}", activation=on, summary=summary, judge=judge
        )
        t2 = time.perf_counter()
        guard.sentence_floor = SENTENCE_FLOOR
        judged_all += len(judge.ms) > calls
        parts["decide_every_near_judged"].append((t2 - t1) * 1000)
        parts["total_every_near_judged"].append((embedded - start + t2 - t1) * 1000)
        verdicts_all[verdict.verdict] = verdicts_all.get(verdict.verdict, 0) + 1
        t1 = time.perf_counter()
        rt.submit_embed([summary], urgent=True).result()  # fp32, side by side
        parts["embed_fp32"].append((time.perf_counter() - t1) * 1000)
    snapshot = guard.decisions
    rows = list(range(min(3, len(snapshot.decisions))))
    lookup: dict[str, list[float]] = {"walk_all_sentences": [], "spans": []}
    for _ in range(50):
        t1 = time.perf_counter()
        wanted = set(rows)
        _ = [k for k, (row, _) in enumerate(snapshot.sentences) if row in wanted]
        t2 = time.perf_counter()
        snapshot.sentences_of(rows)
        t3 = time.perf_counter()
        lookup["walk_all_sentences"].append((t2 - t1) * 1000)
        lookup["spans"].append((t3 - t2) * 1000)
    index.close()
    decisions = len(guard.decisions.decisions)
    return {
        "decisions": decisions,
        "sentences": len(guard.decisions.sentences),
        "refresh_first_s": round(refresh_first, 1),
        "refresh_nothing_changed_ms": round(refresh_same * 1000, 1),
        **{k: pct(v) for k, v in parts.items() if v},
        "near_sentences_lookup_ms": {k: pct(v) for k, v in lookup.items()},
        "judge_pairs_per_call": round(sum(judge.pairs) / max(1, len(judge.pairs)), 2),
        "checks": checks,
        "checks_judged": judged,
        "checks_judged_every_near": judged_all,
        "verdicts": verdicts,
        "verdicts_every_near_judged": verdicts_all,
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--checks", type=int, default=200)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="antinomy-guard-parts-"))
    os.environ.setdefault("ANTINOMY_HOME", str(work / "home"))
    rt = Runtime()
    rt.start()
    rt.wait_ready(timeout=300)
    try:
        result = {
            "guard_embedder": rt.guard_embedder().name,
            "sizes": [bench(rt, make_vault(work, n), args.checks) for n in args.sizes],
        }
    finally:
        rt.close()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

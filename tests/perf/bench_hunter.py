"""Tension scan quality and speed on the shipped models, side by side in one run.

* each mode on the sample vault — classic, focus (on each known
  contradiction's first note, and on each near-miss's first note), whole
  vault: known contradictions shown (of 12), near-misses shown (of 5), false
  pairs shown among the other note pairs judged, time, and where it went
  (judge and sentence embedding vs the language model's descriptions);
* whole vault on a synthetic vault of ``--notes`` notes built from the
  benchmark corpus: time and note pairs judged per second.

Prints one JSON object. Run:
``python tests/perf/bench_hunter.py [--notes 1000]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import synthetic_vault  # noqa: E402

from desktop.flows.embedding import embedding_model  # noqa: E402
from desktop.flows.hunter import ScanRun, ScanSettings, scan  # noqa: E402
from desktop.resources import ensure_sample_vault  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.embedder import OnnxEmbedder  # noqa: E402
from inference.judge import OnnxJudge  # noqa: E402
from inference.llama_backend import LlamaGenerator  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

EXPECTED = json.loads((ROOT / "tests/data/sample_vault_expected.json").read_text())


def split(run: ScanRun) -> dict[str, float]:
    prompt = sum(a.prompt_seconds for a in run.attempts)
    total = sum(a.duration for a in run.attempts)
    return {
        "wall_s": round(run.duration, 3),
        "model_s": round(total, 3),
        "prompt_s": round(prompt, 3),
        "generation_s": round(total - prompt, 3),
        "prompt_share": round(prompt / total, 3) if total else 0.0,
        "tokens_in": run.tokens_in,
        "tokens_out": run.tokens_out,
    }


def quality(runs: list[ScanRun]) -> dict[str, Any]:
    known = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["contradictions"]}
    near = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["near_misses"]}
    dismissed = {frozenset(p) for p in EXPECTED["dismissed_pairs"]}
    shown = {p.key() for run in runs for p in run.pairs}
    judged = sum(r.note_pairs_judged for r in runs)
    false = shown - known - near
    return {
        "known_shown": f"{len(shown & known)}/{len(known)}",
        "near_misses_shown": len(shown & near),
        "false_pairs_shown": len(false),
        "note_pairs_judged": judged,
        "false_share_of_judged": round(len(false) / judged, 4) if judged else None,
        "precision": round(len(shown & known) / len(shown), 3) if shown else None,
        "dismissed_shown": len(shown & dismissed),
        "dropped": _sum_dropped(runs),
        "statuses": sorted({r.status for r in runs}),
        "described_by_model": sum(p.described_by == "model" for r in runs for p in r.pairs),
        "found": sorted(" ↔ ".join(sorted(k)) for k in shown & known),
        "false": sorted(" ↔ ".join(sorted(k)) for k in false),
        "seconds": round(sum(r.duration for r in runs), 1),
        "judge_s": round(sum(r.judge_seconds for r in runs), 1),
        "llm_s": round(sum(a.duration for r in runs for a in r.attempts), 1),
    }


def _sum_dropped(runs: list[ScanRun]) -> dict[str, int]:
    out: dict[str, int] = {}
    for run in runs:
        for reason, n in run.dropped.items():
            out[reason] = out.get(reason, 0) + n
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--describe", type=int, default=ScanSettings().describe)
    args = ap.parse_args()

    t0 = time.perf_counter()
    gen = LlamaGenerator(resolve_model("llm", None))
    emb = embedding_model(OnnxEmbedder(resolve_model("embedder", None)))
    judge = OnnxJudge(resolve_model("judge", None))
    out: dict[str, Any] = {"load_s": round(time.perf_counter() - t0, 2), "judge": judge.model_id}
    tmp = Path(tempfile.mkdtemp(prefix="bench-hunter-"))
    sample = ensure_sample_vault(tmp)
    index = VaultIndex(sample, embedding=emb)
    index.update()
    base = ScanSettings(describe=args.describe)

    classic = scan(index, gen, judge=judge, mode="classic", settings=base)
    focus_known = [
        scan(index, gen, judge=judge, mode="focus", focus=c["note_a"], settings=base)
        for c in EXPECTED["contradictions"]
    ]
    focus_near = [
        scan(index, gen, judge=judge, mode="focus", focus=c["note_a"], settings=base)
        for c in EXPECTED["near_misses"]
    ]
    whole = scan(index, gen, judge=judge, mode="whole-vault", settings=base)
    out["sample_vault"] = {
        "classic": quality([classic]) | {"notes_examined": classic.notes_examined},
        "focus_on_known": quality(focus_known),
        "focus_on_near_misses": quality(focus_near),
        "whole_vault": quality([whole])
        | {"pairs_considered": whole.pairs_considered, "excluded": len(whole.excluded)},
    }
    index.close()

    if not args.skip_synthetic:
        syn = tmp / "synthetic"
        synthetic_vault(syn, args.notes)
        t = time.perf_counter()
        big = VaultIndex(syn, embedding=emb)
        big.update()
        index_s = time.perf_counter() - t
        run = scan(
            big, gen, judge=judge, mode="whole-vault", settings=replace(base, max_pairs=10**6)
        )
        out["whole_vault_synthetic"] = {
            "notes": args.notes,
            "index_s": round(index_s, 1),
            "status": run.status,
            "scan_s": round(run.duration, 1),
            "note_pairs_judged": run.note_pairs_judged,
            "sentence_pairs_judged": run.sentence_pairs_judged,
            "note_pairs_per_s": round(run.note_pairs_judged / run.duration, 2),
            "judge_and_embedding_s": round(run.judge_seconds, 1),
            "llm_s": round(sum(a.duration for a in run.attempts), 1),
            "pairs_shown": len(run.pairs),
            "notes_examined": run.notes_examined,
            "excluded": len(run.excluded),
        }
        big.close()
    gen.close()
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

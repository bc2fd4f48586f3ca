"""Tension scan speed and quality on the shipped model, side by side in one run.

* classic scan on the sample vault: wall time (median of ``--repeat``), with
  and without the JSON schema (ratio), and the split of model time into prompt
  processing and generation (grammar checks happen inside generation: the
  schema-off run shows what they cost);
* precision and recall on the sample vault's known contradictions
  (``tests/data/sample_vault_expected.json``) for classic, focus (on each known
  contradiction's first note) and whole-vault scans;
* whole-vault scan on a synthetic vault of ``--notes`` notes built from the
  benchmark corpus: candidate pairs judged per second, batches, time split.

Prints one JSON object. Run:
``python tests/perf/bench_hunter.py [--repeat 5] [--notes 1000] [--max-pairs 60]``.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import notes as corpus_notes  # noqa: E402

from desktop.flows.embedding import embedding_model  # noqa: E402
from desktop.flows.hunter import ScanRun, ScanSettings, scan  # noqa: E402
from desktop.resources import ensure_sample_vault  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.embedder import OnnxEmbedder  # noqa: E402
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
    dismissed = {frozenset(p) for p in EXPECTED["dismissed_pairs"]}
    shown = {p.key() for run in runs for p in run.pairs}
    hits = shown & known
    return {
        "shown": len(shown),
        "true_positives": len(hits),
        "false_positives": len(shown - known),
        "known": len(known),
        "precision": round(len(hits) / len(shown), 3) if shown else None,
        "recall": round(len(hits) / len(known), 3),
        "dismissed_shown": len(shown & dismissed),
        "dropped": _sum_dropped(runs),
        "statuses": sorted({r.status for r in runs}),
        "found": sorted(" ↔ ".join(sorted(k)) for k in hits),
    }


def _sum_dropped(runs: list[ScanRun]) -> dict[str, int]:
    out: dict[str, int] = {}
    for run in runs:
        for reason, n in run.dropped.items():
            out[reason] = out.get(reason, 0) + n
    return out


def synthetic_vault(root: Path, n: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    texts = corpus_notes()
    types = ["tension", "substrate", "principle", "decision", None, None]
    for i in range(n):
        folder = root / f"Area {i % 25:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(rng.sample(texts, rng.randint(1, 3)))
        kind = types[i % len(types)]
        front = f"---\ntype: {kind}\n---\n" if kind else ""
        (folder / f"Note {i:05d}.md").write_text(f"{front}# Note {i:05d}\n\n{body}\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--notes", type=int, default=1000)
    ap.add_argument("--max-pairs", type=int, default=60)
    ap.add_argument("--skip-quality", action="store_true")
    ap.add_argument(
        "--quality-max-pairs", type=int, default=400, help="whole-vault pair budget for quality"
    )
    ap.add_argument("--skip-synthetic", action="store_true")
    args = ap.parse_args()

    t0 = time.perf_counter()
    gen = LlamaGenerator(resolve_model("llm", None))
    emb = embedding_model(OnnxEmbedder(resolve_model("embedder", None)))
    out: dict[str, Any] = {"load_s": round(time.perf_counter() - t0, 2)}
    tmp = Path(tempfile.mkdtemp(prefix="bench-hunter-"))
    sample = ensure_sample_vault(tmp)
    index = VaultIndex(sample, embedding=emb)
    index.update()

    base = ScanSettings()
    classic: dict[str, list[ScanRun]] = {"schema": [], "no_schema": []}
    for _ in range(args.repeat):  # interleaved, so both see the same machine load
        classic["schema"].append(scan(index, gen, mode="classic", settings=base))
        classic["no_schema"].append(
            scan(index, gen, mode="classic", settings=replace(base, constrain=False))
        )
    medians = {k: statistics.median(r.duration for r in runs) for k, runs in classic.items()}
    out["classic"] = {
        "notes_examined": classic["schema"][0].notes_examined,
        "median_s": {k: round(v, 3) for k, v in medians.items()},
        "schema_over_no_schema": round(medians["schema"] / medians["no_schema"], 3),
        "split_schema": split(classic["schema"][-1]),
        "split_no_schema": split(classic["no_schema"][-1]),
        "statuses_no_schema": sorted({r.status for r in classic["no_schema"]}),
    }

    if not args.skip_quality:
        focus_runs = []
        for c in EXPECTED["contradictions"]:
            focus_runs.append(scan(index, gen, mode="focus", focus=c["note_a"]))
        whole = scan(
            index,
            gen,
            mode="whole-vault",
            settings=replace(base, max_pairs=args.quality_max_pairs),
        )
        out["quality"] = {
            "classic": quality(classic["schema"][:1]),
            "focus": quality(focus_runs),
            "whole_vault": quality([whole])
            | {
                "pairs_considered": whole.pairs_considered,
                "batches": whole.batches,
                "excluded": len(whole.excluded),
                **split(whole),
            },
        }
    index.close()

    if not args.skip_synthetic:
        syn = tmp / "synthetic"
        synthetic_vault(syn, args.notes)
        t = time.perf_counter()
        big = VaultIndex(syn, embedding=emb)
        big.update()
        index_s = time.perf_counter() - t
        run = scan(big, gen, mode="whole-vault", settings=replace(base, max_pairs=args.max_pairs))
        model_s = sum(a.duration for a in run.attempts)
        out["whole_vault_synthetic"] = {
            "notes": args.notes,
            "index_s": round(index_s, 1),
            "status": run.status,
            "pairs_considered": run.pairs_considered,
            "batches": run.batches,
            "notes_examined": run.notes_examined,
            "excluded": len(run.excluded),
            "pairs_per_s": round(run.pairs_considered / run.duration, 3),
            "batches_per_s": round(run.batches / run.duration, 3),
            "planning_s": round(run.duration - model_s, 3),
            **split(run),
        }
        big.close()
    gen.close()
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

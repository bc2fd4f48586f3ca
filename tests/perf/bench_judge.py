"""The contradiction judge alone: quality on data it never saw, and its speed. Prints JSON.

    python tests/perf/bench_judge.py [--bigbench build/judge/bigbench-1.0.0.tar.gz]
        [--fp32 build/judge/export/judge-fp32.onnx]

* **Held-out BIG-bench tasks** (never trained on; only ``vitaminc_fact_verification``
  and ``fact_checker/fever`` were): ``presuppositions_as_nli`` (3-way) and
  ``analytic_entailment`` (entailment vs not; here every "contradiction" the
  judge says is a false alarm). Needs the bigbench sdist (``--bigbench``).
* **The sample vault** (never trained on): its 12 known contradictions at the
  sentence level (the two quotes) and the note level (the scan's own recipe,
  :class:`NoteJudge`), its 5 near-misses, and every other pair of scannable notes
  as the "random" background — how many of each pass the shipped threshold.
* **Speed**: ms per sentence pair at batch 1 and 16 on one thread, int8 (shipped)
  and, with ``--fp32``, the fp32 export side by side (ratio).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from itertools import combinations
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "judge"))

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter.records import ScanSettings  # noqa: E402
from desktop.flows.hunter.select import scannable  # noqa: E402
from desktop.flows.judging import NoteJudge  # noqa: E402
from desktop.resources import sample_vault_source  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from desktop.vault.notes import read_note  # noqa: E402
from inference.judge import CONTRADICTION, ENTAILMENT, Judge, JudgeSettings, OnnxJudge  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

EXPECTED = ROOT / "tests" / "data" / "sample_vault_expected.json"
LABELS = ("contradiction", "entailment", "neutral")


def auc(scores: list[float], positive: list[bool]) -> float | None:
    pos = [s for s, y in zip(scores, positive, strict=True) if y]
    neg = [s for s, y in zip(scores, positive, strict=True) if not y]
    if not pos or not neg:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return round(wins / (len(pos) * len(neg)), 4)


def prf(pred: list[bool], gold: list[bool]) -> dict[str, float]:
    tp = sum(p and g for p, g in zip(pred, gold, strict=True))
    fp = sum(p and not g for p, g in zip(pred, gold, strict=True))
    fn = sum(g and not p for p, g in zip(pred, gold, strict=True))
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def held_out(judge: Judge, bigbench: Path) -> dict[str, object]:
    from bigbench_data import analytic_entailment, presuppositions_as_nli

    out: dict[str, object] = {}
    rows = list(presuppositions_as_nli(bigbench))
    probs = judge.score([(r.a, r.b) for r in rows])
    gold = [LABELS.index(r.label) for r in rows]
    pred = probs.argmax(1).tolist()
    t = judge.thresholds.contradiction
    out["presuppositions_as_nli"] = {
        "examples": len(rows),
        "accuracy_3way": round(
            float(np.mean([g == p for g, p in zip(gold, pred, strict=True)])), 4
        ),
        "contradiction_auc": auc(probs[:, CONTRADICTION].tolist(), [g == 0 for g in gold]),
        "contradiction_at_threshold": prf(
            [bool(p >= t) for p in probs[:, CONTRADICTION]], [g == 0 for g in gold]
        ),
    }
    rows = list(analytic_entailment(bigbench))
    probs = judge.score([(r.a, r.b) for r in rows])
    ent = [r.label == "entailment" for r in rows]
    out["analytic_entailment"] = {
        "examples": len(rows),
        "entailment_auc": auc(probs[:, ENTAILMENT].tolist(), ent),
        "false_contradictions_at_threshold": int((probs[:, CONTRADICTION] >= t).sum()),
    }
    return out


def sample_vault(judge: Judge) -> dict[str, object]:
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    tmp = Path(tempfile.mkdtemp(prefix="antinomy-bench-judge-"))
    try:
        vault = tmp / "vault"
        shutil.copytree(sample_vault_source(), vault)
        embedding = load_embedding_model()
        index = VaultIndex(vault, embedding=embedding)
        index.update()
        t = judge.thresholds.contradiction
        known = expected["contradictions"]
        q = judge.score([(c["quote_a"], c["quote_b"]) for c in known])[:, CONTRADICTION]
        sentence_level = {
            "known_quote_pairs_passing": f"{int((q >= t).sum())}/{len(known)}",
            "probabilities": [round(float(x), 3) for x in q],
        }
        eligible, _ = scannable(index, ScanSettings())
        bodies = {}
        for path in eligible:
            try:
                bodies[path] = read_note(vault, path).body
            except Exception:
                continue
        nj = NoteJudge(judge, embedding)
        nj.prepare(bodies)
        known_pairs = {frozenset((c["note_a"], c["note_b"])) for c in known}
        near_pairs = {frozenset((c["note_a"], c["note_b"])) for c in expected["near_misses"]}
        all_pairs = [tuple(sorted(p)) for p in combinations(sorted(bodies), 2)]
        t0 = time.perf_counter()
        verdicts = nj.judge_pairs(all_pairs)
        seconds = time.perf_counter() - t0
        rows = []
        for v in verdicts:
            key = frozenset((v.path_a, v.path_b))
            kind = "known" if key in known_pairs else "near_miss" if key in near_pairs else "other"
            rows.append((kind, v.contradiction, v))
        score = {
            k: [s for kind, s, _ in rows if kind == k] for k in ("known", "near_miss", "other")
        }
        other_shown = sum(s >= t for s in score["other"])
        top_false = sorted((r for r in rows if r[0] == "other" and r[1] >= t), key=lambda r: -r[1])[
            :8
        ]
        note_level = {
            "threshold": t,
            "known_shown": f"{sum(s >= t for s in score['known'])}/{len(score['known'])}",
            "near_misses_shown": (
                f"{sum(s >= t for s in score['near_miss'])}/{len(score['near_miss'])}"
            ),
            "other_pairs_shown": f"{other_shown}/{len(score['other'])}",
            "other_share_shown": round(other_shown / max(1, len(score["other"])), 4),
            "auc_known_vs_other": auc(
                score["known"] + score["other"],
                [True] * len(score["known"]) + [False] * len(score["other"]),
            ),
            "auc_known_vs_near_miss": auc(
                score["known"] + score["near_miss"],
                [True] * len(score["known"]) + [False] * len(score["near_miss"]),
            ),
            "known_probabilities": [round(s, 3) for s in score["known"]],
            "near_miss_probabilities": [round(s, 3) for s in score["near_miss"]],
            "strongest_false_pairs": [
                {
                    "a": v.path_a,
                    "b": v.path_b,
                    "p": round(s, 3),
                    "quote_a": v.best.a.text[:90] if v.best else "",
                    "quote_b": v.best.b.text[:90] if v.best else "",
                }
                for _, s, v in top_false
            ],
            "note_pairs": len(all_pairs),
            "sentence_pairs_judged": nj.stats.sentence_pairs_judged,
            "seconds": round(seconds, 2),
        }
        index.close()
        return {"sentence_level": sentence_level, "note_level": note_level}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def speed(path: Path, label: str) -> dict[str, float]:
    judge = OnnxJudge(resolve_model("judge", path), JudgeSettings(threads=1))
    pair = (
        "Production releases go out every Friday between 14:00 and 16:00.",
        "Nothing ships to production after Thursday noon.",
    )
    out: dict[str, float] = {}
    for batch in (1, 16):
        judge.score([pair] * batch)  # warm
        times = []
        for _ in range(max(5, 80 // batch)):
            t0 = time.perf_counter()
            judge.score([pair] * batch)
            times.append((time.perf_counter() - t0) / batch * 1000)
        out[f"{label}_ms_per_pair_b{batch}"] = round(float(np.median(times)), 2)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bigbench", type=Path, help="bigbench sdist or folder (held-out tasks)")
    p.add_argument("--fp32", type=Path, help="the fp32 export, to compare with the shipped int8")
    p.add_argument("--judge", type=Path, help="a judge file instead of the shipped one")
    args = p.parse_args()
    model = resolve_model("judge", args.judge)
    judge = OnnxJudge(model)
    report: dict[str, object] = {"judge": judge.model_id, "thresholds": judge.thresholds.__dict__}
    report["sample_vault"] = sample_vault(judge)
    if args.bigbench:
        report["held_out_bigbench"] = held_out(judge, args.bigbench)
    sp = speed(model.path, "int8")
    if args.fp32:
        sp |= speed(args.fp32, "fp32")
        sp["fp32_over_int8_b1"] = round(sp["fp32_ms_per_pair_b1"] / sp["int8_ms_per_pair_b1"], 2)
        if args.bigbench:
            fp = OnnxJudge(resolve_model("judge", args.fp32))
            report["held_out_bigbench_fp32"] = held_out(fp, args.bigbench)
    report["speed_1_thread"] = sp
    print(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

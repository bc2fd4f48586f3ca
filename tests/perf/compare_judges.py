"""Two judge files side by side on what a user sees: the sample vault's whole-vault scan.

The candidate note pairs are the ones the whole-vault scan picks (nearest neighbours in the
cosine band); each is scored the scan's way (:class:`NoteJudge`: sentences, subject gate, best
sentence pairs by cosine, strongest contradiction). For each threshold: known contradictions,
near misses and other pairs that would be shown, per judge and for the mean of the two.

    python tests/perf/compare_judges.py OLD.onnx NEW.onnx [--min-cosine 0.3]

Prints JSON. Used to decide whether a newly trained judge replaces the shipped one.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter.records import ScanSettings  # noqa: E402
from desktop.flows.hunter.select import (  # noqa: E402
    scannable,
    shown_candidates,
    whole_vault_pairs,
)
from desktop.flows.judging import NoteJudge  # noqa: E402
from desktop.resources import ensure_sample_vault  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.judge import OnnxJudge, Thresholds  # noqa: E402
from inference.registry import resolve_model  # noqa: E402

EXPECTED = json.loads((ROOT / "tests/data/sample_vault_expected.json").read_text("utf-8"))
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("judges", type=Path, nargs=2, help="two judge ONNX files")
    ap.add_argument("--min-cosine", type=float, default=Thresholds().min_cosine)
    args = ap.parse_args()
    known = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["contradictions"]}
    near = {frozenset((c["note_a"], c["note_b"])) for c in EXPECTED["near_misses"]}
    root = ensure_sample_vault(Path(tempfile.mkdtemp(prefix="compare-judges-")))
    embedding = load_embedding_model()
    index = VaultIndex(root, embedding=embedding)
    try:
        index.update()
        settings = ScanSettings()
        eligible, _ = scannable(index, settings)
        keys, _ = whole_vault_pairs(index, eligible, settings)
    finally:
        index.close()
    keys, bodies = shown_candidates(root, keys)
    kinds = [
        "known" if frozenset(k) in known else "near" if frozenset(k) in near else "other"
        for k in keys
    ]
    scores: dict[str, np.ndarray] = {}
    for label, path in zip(("a", "b"), args.judges, strict=True):
        judge = OnnxJudge(resolve_model("judge", path))
        nj = NoteJudge(judge, embedding, thresholds=Thresholds(min_cosine=args.min_cosine))
        nj.prepare(bodies)
        scores[label] = np.array([v.contradiction for v in nj.judge_pairs(keys)])
        judge.close()
    scores["mean"] = (scores["a"] + scores["b"]) / 2
    out: dict[str, object] = {
        "judges": {"a": str(args.judges[0]), "b": str(args.judges[1])},
        "min_cosine": args.min_cosine,
        "candidates": {k: kinds.count(k) for k in ("known", "near", "other")},
    }
    for label, s in scores.items():
        out[label] = {
            f"{t}": {
                k: int(sum(1 for i, x in enumerate(kinds) if x == k and s[i] >= t))
                for k in ("known", "near", "other")
            }
            for t in THRESHOLDS
        } | {"known_scores": [round(float(s[i]), 3) for i, x in enumerate(kinds) if x == "known"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

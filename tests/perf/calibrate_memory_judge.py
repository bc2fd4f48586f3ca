"""Calibrate memory's entailment threshold with a judge (desktop/flows/memory/support.py).

Scores every pair of ``tests/data/memory/support_calibration.json`` (22 faithful
rephrasings, 20 with an invented or changed detail or the wrong line) as
``judge.score([(cited, fact)])`` and prints, per threshold, how many of each the
entailment check would let through, plus the contradiction column. Then, for
``tests/data/memory/dedup_calibration.json``, the entailment of same-meaning and
different pairs (dedup.py's ENTAILMENT_BOTH_WAYS). Prints JSON.

Run: ``python tests/perf/calibrate_memory_judge.py [--judge FILE.onnx]``
(default: the shipped judge; its entailment threshold is in ``models/manifest.toml``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from inference.judge import CONTRADICTION, ENTAILMENT

DATA = Path(__file__).resolve().parents[1] / "data" / "memory"
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--judge", metavar="ONNX", help="judge model file (default: the installed one)")
    args = p.parse_args()
    from inference.judge import OnnxJudge
    from inference.registry import resolve_model

    judge = OnnxJudge(resolve_model("judge", args.judge))
    pairs = json.loads((DATA / "support_calibration.json").read_text())["pairs"]
    scores = judge.score([(x["cited"], x["fact"]) for x in pairs])
    out: dict[str, Any] = {"load_average": [round(v, 2) for v in os.getloadavg()]}
    rows = []
    for t in THRESHOLDS:
        faithful = sum(
            1 for x, s in zip(pairs, scores, strict=True) if x["supported"] and s[ENTAILMENT] >= t
        )
        invented = sum(
            1
            for x, s in zip(pairs, scores, strict=True)
            if not x["supported"] and s[ENTAILMENT] >= t
        )
        rows.append({"threshold": t, "faithful_kept": faithful, "invented_kept": invented})
    out["entailment"] = rows
    out["contradiction_of_invented"] = sorted(
        round(float(s[CONTRADICTION]), 3)
        for x, s in zip(pairs, scores, strict=True)
        if not x["supported"]
    )
    out["contradiction_of_faithful"] = sorted(
        round(float(s[CONTRADICTION]), 3)
        for x, s in zip(pairs, scores, strict=True)
        if x["supported"]
    )
    dedup = json.loads((DATA / "dedup_calibration.json").read_text())["pairs"]
    dscores = judge.score([(x["a"], x["b"]) for x in dedup])
    out["dedup_entailment_same"] = sorted(
        round(float(s[ENTAILMENT]), 3) for x, s in zip(dedup, dscores, strict=True) if x["same"]
    )
    out["dedup_entailment_different"] = sorted(
        round(float(s[ENTAILMENT]), 3) for x, s in zip(dedup, dscores, strict=True) if not x["same"]
    )
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

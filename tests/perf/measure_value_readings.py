"""How often the value reading (``desktop.flows.value_compare.compare_quantities``) is right.

On the labelled data we write (never the sample vault or the documentation vaults we check
on), counts what the reading says of each sentence pair against its label:

* ``typed``: the typed sentence pairs (``scripts/judge/scenarios/*-pairs-*.json``), all of
  them and those of a rule against a statement of fact (``rule_like`` on one side only,
  the pairs the note-level model's value features count);
* ``written``: the marked clashes and traps of the written note pairs
  (``*-notes-*.json``): a clash is a contradiction, a trap looks like one and is not.

Per split (``train``; ``val``, held out by topic) and verdict (``conflict``,
``compatible``, ``differ``): how many contradictions (``C``) and other pairs (``n``) got it,
and the precision of ``conflict``. Prints JSON; ``--show conflict|compatible`` also lists
the training pairs a verdict gets wrong, to read.

    python tests/perf/measure_value_readings.py [--show conflict|compatible]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "judge"))

from synth import heldout, load_scenarios  # noqa: E402

from desktop.flows.note_features import rule_like  # noqa: E402
from desktop.flows.value_compare import compare_quantities  # noqa: E402

VERDICTS = ("conflict", "compatible", "differ")


def _pairs() -> list[tuple[str, str, str, bool, str, str]]:
    """``(part, split, a, b, contradicts, why)`` of every labelled sentence pair."""
    out = []
    for sc in load_scenarios():
        split = "val" if heldout(sc) else "train"
        if sc.get("kind") == "pairs":
            for p in sc.get("pairs") or []:
                out.append(
                    ("typed", split, p["a"], p["b"], p["label"] == "contradiction", p.get("why"))
                )
        elif sc.get("kind") == "notes":
            for key in ("clash", "traps"):
                for p in sc.get(key) or []:
                    out.append(("written", split, p["a"], p["b"], key == "clash", p.get("why")))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--show", choices=("conflict", "compatible"))
    args = ap.parse_args(argv)
    counts: Counter[tuple[str, str, str, bool]] = Counter()
    wrong = []
    for part, split, a, b, contradicts, why in _pairs():
        verdict = compare_quantities(a, b)
        groups = [part]
        if part == "typed" and rule_like(a) != rule_like(b):
            groups.append("typed_rule_vs_fact")
        for g in groups:
            counts[(g, split, verdict, contradicts)] += 1
        mistaken = (verdict == "conflict" and not contradicts) or (
            verdict == "compatible" and contradicts
        )
        if args.show == verdict and split == "train" and mistaken:
            wrong.append({"part": part, "a": a, "b": b, "why": why})
    report: dict[str, object] = {}
    for g in ("typed", "typed_rule_vs_fact", "written"):
        per_split = {}
        for split in ("train", "val"):
            row: dict[str, object] = {
                v: f"{counts[(g, split, v, True)]}C/{counts[(g, split, v, False)]}n"
                for v in VERDICTS
            }
            c, n = counts[(g, split, "conflict", True)], counts[(g, split, "conflict", False)]
            row["conflict_precision"] = round(c / (c + n), 3) if c + n else None
            per_split[split] = row
        report[g] = per_split
    if args.show:
        report["wrong"] = wrong
    print(json.dumps(report, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

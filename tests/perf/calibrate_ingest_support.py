"""Calibrate ingest's support check on hand-labelled summaries of public documentation.

Reads ``tests/data/ingest/summary_calibration.json`` (faithful summaries, and summaries
with an invented detail, quantifier, link or fact) and, for each, the documentation
page it is about (``--docs``: a folder holding each project's repository under its
name: ``uv``, ``mkdocs-material``, ``rustbook``, ``jekyll``, ``fastapi``). With the
shipped judge at its calibrated ``entailment`` threshold, prints for each coverage
threshold (:func:`desktop.flows.ingest.support.coverage`) how many faithful and how
many invented summaries the check keeps, and each claim's verdict at the shipped
setting. Prints one JSON object.

Run: ``python tests/perf/calibrate_ingest_support.py --docs /path/to/repositories``
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.ingest.read import read_source
from desktop.flows.ingest.sentences import split_sentences
from desktop.flows.ingest.support import MIN_COVERAGE, SourceSupport

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest" / "summary_calibration.json"
THRESHOLDS = (0.5, 0.6, 0.7, 0.8, 0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=Path, required=True)
    args = parser.parse_args()
    from desktop.cli.ingest_cmd import load_judge
    from desktop.flows.settings import resolve

    judge = load_judge(resolve().runtime)
    if judge is None:
        raise SystemExit("the judge is not available")
    data = json.loads(DATA.read_text(encoding="utf-8"))
    sources = {}
    for name, rel in data["documents"].items():
        source = read_source(args.docs / name / rel)
        sources[name] = (split_sentences(source.text), source.text)
    table: dict[str, dict[str, int]] = {}
    rows: list[dict[str, Any]] = []
    for t in THRESHOLDS:
        kept = {"faithful": 0, "invented": 0}
        for claim in data["claims"]:
            sentences, text = sources[claim["doc"]]
            gate = SourceSupport(sentences, text=text, judge=judge, min_coverage=t)
            verdict = gate.check(claim["text"])
            if verdict.supported:
                kept["faithful" if claim["faithful"] else "invented"] += 1
            if t == MIN_COVERAGE:
                rows.append(
                    {
                        "faithful": claim["faithful"],
                        "kept": verdict.supported,
                        "reason": verdict.reason,
                        "entailment": verdict.entailment,
                        "text": claim["text"],
                    }
                )
        table[f"{t:.1f}"] = kept
    judge.close()
    print(
        json.dumps(
            {
                "judge": judge.name,
                "entailment_threshold": judge.thresholds.entailment,
                "faithful": sum(1 for c in data["claims"] if c["faithful"]),
                "invented": sum(1 for c in data["claims"] if not c["faithful"]),
                "kept_by_coverage": table,
                "at_shipped_coverage": rows,
            },
            indent=1,
            ensure_ascii=False,
        )
    )


if __name__ == "__main__":
    main()

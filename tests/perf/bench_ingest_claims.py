"""What an ingest writes, claim by claim, with the shipped models: for reading by a person.

Each document given is planned and applied (``--yes``) into its own fresh copy of the
sample vault. Printed per document: status, whether the first answer was accepted,
the seconds of planning and applying, the source note's title and frontmatter, every
page written with its name, and every claim line written on it (the added lines that
state something), plus the claims ingest dropped and why. Totals: plans accepted on
the first answer, plans applied, pages, claim lines, and page names refused by
:func:`desktop.flows.ingest.names.page_name_problem`.

Whether a written claim is supported by its source is read by a person, not computed
here: the output is what they read. Prints one JSON object.

Run: ``python tests/perf/bench_ingest_claims.py FILE [FILE …]``
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.ingest import apply_ingest, plan_ingest
from desktop.flows.ingest.validate import claim_lines
from desktop.resources import ensure_sample_vault
from desktop.vault.frontmatter import parse_frontmatter, split_frontmatter
from desktop.vault.index import VaultIndex


def name_problem(name: str) -> str | None:
    try:
        from desktop.flows.ingest.names import page_name_problem
    except ImportError:  # a checkout without the name rules (comparing revisions)
        return None
    return page_name_problem(name)


def run_one(path: Path, engine: Any, judge: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        vault = ensure_sample_vault(Path(tmp))
        index = VaultIndex(vault)
        index.update()
        started = time.perf_counter()
        try:
            report = plan_ingest(vault, path, engine=engine, judge=judge, index=index)
        finally:
            index.close()
        planned = time.perf_counter() - started
        row: dict[str, Any] = {
            "file": str(path),
            "status": report.status,
            "first_answer_accepted": report.status == "planned" and not report.errors_first,
            "errors_first": list(report.errors_first),
            "errors_after_repair": list(report.errors_after_repair),
            "plan_seconds": round(planned, 2),
            "judge_seconds": report.seconds_judge,
            "dropped_claims": [
                {"page": d.page, "claim": d.claim, "reason": d.reason}
                for d in getattr(report, "dropped_claims", ())  # absent in earlier revisions
            ],
        }
        if report.status != "planned" or report.plan is None or report.preview is None:
            return row
        originals = {
            w.path: split_frontmatter((vault / w.path).read_text(encoding="utf-8")).body
            for w in report.plan.writes
            if w.action == "replace"
        }
        applied_at = time.perf_counter()
        apply_ingest(vault, report, approval=report.preview.approval)
        row["apply_seconds"] = round(time.perf_counter() - applied_at, 2)
        pages = []
        for write in report.plan.writes:
            text = (vault / write.path).read_text(encoding="utf-8")
            if write.path == report.source_note:
                body = split_frontmatter(text).body
                row["source_note"] = {
                    "path": write.path,
                    "frontmatter": parse_frontmatter(text),
                    "body_head": body[:400],
                }
                continue
            before = originals.get(write.path, "")
            added = [
                line[1:]
                for line in difflib.unified_diff(
                    before.splitlines(), split_frontmatter(text).body.splitlines(), lineterm="", n=0
                )
                if line.startswith("+") and not line.startswith("+++")
            ]
            name = Path(write.path).stem
            pages.append(
                {
                    "path": write.path,
                    "action": write.action,
                    "name_problem": name_problem(name),
                    "summary": parse_frontmatter(text).get("summary"),
                    "claims": claim_lines("\n".join(added)),
                }
            )
        row["pages"] = pages
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    from desktop.cli.ingest_cmd import load_judge
    from desktop.flows.settings import resolve
    from inference.engines import LazyGenerator

    runtime = resolve().runtime
    engine = LazyGenerator(runtime)
    judge = load_judge(runtime)
    rows = []
    try:
        for path in args.files:
            rows.append(run_one(path.resolve(), engine, judge))
    finally:
        engine.close()
        if judge is not None:
            judge.close()
    written = [r for r in rows if "pages" in r]
    result = {
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "model": engine.model_name,
        "judge": judge.name if judge is not None else "not available",
        "documents": rows,
        "totals": {
            "documents": len(rows),
            "first_answer_accepted": sum(1 for r in rows if r["first_answer_accepted"]),
            "applied": len(written),
            "rejected": sum(1 for r in rows if r["status"] == "rejected"),
            "pages": sum(len(r["pages"]) for r in written),
            "claim_lines": sum(len(p["claims"]) for r in written for p in r["pages"]),
            "claims_dropped": sum(len(r["dropped_claims"]) for r in rows),
            "names_refused_by_rules": sum(
                1 for r in written for p in r["pages"] if p["name_problem"]
            ),
            "plan_seconds_mean": round(sum(r["plan_seconds"] for r in rows) / len(rows), 2),
        },
    }
    print(json.dumps(result, indent=1, ensure_ascii=False, default=str))


if __name__ == "__main__":
    main()

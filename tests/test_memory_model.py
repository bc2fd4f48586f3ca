"""End to end on the shipped models: the recorded 4-session, 204-turn conversation.

Prints (run with ``-s``) how many of the 12 planted facts reached the right
page. It asserts what must hold whatever the model's quality: every written
fact cites a user line and passes the support check against the raw text, no
withdrawn or secret text reaches a page, no page name is refused by the name
rules, the run ends with a definite status and leaves nothing pending; and,
since extraction is in code, that at least 10 of the 12 planted facts reach a
page named for what they are about (tests/perf/bench_memory.py measures it).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from desktop.flows.memory import capture_turn, consolidate, pending_batches, subject_pages
from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.names import name_problem
from desktop.flows.memory.support import SUPPORT_THRESHOLD, support_ratio, unsupported_names
from tests.memory_helpers import DATA, all_files

pytestmark = pytest.mark.model


def test_recorded_conversation_end_to_end(tmp_path: Path, runtime: object) -> None:
    data = json.loads((DATA / "conversation.json").read_text(encoding="utf-8"))
    for t in data["turns"]:
        ts = datetime.fromisoformat(t["ts"].replace("Z", "+00:00"))
        capture_turn(tmp_path, role=t["role"], text=t["text"], session_id=t["session"], ts=ts)
    engine = runtime.queued_generator()  # type: ignore[attr-defined]
    embedder = runtime.queued_embedder()  # type: ignore[attr-defined]
    reports = []
    for _ in range(5):  # the input budget may leave some for a next run
        report = consolidate(tmp_path, engine, embedder=embedder, force=True)
        reports.append(report)
        if report.status != "ok" and report.status != "empty":
            break
        if not pending_batches(tmp_path):
            break
    statuses = [r.status for r in reports]
    assert statuses[-1] in ("ok", "empty", "nothing"), statuses
    accepted = [f for r in reports for f in r.accepted]
    rejected = [f for r in reports for f in r.rejected]
    store = RawStore(tmp_path)
    page_facts = [(p, f) for p in subject_pages(tmp_path) for f in p.facts]
    assert len(page_facts) == len(accepted)
    for page, fact in page_facts:
        lines = [store.line(c) for c in fact.citations]
        assert all(line is not None and not line.withdrawn for line in lines)
        assert any(line is not None and line.role == "user" for line in lines)
        cited = "\n".join(line.text for line in lines if line is not None)
        allowed = (page.name, fact.section)
        assert support_ratio(fact.text, cited, allowed=allowed) >= SUPPORT_THRESHOLD
        assert not unsupported_names(fact.text, cited, allowed=allowed)
    disk = "\n".join(
        p.read_text(encoding="utf-8", errors="replace")
        for p in all_files(tmp_path)
        if p.suffix in (".md", ".tsv", ".jsonl", ".json", ".txt")
    )
    assert "Pixel" not in disk and "PIN hint" not in disk
    assert "ghp_8kT3mV6xQ1zR4wY7nB2cF5hJ9pL0sD3gA6eU" not in disk
    for page in subject_pages(tmp_path):
        assert name_problem(page.name) is None, page.name
    reached = []
    for planted in data["planted"]:
        hits = [
            f
            for p, f in page_facts
            if all(k in (p.name + " " + f.text).lower() for k in planted["keywords"])
            and any(w in p.name.lower() for w in planted["subjects"])
        ]
        if hits:
            reached.append((planted["text"], planted["date"], [h.date for h in hits]))
    summary = {
        "runs": statuses,
        "steps": sum(r.steps for r in reports),
        "lines_read": sum(r.lines_read for r in reports),
        "seconds": round(sum(r.seconds for r in reports), 1),
        "accepted": len(accepted),
        "rejected": len(rejected),
        "rejected_by_reason": dict(Counter(f.reason for f in rejected)),
        "duplicates": sum(r.duplicates for r in reports),
        "verbatim": sum(1 for f in accepted if f.wording == "verbatim"),
        "planted_reached": f"{len(reached)}/{len(data['planted'])}",
        "reached": reached,
        "accepted_facts": [f"{f.subject}: {f.text} {f.citations}" for f in accepted],
    }
    print("\nMEMORY END-TO-END " + json.dumps(summary, indent=1, ensure_ascii=False))
    assert len(reached) >= 10, summary

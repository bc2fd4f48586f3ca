"""Previewed plans waiting for approval: ``antinomy ingest FILE`` then ``--approve HASH``.

The plan is saved with its tension candidates under
``.antinomy/ingest/pending/<source sha256>.json``, so approving it later
applies exactly what was previewed — the model is not asked again.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from desktop.flows.ingest.errors import NoPendingPlan
from desktop.flows.ingest.run import IngestReport
from desktop.flows.ingest.tensions import TensionCandidate, save_candidates
from desktop.vault.layout import state_dir, vault_root
from desktop.vault.transactions import (
    ApplyResult,
    OnChange,
    apply_plan,
    plan_from_json,
    plan_to_json,
)
from foundation import atomic


def pending_path(root: Path, sha256: str) -> Path:
    return state_dir(root, "ingest", "pending") / f"{sha256}.json"


def save_pending(vault: str | Path, report: IngestReport) -> Path:
    if report.plan is None:
        raise ValueError("only a planned ingest can wait for approval")
    root = vault_root(vault)
    target = pending_path(root, report.source.sha256)
    record: dict[str, Any] = {
        "origin": report.source.origin,
        "plan": plan_to_json(report.plan),
        "candidates": [asdict(c) for c in report.contradictions],
    }
    return atomic.write_json(target, record, indent=None, newline=False)


def apply_pending(
    vault: str | Path, sha256: str, *, approval: str, on_change: OnChange | None = None
) -> ApplyResult:
    """Apply the previewed plan of the source with this sha256, if ``approval`` matches it."""
    root = vault_root(vault)
    path = pending_path(root, sha256)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        plan = plan_from_json(record["plan"])
        candidates = [TensionCandidate(**c) for c in record["candidates"]]
    except FileNotFoundError:
        raise NoPendingPlan(
            "No previewed plan is waiting for this file — run `antinomy ingest FILE` first "
            "to see the plan and its approval hash."
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise NoPendingPlan(
            f"The saved plan {path} cannot be read ({exc}) — run `antinomy ingest FILE` again."
        ) from None
    result = apply_plan(root, plan, approval=approval, on_change=on_change)
    save_candidates(root, result.operation_id, candidates, result.applied_at)
    path.unlink(missing_ok=True)
    return result

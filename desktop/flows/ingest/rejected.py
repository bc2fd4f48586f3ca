"""Rejected plans: saved with their errors under ``.antinomy/rejected-plans/``, path returned.

TheKnowledge saved its rejected plans but never showed where; every caller
of :func:`save_rejected_plan` prints or links the path it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.flows.ingest.compose import PageDraft
from desktop.flows.ingest.read import SourceText
from desktop.vault.layout import state_dir
from foundation import atomic


def rejected_dir(root: Path) -> Path:
    return state_dir(root, "rejected-plans")


def save_rejected_plan(
    root: Path,
    *,
    ingest_id: str,
    source: SourceText,
    errors_first: Sequence[str],
    errors_after_repair: Sequence[str],
    raw_answers: Sequence[str],
    pages: Sequence[PageDraft],
    model: str,
) -> Path:
    record: dict[str, Any] = {
        "ingest_id": ingest_id,
        "saved_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": {"origin": source.origin, "sha256": source.sha256, "title": source.title},
        "model": model,
        "errors_first": list(errors_first),
        "errors_after_repair": list(errors_after_repair),
        "raw_answers": list(raw_answers),
        "pages": [asdict(p) for p in pages],
    }
    target = rejected_dir(root) / f"{ingest_id}.json"
    return atomic.write_json(target, record, indent=1, newline=False)

"""Ingest: a source document becomes cited pages through a validated, previewed plan.

The Qt-free API the CLI and the GUI Ingest panel use:

- :func:`read_source` → :class:`SourceText` (or :class:`SourceRefused` saying why);
- :func:`plan_ingest` (engine, judge or None, index, ``stop``, ``progress``)
  → :class:`IngestReport` with the plan, its preview and approval hash, the
  tension candidates, or the path of the saved rejected plan;
- :func:`apply_ingest` — one journaled transaction, undoable from History;
- :func:`save_pending` / :func:`apply_pending` — approve a previewed plan later;
- :func:`load_candidates` / :func:`standing_candidates` — tension candidates of applied
  ingests (all of them / those not undone: the Tensions panel).
"""

from __future__ import annotations

from desktop.flows.ingest.errors import NoPendingPlan, SourceRefused
from desktop.flows.ingest.pending import apply_pending, save_pending
from desktop.flows.ingest.read import SourceText, read_source
from desktop.flows.ingest.run import (
    IngestReport,
    IngestSettings,
    apply_ingest,
    plan_ingest,
)
from desktop.flows.ingest.tensions import TensionCandidate, load_candidates, standing_candidates

__all__ = [
    "IngestReport",
    "IngestSettings",
    "NoPendingPlan",
    "SourceRefused",
    "SourceText",
    "TensionCandidate",
    "apply_ingest",
    "apply_pending",
    "load_candidates",
    "plan_ingest",
    "read_source",
    "save_pending",
    "standing_candidates",
]

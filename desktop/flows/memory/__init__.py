"""Memory: capture conversations, consolidate them into cited subject pages, recall.

The Qt-free API the GUI Memory panel and the endpoint use (all take the vault
folder; the ones that call a model block — run them on a worker thread):

- :func:`capture_turn`, :func:`import_transcript`, :func:`end_session`,
  :func:`close_open_batch` — capture (raw batches, secrets masked);
- :func:`pending_batches` — closed and open batches with their pending lines;
- :func:`consolidate` (``stop``, ``progress``) → :class:`Report`;
  :func:`last_report`;
- :func:`rejected_fragments`, :func:`quarantined_fragments`, :func:`requeue_fragment`;
- :func:`subject_pages`;
- :func:`recall` / :class:`RecallIndex`.
"""

from __future__ import annotations

from desktop.flows.memory.api import (
    PendingBatch,
    pending_batches,
    quarantined_fragments,
    rejected_fragments,
    requeue_fragment,
    subject_pages,
)
from desktop.flows.memory.capture import (
    CaptureResult,
    capture_turn,
    close_open_batch,
    end_session,
)
from desktop.flows.memory.consolidate import consolidate, last_report
from desktop.flows.memory.recall import RecallHit, RecallIndex, RecallResult, recall
from desktop.flows.memory.records import AcceptedFact, MemorySettings, Report
from desktop.flows.memory.rejected import RejectedFragment
from desktop.flows.memory.transcript import ImportReport, import_transcript

__all__ = [
    "AcceptedFact",
    "CaptureResult",
    "ImportReport",
    "MemorySettings",
    "PendingBatch",
    "RecallHit",
    "RecallIndex",
    "RecallResult",
    "RejectedFragment",
    "Report",
    "capture_turn",
    "close_open_batch",
    "consolidate",
    "end_session",
    "import_transcript",
    "last_report",
    "pending_batches",
    "quarantined_fragments",
    "recall",
    "rejected_fragments",
    "requeue_fragment",
    "subject_pages",
]

"""Listing helpers for the GUI Memory panel and the CLI (Qt-free, cheap, no model)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.pages import SubjectPage, read_pages
from desktop.flows.memory.progress import read_progress
from desktop.flows.memory.quarantine import REASON as QUARANTINE_REASON
from desktop.flows.memory.records import MemorySettings
from desktop.flows.memory.rejected import RejectedFragment, RejectedStore
from desktop.vault.layout import vault_root


@dataclass(frozen=True)
class PendingBatch:
    batch_id: str
    closed: bool
    close_reason: str
    lines: int
    #: Lines not yet consolidated (withdrawn ones included until consumed).
    pending_lines: int
    withdrawn_lines: int
    #: ``.antinomy/raw/<id>.tsv``
    path: str


def pending_batches(
    vault: str | Path, *, settings: MemorySettings | None = None
) -> list[PendingBatch]:
    """Batches that still hold unconsolidated lines (the open batch too, if it has lines)."""
    root = vault_root(vault)
    s = settings or MemorySettings()
    store = RawStore(root)
    done = read_progress(root, s.memory_folder).through
    out = []
    for batch_id in store.batch_ids():
        batch = store.read(batch_id)
        pending = [line for line in batch.lines if line.number > done.get(batch_id, 0)]
        if not pending:
            continue
        out.append(
            PendingBatch(
                batch_id=batch_id,
                closed=batch.closed,
                close_reason=batch.close_reason,
                lines=len(batch.lines),
                pending_lines=len(pending),
                withdrawn_lines=sum(1 for line in pending if line.withdrawn),
                path=str(store.path(batch_id).relative_to(root)),
            )
        )
    return out


def rejected_fragments(
    vault: str | Path, *, settings: MemorySettings | None = None
) -> list[tuple[RejectedFragment, str]]:
    """Every rejected fragment with its state: ``rejected``, ``requeued`` or ``reconsidered``."""
    root = vault_root(vault)
    s = settings or MemorySettings()
    store = RejectedStore(root)
    requested = store.requested()
    done = read_progress(root, s.memory_folder).requeues
    out = []
    for frag in store.all():
        state = (
            "reconsidered"
            if frag.fragment_id in done
            else ("requeued" if frag.fragment_id in requested else "rejected")
        )
        out.append((frag, state))
    return out


def quarantined_fragments(
    vault: str | Path, *, settings: MemorySettings | None = None
) -> list[tuple[RejectedFragment, str]]:
    """The statements set aside after unreadable routing answers (:mod:`.quarantine`),
    with their state; each one's ``proposal["answers"]`` holds the model's raw answers."""
    return [
        (frag, state)
        for frag, state in rejected_fragments(vault, settings=settings)
        if frag.reason == QUARANTINE_REASON
    ]


def requeue_fragment(vault: str | Path, fragment_id: str) -> RejectedFragment:
    """Put a rejected or quarantined fragment's lines back in the queue of the next run."""
    store = RejectedStore(vault_root(vault))
    frag = store.get(fragment_id)
    store.request(fragment_id, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return frag


def subject_pages(
    vault: str | Path, *, settings: MemorySettings | None = None
) -> list[SubjectPage]:
    s = settings or MemorySettings()
    return read_pages(vault_root(vault), s.subjects_folder)

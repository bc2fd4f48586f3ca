"""History of completed operations, and undo.

Undo builds the inverse plan from the journal — each file back to its
before-image, guarded by the hash the operation left it with — and applies it
as a new operation (type ``undo``), so an undo is itself in the history and
can be undone (redo). A file changed since the operation refuses the undo,
naming it: a later edit is never overwritten.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from desktop.vault.errors import VaultChanged, VaultError
from desktop.vault.layout import approval_identity, vault_root
from desktop.vault.transactions import journal
from desktop.vault.transactions.apply import ApplyResult, FileChange, apply_locked, file_changes
from desktop.vault.transactions.errors import NothingToUndo, UnknownOperation
from desktop.vault.transactions.fsio import current_sha256, sha256_bytes
from desktop.vault.transactions.journal import JournalRecord
from desktop.vault.transactions.lock import vault_lock
from desktop.vault.transactions.plan import MAX_SUMMARY_CHARS, Plan, Write, approval_hash
from desktop.vault.transactions.preview import resolve_targets
from desktop.vault.transactions.recover import OnChange, notify, recover_pending


@dataclass(frozen=True)
class HistoryEntry:
    operation_id: str
    operation_type: str
    summary: str
    applied_at: str
    changes: tuple[FileChange, ...]
    #: The operation this one undid, if it is an undo.
    undoes: str | None
    #: The undo currently in effect against this operation, if any.
    undone_by: str | None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(c.path for c in self.changes)


def list_history(root: str | Path) -> tuple[HistoryEntry, ...]:
    """Completed operations, newest first. Reads only; needs no lock."""
    records = _completed(vault_root(root))
    undone = _undone_by(records)
    return tuple(
        HistoryEntry(
            operation_id=r.operation_id,
            operation_type=r.operation_type,
            summary=r.summary,
            applied_at=r.finished_at or r.started_at,
            changes=file_changes(r),
            undoes=r.undoes,
            undone_by=undone.get(r.operation_id),
        )
        for r in reversed(records)
    )


def build_undo_plan(root: str | Path, operation_id: str) -> Plan:
    """The plan that takes ``operation_id`` back, guarded by the hashes it left."""
    root = vault_root(root)
    records = _completed(root)
    record = next((r for r in records if r.operation_id == operation_id), None)
    if record is None:
        raise UnknownOperation(
            f"No applied operation {operation_id!r} in this vault — `antinomy tx history` lists"
            " them."
        )
    by = _undone_by(records).get(operation_id)
    if by is not None:
        raise NothingToUndo(
            f"Operation {operation_id} was already undone by {by} — undo {by} to bring it back."
        )
    writes = [w for i in range(len(record.entries)) if (w := _inverse(root, record, i))]
    if not writes:
        raise NothingToUndo(f"Operation {operation_id} changed no file; there is nothing to undo.")
    summary = f"Undo {operation_id}: {record.summary}"
    if len(summary) > MAX_SUMMARY_CHARS:
        summary = summary[: MAX_SUMMARY_CHARS - 1] + "…"
    return Plan(_undo_id(root, operation_id), "undo", summary, tuple(writes))


def undo_operation(
    root: str | Path, operation_id: str, *, on_change: OnChange | None = None
) -> ApplyResult:
    """Undo a completed operation as a new operation; refuses if a file changed since.

    Takes the mutation lock (``VaultBusy`` if another writer has it). Raises
    ``VaultChanged`` naming the files edited after the operation (nothing is
    written), :class:`UnknownOperation`, :class:`NothingToUndo`.
    """
    root = vault_root(root)
    with vault_lock(root):
        recovered = recover_pending(root)
        plan = build_undo_plan(root, operation_id)
        changed = [
            w.path
            for w, t in zip(plan.writes, resolve_targets(root, plan), strict=True)
            if current_sha256(t) != w.expected_sha256
        ]
        if changed:
            raise VaultChanged(
                f"Cannot undo {operation_id}: {', '.join(changed)} changed after it was applied,"
                " and undo never overwrites a later edit. Nothing was written — edit the note by"
                " hand, or undo the later change first.",
                tuple(changed),
            )
        undone = journal.load_record(root, operation_id)
        result = apply_locked(
            root,
            plan,
            approval=approval_hash(plan, approval_identity(root)),
            recovered=recovered,
            undoes=operation_id,
            prune_dirs=undone.created_dirs if undone else (),
        )
    notify(on_change, [p for r in recovered for p in r.restored] + list(result.paths))
    return result


def _inverse(root: Path, record: JournalRecord, index: int) -> Write | None:
    entry = record.entries[index]
    if entry.before_sha256 == entry.after_sha256:
        return None
    if entry.before_sha256 is None:
        assert entry.after_sha256 is not None
        return Write.delete(entry.path, expected_sha256=entry.after_sha256)
    data = journal.before_image(root, record.operation_id, index)
    if data is None or sha256_bytes(data) != entry.before_sha256:
        raise VaultError(
            f"The journal's copy of {entry.path} from before {record.operation_id} is missing or"
            f" damaged ({journal.before_image_rel(record.operation_id, index)}) — this operation"
            " cannot be undone automatically."
        )
    if entry.after_sha256 is None:
        return Write.create(entry.path, data)
    return Write.replace(entry.path, data, expected_sha256=entry.after_sha256)


def _undo_id(root: Path, operation_id: str) -> str:
    base = f"undo-{operation_id}"
    if len(base) > 150:
        base = f"undo-{sha256_bytes(operation_id.encode())[:16]}"
    candidate, n = base, 2
    while journal.load_record(root, candidate) is not None:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def _completed(root: Path) -> list[JournalRecord]:
    return [r for r in journal.all_records(root) if r.status == "complete"]


def _undone_by(records: list[JournalRecord]) -> dict[str, str]:
    """For each operation, the undo in effect against it (an undo that was not itself undone)."""
    undos: dict[str, list[JournalRecord]] = defaultdict(list)
    for r in records:
        if r.undoes is not None:
            undos[r.undoes].append(r)
    result: dict[str, str] = {}
    # An undo is always newer than what it undoes: newest first, each undo's own
    # status is settled before the operation it undoes is looked at.
    for r in sorted(records, key=lambda r: r.seq, reverse=True):
        live = [u for u in undos.get(r.operation_id, []) if u.operation_id not in result]
        if live:
            result[r.operation_id] = max(live, key=lambda u: u.seq).operation_id
    return result

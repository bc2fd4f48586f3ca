"""``apply``: a plan written to the vault completely, or not at all.

Under the mutation lock: roll back any interrupted operation, check the
approval hash, return the stored result if this exact plan was already applied,
check every file's expected hash (any mismatch refuses the whole plan), journal
the before-images (fsynced), write each file atomically (re-checking it just
before its rename), verify every file, and mark the operation complete. If
anything fails midway, the files written so far are rolled back at once — a
file an editor saved on top of this operation's write keeps that save, with
only the operation's change taken out (``recover.roll_back``), so a refused
plan leaves every file as it was apart from the user's own edits.
"""

from __future__ import annotations

import hmac
import time
from dataclasses import dataclass
from pathlib import Path

from desktop.vault.errors import VaultChanged, VaultError
from desktop.vault.layout import approval_identity, vault_root
from desktop.vault.transactions import journal
from desktop.vault.transactions.errors import ApprovalMismatch, PlanInvalid
from desktop.vault.transactions.faults import checkpoint
from desktop.vault.transactions.fsio import (
    atomic_write,
    current_sha256,
    make_dirs,
    read_file,
    remove_empty_dirs,
    remove_file,
    sha256_bytes,
    temp_path,
)
from desktop.vault.transactions.journal import JournalEntry, JournalRecord
from desktop.vault.transactions.lock import vault_lock
from desktop.vault.transactions.paths import missing_folders
from desktop.vault.transactions.plan import Action, Plan, Write, approval_hash
from desktop.vault.transactions.preview import resolve_targets
from desktop.vault.transactions.recover import (
    OnChange,
    RecoveryReport,
    notify,
    recover_pending,
    roll_back,
)


@dataclass(frozen=True)
class FileChange:
    path: str
    action: Action
    #: ``None``: the file did not exist before / does not exist after.
    before_sha256: str | None
    after_sha256: str | None


@dataclass(frozen=True)
class ApplyResult:
    """The stored result of a completed operation."""

    operation_id: str
    operation_type: str
    summary: str
    applied_at: str
    changes: tuple[FileChange, ...]
    #: True when this exact plan had been applied before and nothing was written now.
    replayed: bool = False
    #: Interrupted operations rolled back before this one ran.
    recovered: tuple[RecoveryReport, ...] = ()
    undoes: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(c.path for c in self.changes)


def apply_plan(
    root: str | Path, plan: Plan, *, approval: str, on_change: OnChange | None = None
) -> ApplyResult:
    """Apply ``plan`` if ``approval`` is the hash ``inspect_plan`` gave for it and this vault.

    Raises ``VaultBusy`` (another writer), ``VaultChanged`` (a file is not what
    the plan expects; nothing written), :class:`ApprovalMismatch`,
    :class:`PlanInvalid` (unsafe path; the id was used for another plan).
    ``on_change`` gets the touched paths after the lock is released (not on a
    replay). Blocking file I/O: call it from a worker thread, not the GUI thread.
    """
    root = vault_root(root)
    with vault_lock(root):
        checkpoint("locked")
        recovered = recover_pending(root)
        checkpoint("recovered")
        result = apply_locked(root, plan, approval=approval, recovered=recovered)
    if not result.replayed:
        notify(on_change, [p for r in recovered for p in r.restored] + list(result.paths))
    return result


def apply_locked(
    root: Path,
    plan: Plan,
    *,
    approval: str,
    recovered: tuple[RecoveryReport, ...] = (),
    undoes: str | None = None,
    prune_dirs: tuple[str, ...] = (),
) -> ApplyResult:
    """The body of :func:`apply_plan`; the caller holds the lock and has recovered.

    ``prune_dirs``: folders to remove if the plan leaves them empty (undo uses it
    for the folders the undone operation created).
    """
    expected_approval = approval_hash(plan, approval_identity(root))
    if not hmac.compare_digest(approval.strip().lower().encode(), expected_approval.encode()):
        raise ApprovalMismatch(
            f"The approval hash does not match this plan in this vault — run `antinomy tx inspect`"
            f" on it again and approve the new hash (operation {plan.operation_id})."
        )
    done = journal.load_record(root, plan.operation_id)
    if done is not None and done.status == "complete":
        if done.plan_sha256 == plan.sha256():
            return _result(done, replayed=True, recovered=recovered)
        raise PlanInvalid(
            f"Operation {plan.operation_id} was already applied on {done.finished_at} with"
            " different content — give the new plan its own operation_id."
        )
    targets = resolve_targets(root, plan)
    befores = _read_all(plan, targets)
    drift = [
        w.path
        for w, data in zip(plan.writes, befores, strict=True)
        if (None if data is None else sha256_bytes(data)) != w.expected_sha256
    ]
    if drift:
        raise VaultChanged(
            f"The vault changed since this plan was made: {', '.join(drift)}. Nothing was"
            " written — re-read the notes, make a new plan and inspect it again.",
            tuple(drift),
        )
    checkpoint("checked")
    record = _pending_record(root, plan, befores, targets, undoes)
    try:
        journal.begin(root, record, {i: d for i, d in enumerate(befores) if d is not None})
        checkpoint("before-images")
        _write_all(root, plan, targets, record)
        remove_empty_dirs(root, prune_dirs)
    except BaseException as exc:
        written = {i: w.content for i, w in enumerate(plan.writes) if w.content is not None}
        error = _rolled_back(root, record, exc, written)
        if error is exc:
            raise
        raise error from exc
    complete = record.finished("complete")
    journal.finish(root, complete)
    checkpoint("complete")
    return _result(complete, replayed=False, recovered=recovered)


def _read_all(plan: Plan, targets: list[Path]) -> list[bytes | None]:
    befores: list[bytes | None] = []
    for w, t in zip(plan.writes, targets, strict=True):
        try:
            befores.append(read_file(t))
        except OSError as exc:
            raise VaultError(
                f"Cannot read {w.path} ({exc.strerror or exc}) — nothing was written; check the"
                " file and apply again."
            ) from exc
    return befores


def _pending_record(
    root: Path,
    plan: Plan,
    befores: list[bytes | None],
    targets: list[Path],
    undoes: str | None,
) -> JournalRecord:
    created: dict[str, None] = {}
    for w, t in zip(plan.writes, targets, strict=True):
        if w.action != "delete":
            created.update(dict.fromkeys(missing_folders(root, t)))
    return JournalRecord(
        operation_id=plan.operation_id,
        operation_type=plan.operation_type,
        summary=plan.summary,
        plan_sha256=plan.sha256(),
        status="pending",
        started_at=journal.now_iso(),
        seq=time.time_ns(),
        entries=tuple(
            JournalEntry(w.action, w.path, None if d is None else sha256_bytes(d), w.after_sha256)
            for w, d in zip(plan.writes, befores, strict=True)
        ),
        created_dirs=tuple(created),
        undoes=undoes,
    )


def _write_all(root: Path, plan: Plan, targets: list[Path], record: JournalRecord) -> None:
    make_dirs(root, list(record.created_dirs))
    checkpoint("folders-created")
    for index, (w, target) in enumerate(zip(plan.writes, targets, strict=True)):
        _write_one(root, plan.operation_id, index, w, target)
        checkpoint(f"file:{index}:done")
    wrong = [
        w.path
        for w, t in zip(plan.writes, targets, strict=True)
        if current_sha256(t) != w.after_sha256
    ]
    if wrong:
        raise VaultChanged(f"{', '.join(wrong)} changed while Antinomy was writing.", tuple(wrong))
    checkpoint("verified")


def _write_one(root: Path, operation_id: str, index: int, w: Write, target: Path) -> None:
    label = f"file:{index}"
    if w.content is None:
        # Re-check right before the change: an editor may have saved since the
        # plan-wide check (the window left is the unlink itself).
        _still_expected(w, target)
        remove_file(target, label=label)
        return
    tmp = temp_path(target, operation_id, w.path)
    if w.action == "create":
        try:
            atomic_write(target, w.content, tmp=tmp, label=label, must_not_exist=True)
        except FileExistsError:
            raise VaultChanged(
                f"{w.path} appeared while Antinomy was writing.", (w.path,)
            ) from None
        return
    atomic_write(
        target,
        w.content,
        tmp=tmp,
        label=label,
        must_not_exist=False,
        check=lambda: _still_expected(w, target),
    )


def _still_expected(w: Write, target: Path) -> None:
    if current_sha256(target) != w.expected_sha256:
        raise VaultChanged(f"{w.path} changed while Antinomy was writing.", (w.path,))


def _rolled_back(
    root: Path, record: JournalRecord, exc: BaseException, written: dict[int, bytes]
) -> BaseException:
    """Roll back now; the error to raise says what happened and what to do."""
    try:
        report = roll_back(root, record, written)
    except VaultError as rollback_error:
        return rollback_error
    left = "".join(
        f" {path} had been saved meanwhile on top of this operation's change: that change was"
        " taken out of it and the save kept."
        for path in report.merged
    )
    left += "".join(
        f" {c.path} was left as someone else changed it; its earlier version is at"
        f" {c.before_image}."
        for c in report.conflicts
    )
    if isinstance(exc, VaultChanged):
        return VaultChanged(
            f"{exc} Everything this operation wrote was put back.{left} Re-read the notes, make a"
            " new plan and inspect it again.",
            exc.paths,
        )
    if isinstance(exc, OSError):
        where = f": {exc.filename}" if exc.filename else ""
        return VaultError(
            f"Could not write to the vault ({exc.strerror or exc}{where}). Everything this"
            f" operation wrote was put back.{left} Fix the cause and apply again."
        )
    return exc


def _result(
    record: JournalRecord, *, replayed: bool, recovered: tuple[RecoveryReport, ...]
) -> ApplyResult:
    return ApplyResult(
        operation_id=record.operation_id,
        operation_type=record.operation_type,
        summary=record.summary,
        applied_at=record.finished_at or record.started_at,
        changes=file_changes(record),
        replayed=replayed,
        recovered=recovered,
        undoes=record.undoes,
    )


def file_changes(record: JournalRecord) -> tuple[FileChange, ...]:
    """What an operation did to each file, as results and history show it."""
    return tuple(
        FileChange(e.path, e.action, e.before_sha256, e.after_sha256) for e in record.entries
    )

"""Recovery: an interrupted operation is rolled back, file by file, to its before-images.

A file is restored only if it still holds what the operation wrote (its
after-hash); if it already holds its before-image nothing is done; if it holds
anything else, someone changed it after the crash and it is left alone and
reported, with the path of the kept before-image. Every step is idempotent
and the record is marked ``rolled_back`` last, so a crash during recovery is
recovered by running recovery again.

A refused apply rolls back at once, and then knows what it wrote: a file an
editor saved on top of the operation's write gets only the operation's change
taken out, the edit kept (:mod:`~desktop.vault.transactions.merge`), so a
refusal never leaves half an operation behind — unless the edit is on the
very lines the operation changed, which is reported as a conflict.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from desktop.vault.errors import VaultError
from desktop.vault.layout import vault_root
from desktop.vault.transactions import journal
from desktop.vault.transactions.errors import PlanInvalid
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
from desktop.vault.transactions.journal import JournalRecord, before_image_rel
from desktop.vault.transactions.lock import vault_lock
from desktop.vault.transactions.merge import take_out
from desktop.vault.transactions.paths import missing_folders, resolve_target

logger = logging.getLogger(__name__)

#: Called with the vault-relative paths an operation, undo or recovery touched.
OnChange = Callable[[Sequence[str]], None]


@dataclass(frozen=True)
class Conflict:
    """A file recovery did not restore, and why; ``before_image`` is where its old bytes are."""

    path: str
    reason: str
    before_image: str | None


@dataclass(frozen=True)
class RecoveryReport:
    """What recovery did to one interrupted operation."""

    operation_id: str
    operation_type: str
    summary: str
    restored: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    #: Restored files whose later edit was kept (only this operation's change taken out).
    merged: tuple[str, ...] = ()

    @property
    def message(self) -> str:
        text = (
            f"Rolled back the interrupted operation {self.operation_id} ({self.summary}):"
            f" {len(self.restored)} file(s) restored."
        )
        for c in self.conflicts:
            keep = f" Its earlier version is kept at {c.before_image}." if c.before_image else ""
            text += f"\n  {c.path} was left as it is: {c.reason}.{keep}"
        return text


def recover_vault(
    root: str | Path, *, on_change: OnChange | None = None
) -> tuple[RecoveryReport, ...]:
    """Roll back every interrupted operation; a no-op when none is pending.

    Takes the mutation lock (raises ``VaultBusy`` if another writer has it).
    ``on_change`` gets the restored paths after the lock is released.
    """
    root = vault_root(root)
    with vault_lock(root):
        reports = recover_pending(root)
    notify(on_change, [p for r in reports for p in r.restored])
    return reports


def recover_pending(root: Path) -> tuple[RecoveryReport, ...]:
    """Roll back pending operations, newest first. The caller holds the lock."""
    reports = tuple(roll_back(root, r) for r in reversed(journal.pending_records(root)))
    for report in reports:
        logger.info("%s", report.message)
    return reports


def roll_back(
    root: Path, record: JournalRecord, written: Mapping[int, bytes] | None = None
) -> RecoveryReport:
    """Put every file of ``record`` back to its before-image where that is safe.

    ``written``: write index → the bytes the operation wrote there, when known (an
    apply rolling back its own writes); a file edited on top of them then has just
    the operation's change taken out.
    """
    op = record.operation_id
    restored: list[str] = []
    merged: list[str] = []
    conflicts: list[Conflict] = []
    for index in reversed(range(len(record.entries))):
        path = record.entries[index].path
        try:
            outcome = _restore_one(root, record, index, (written or {}).get(index))
        except OSError as exc:
            raise VaultError(
                f"Could not roll back {path} of the interrupted operation {op}:"
                f" {exc.strerror or exc} — fix that (permissions, disk space) and run"
                " `antinomy tx recover` again; its earlier version is kept in the journal."
            ) from exc
        if isinstance(outcome, Conflict):
            conflicts.append(outcome)
        elif outcome != "as_before":
            restored.append(path)
            if outcome == "merged":
                merged.append(path)
        checkpoint(f"recover:{index}:done")
    remove_empty_dirs(root, record.created_dirs)
    checkpoint("recover:folders-removed")
    if not conflicts:
        # Before the mark: a second recovery finds every file restored and needs none.
        journal.remove_before_images(root, op)
    journal.finish(root, record.finished("rolled_back", conflicts=tuple(c.path for c in conflicts)))
    checkpoint("recover:marked")
    return RecoveryReport(
        op,
        record.operation_type,
        record.summary,
        tuple(reversed(restored)),
        tuple(conflicts),
        tuple(reversed(merged)),
    )


#: What :func:`_restore_one` did: nothing (the file already held its before-image), put the
#: before-image back, or took the operation's change out of a later edit.
Restored = Literal["as_before", "restored", "merged"]
#: An editor that saves in place (truncate, then write) can be caught mid-save: when an
#: apply rolls back its own writes, a file it cannot restore is looked at again this many
#: times, this far apart, before it is reported.
SETTLE_ATTEMPTS = 5
SETTLE_SECONDS = 0.02
_CHANGED = "it was changed by someone else after the interruption"


def _restore_one(
    root: Path, record: JournalRecord, index: int, written: bytes | None
) -> Restored | Conflict:
    """Restore one file, or say why not."""
    op = record.operation_id
    entry = record.entries[index]
    kept = before_image_rel(op, index) if entry.before_sha256 is not None else None
    try:
        target = resolve_target(root, entry.path)
    except PlanInvalid as exc:
        return Conflict(entry.path, f"its path is no longer safe ({exc})", kept)
    temp_path(target, op, entry.path).unlink(missing_ok=True)
    outcome: Restored | Conflict = "as_before"
    for attempt in range(SETTLE_ATTEMPTS if written is not None else 1):
        if attempt:
            time.sleep(SETTLE_SECONDS)
        outcome = _restore_at(root, record, index, target, written)
        if not isinstance(outcome, Conflict):
            break
    return outcome


def _restore_at(
    root: Path, record: JournalRecord, index: int, target: Path, written: bytes | None
) -> Restored | Conflict:
    op = record.operation_id
    entry = record.entries[index]
    kept = before_image_rel(op, index) if entry.before_sha256 is not None else None
    now = read_file(target)
    current = None if now is None else sha256_bytes(now)
    if current == entry.before_sha256:
        return "as_before"
    edited = current != entry.after_sha256
    if edited and (written is None or now is None or entry.before_sha256 is None):
        return Conflict(entry.path, _CHANGED, kept)
    if entry.before_sha256 is None:
        remove_file(target, label=f"recover:{index}")
        return "restored"
    data = journal.before_image(root, op, index)
    if data is None or sha256_bytes(data) != entry.before_sha256:
        return Conflict(entry.path, "the journal's copy of its earlier version is damaged", None)
    if edited:
        assert written is not None and now is not None
        merged = take_out(written=written, before=data, current=now)
        if merged is None:
            return Conflict(entry.path, "it was edited on the lines this operation changed", kept)
        data = merged
    make_dirs(root, missing_folders(root, target))

    def unchanged() -> None:
        if edited and current_sha256(target) != current:
            raise _SavedAgain

    try:
        atomic_write(
            target,
            data,
            tmp=temp_path(target, op, entry.path),
            label=f"recover:{index}",
            must_not_exist=False,
            check=unchanged,
        )
    except _SavedAgain:  # saved again meanwhile: look again
        return Conflict(entry.path, _CHANGED, kept)
    return "merged" if edited else "restored"


class _SavedAgain(Exception):
    """The file changed between reading it and replacing it."""


def notify(on_change: OnChange | None, paths: Sequence[str]) -> None:
    """Tell ``on_change`` which files were touched (each once, in order).

    The vault change is already durable here: a failing callback is logged and
    does not undo it (the index can always be rebuilt from the files).
    """
    unique = tuple(dict.fromkeys(paths))
    if on_change is None or not unique:
        return
    try:
        on_change(unique)
    except Exception:
        logger.warning(
            "Updating the index after a vault change failed — run `antinomy index` to refresh it.",
            exc_info=True,
        )

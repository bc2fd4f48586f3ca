"""The transaction journal in ``<vault>/.antinomy/journal/``.

- ``pending/<id>.json`` — the record of an operation in progress: what it
  writes, each path with its hash before and after. Its presence is the mark
  of an interrupted operation; this folder holds only those, so finding them
  costs one short listing however long the history is.
- ``images/<id>/<n>`` — the before-image of write ``n`` (the file's exact
  bytes before the operation), fsynced before any note is touched. Written
  after the pending record, so every image folder belongs to a record. Kept
  after completion: undo restores from them.
- ``done/<id>.json`` — the final record: ``complete`` (the stored result) or
  ``rolled_back`` (after recovery, with any conflicts). Written before the
  pending record is removed; if both exist, the final one wins (an earlier
  final record of a re-applied id is removed before its new attempt starts).

Records are written atomically (temp, fsync, rename, fsync the folder).
Everything here is written by the engine itself; a damaged record is reported
with the next step, never guessed at. A record is held to the rules of the plan
it came from (paths relative and inside the vault, a well-formed operation id,
the one its file is named after): recovery removes folders and before-images by
what a record says, so a crafted one is refused and left in place
(:class:`RecordUnsafe`) before anything is touched.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from desktop.vault.errors import VaultError
from desktop.vault.layout import STATE_DIR, state_dir
from desktop.vault.transactions.errors import PlanInvalid, RecordUnsafe
from desktop.vault.transactions.faults import checkpoint
from desktop.vault.transactions.fsio import fsync_dir, read_file, write_temp
from desktop.vault.transactions.paths import check_relative_path
from desktop.vault.transactions.plan import (
    ACTIONS,
    MAX_WRITES,
    Action,
    check_operation_id,
    is_sha256,
)

JOURNAL_SCHEMA = "antinomy.journal/1"
Status = Literal["pending", "complete", "rolled_back"]


@dataclass(frozen=True)
class JournalEntry:
    """One file of an operation, by its position in the plan."""

    action: Action
    path: str
    before_sha256: str | None
    after_sha256: str | None


@dataclass(frozen=True)
class JournalRecord:
    operation_id: str
    operation_type: str
    summary: str
    plan_sha256: str
    status: Status
    started_at: str
    #: Orders operations (nanoseconds since the epoch at start).
    seq: int
    entries: tuple[JournalEntry, ...]
    #: Folders the operation created (removed again if it is rolled back).
    created_dirs: tuple[str, ...] = ()
    finished_at: str | None = None
    #: The operation this one undoes, if it is an undo.
    undoes: str | None = None
    #: After a roll-back: files left as someone else changed them.
    conflicts: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(e.path for e in self.entries)

    def finished(self, status: Status, **changes: Any) -> JournalRecord:
        return replace(self, status=status, finished_at=now_iso(), **changes)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def _pending_path(root: Path, operation_id: str) -> Path:
    return state_dir(root, "journal", "pending") / f"{operation_id}.json"


def _done_path(root: Path, operation_id: str) -> Path:
    return state_dir(root, "journal", "done") / f"{operation_id}.json"


def images_dir(root: Path, operation_id: str) -> Path:
    return state_dir(root, "journal", "images") / operation_id


def before_image_rel(operation_id: str, index: int) -> str:
    """Where the before-image of write ``index`` is kept, relative to the vault (for messages)."""
    return f"{STATE_DIR}/journal/images/{operation_id}/{index}"


def _write_record(target: Path, record: JournalRecord) -> None:
    tmp = target.with_name(target.name + ".tmp")
    data = {"schema": JOURNAL_SCHEMA, **asdict(record)}
    write_temp(tmp, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"), mode=None)
    os.replace(tmp, target)
    fsync_dir(target.parent)


def begin(root: Path, record: JournalRecord, images: Mapping[int, bytes]) -> None:
    """Journal an operation before it touches a note: its pending record, then its images.

    Until every image is durable no note is written, so an interruption in
    between finds every file as it was and recovery has nothing to restore.
    """
    op = record.operation_id
    old = _done_path(root, op)  # a rolled-back earlier attempt of this id
    if old.exists():
        old.unlink()
        fsync_dir(old.parent)
    folder = images_dir(root, op)
    if folder.is_symlink():  # not left by an earlier attempt: never written through
        folder.unlink()
    shutil.rmtree(folder, ignore_errors=True)
    _write_record(_pending_path(root, op), record)
    checkpoint("journal-pending")
    folder.mkdir()
    for index, data in sorted(images.items()):
        # Private whatever the note's own mode: the journal must not widen who can read it.
        write_temp(folder / str(index), data, mode=0o600)
        checkpoint(f"before-image:{index}")
    fsync_dir(folder)
    fsync_dir(folder.parent)


def finish(root: Path, record: JournalRecord) -> None:
    """Store the final record durably, then retire the pending one."""
    _write_record(_done_path(root, record.operation_id), record)
    checkpoint(f"record-{record.status}-written")
    # Needs no fsync: a pending record that comes back beside its final one is ignored.
    _pending_path(root, record.operation_id).unlink(missing_ok=True)


def load_record(root: Path, operation_id: str) -> JournalRecord | None:
    """The operation's final record, else its pending one, else ``None``."""
    check_operation_id(operation_id)
    for path in (_done_path(root, operation_id), _pending_path(root, operation_id)):
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            continue
        return _parse(path, raw)
    return None


def pending_records(root: Path) -> list[JournalRecord]:
    """Records of interrupted operations, oldest first. Call with the lock held.

    Also removes what an interruption can leave in the journal itself: temp
    files of records, and pending records whose final record was written.
    """
    folder = state_dir(root, "journal", "pending")
    records = []
    for name in os.listdir(folder):
        path = folder / name
        if not name.endswith(".json"):
            path.unlink(missing_ok=True)  # a record's temp file
            continue
        op = name.removesuffix(".json")
        done = _done_path(root, op)
        done.with_name(done.name + ".tmp").unlink(missing_ok=True)
        if done.exists():
            path.unlink(missing_ok=True)
            continue
        records.append(_parse(path, path.read_bytes()))
    return sorted(records, key=lambda r: r.seq)


def all_records(root: Path) -> list[JournalRecord]:
    """Every final record (complete or rolled back), oldest first. Reads only."""
    folder = root / STATE_DIR / "journal" / "done"
    if not folder.is_dir():
        return []
    records = [_parse(p, p.read_bytes()) for p in folder.glob("*.json")]
    return sorted(records, key=lambda r: r.seq)


def _parse(path: Path, raw: bytes) -> JournalRecord:
    try:
        data = json.loads(raw)
        if data.pop("schema") != JOURNAL_SCHEMA:
            raise ValueError("unknown schema")
        data["entries"] = tuple(JournalEntry(**e) for e in data["entries"])
        data["created_dirs"] = tuple(data["created_dirs"])
        data["conflicts"] = tuple(data["conflicts"])
        record = JournalRecord(**data)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise VaultError(
            f"The journal record {path} is damaged — move it out of the journal folder and run"
            " `antinomy tx recover` again (the files it names may need checking by hand)."
        ) from None
    try:
        _check_record(record, path.name.removesuffix(".json"))
    except PlanInvalid as exc:
        raise RecordUnsafe(
            f"The journal record {path} was not written by Antinomy: {exc} Nothing was changed"
            " — move the record out of the journal folder to look at it, then run"
            " `antinomy tx recover` again."
        ) from None
    return record


def _check_record(record: JournalRecord, file_stem: str) -> None:
    """Hold a record to the rules its plan was held to: a record names files the engine
    writes, removes or restores, so an unchecked one could reach outside the vault."""
    check_operation_id(record.operation_id)
    if record.operation_id != file_stem:
        raise PlanInvalid(f"it is named {file_stem}.json but records {record.operation_id!r}.")
    if record.undoes is not None:
        check_operation_id(record.undoes)
    if record.status not in ("pending", "complete", "rolled_back"):
        raise PlanInvalid(f"its status {record.status!r} is not one the engine writes.")
    if not isinstance(record.seq, int) or not record.entries or len(record.entries) > MAX_WRITES:
        raise PlanInvalid("its sequence number or list of files is not one the engine writes.")
    for entry in record.entries:
        check_relative_path(entry.path)
        if entry.action not in ACTIONS:
            raise PlanInvalid(f"{entry.path} has the unknown action {entry.action!r}.")
        for digest in (entry.before_sha256, entry.after_sha256):
            if digest is not None and not is_sha256(digest):
                raise PlanInvalid(f"{entry.path} has a hash that is not a sha256.")
    for rel in (*record.created_dirs, *record.conflicts):
        check_relative_path(rel)


def before_image(root: Path, operation_id: str, index: int) -> bytes | None:
    """The kept bytes, or ``None`` if missing or not a file the journal wrote (a link)."""
    try:
        return read_file(images_dir(root, operation_id) / str(index))
    except OSError:
        return None


def remove_before_images(root: Path, operation_id: str) -> None:
    shutil.rmtree(images_dir(root, operation_id), ignore_errors=True)

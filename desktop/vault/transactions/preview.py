"""``inspect``: what a plan would do to the vault now, and the hash that approves it."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from desktop.vault.errors import VaultError
from desktop.vault.layout import approval_identity, vault_id, vault_root
from desktop.vault.transactions.errors import PlanInvalid
from desktop.vault.transactions.fsio import read_file, sha256_bytes
from desktop.vault.transactions.paths import resolve_target
from desktop.vault.transactions.plan import Action, Plan, Write, approval_hash

#: Diffs longer than this many lines are cut in the preview (the plan is unchanged).
MAX_DIFF_LINES = 4000


@dataclass(frozen=True)
class FileDiff:
    path: str
    action: Action
    expected_sha256: str | None
    #: The file's hash now (``None``: it does not exist).
    current_sha256: str | None
    diff: str
    lines_added: int
    lines_removed: int

    @property
    def stale(self) -> bool:
        """The file is not what the plan expects: apply would refuse the whole plan."""
        return self.current_sha256 != self.expected_sha256


@dataclass(frozen=True)
class Preview:
    operation_id: str
    operation_type: str
    summary: str
    plan_sha256: str
    vault_id: str
    #: What ``apply`` needs: sha256 over the canonical plan and this vault's identity.
    approval: str
    files: tuple[FileDiff, ...]

    def count(self, action: Action) -> int:
        return sum(1 for f in self.files if f.action == action)

    @property
    def lines_added(self) -> int:
        return sum(f.lines_added for f in self.files)

    @property
    def lines_removed(self) -> int:
        return sum(f.lines_removed for f in self.files)

    @property
    def stale(self) -> tuple[str, ...]:
        """Files that changed since the plan was made (apply would refuse)."""
        return tuple(f.path for f in self.files if f.stale)


def inspect_plan(root: str | Path, plan: Plan) -> Preview:
    """Check the plan's paths against the vault and preview every file. Writes nothing.

    Raises :class:`PlanInvalid` if a path is unsafe on disk (a symbolic link out
    of the vault, a folder, …). Files that changed since the plan was made are
    listed in :attr:`Preview.stale`, not raised: the caller shows them.
    """
    root = vault_root(root)
    targets = resolve_targets(root, plan)
    files = tuple(_file_diff(w, _read(w, t)) for w, t in zip(plan.writes, targets, strict=True))
    return Preview(
        operation_id=plan.operation_id,
        operation_type=plan.operation_type,
        summary=plan.summary,
        plan_sha256=plan.sha256(),
        vault_id=vault_id(root),
        approval=approval_hash(plan, approval_identity(root)),
        files=files,
    )


def resolve_targets(root: Path, plan: Plan) -> list[Path]:
    """Where each write lands; refuses two paths that reach one file through links."""
    targets = [resolve_target(root, w.path) for w in plan.writes]
    seen: dict[Path, str] = {}
    for w, t in zip(plan.writes, targets, strict=True):
        if t in seen:
            raise PlanInvalid(f"{seen[t]} and {w.path} are the same file (through a link).")
        seen[t] = w.path
    return targets


def _read(write: Write, target: Path) -> bytes | None:
    try:
        return read_file(target)
    except OSError as exc:
        raise VaultError(
            f"Cannot read {write.path} ({exc.strerror or exc}) — check the file."
        ) from exc


def _file_diff(write: Write, before: bytes | None) -> FileDiff:
    old = _text(before)
    new = _text(write.content)
    if old is None or new is None:
        diff = _binary_note(write.path, before, write.content)
        added = removed = 0
    else:
        lines = list(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile="/dev/null" if before is None else f"a/{write.path}",
                tofile="/dev/null" if write.content is None else f"b/{write.path}",
            )
        )
        added = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
        removed = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
        if len(lines) > MAX_DIFF_LINES:
            cut = len(lines) - MAX_DIFF_LINES
            lines = [*lines[:MAX_DIFF_LINES], f"… {cut} more diff lines not shown\n"]
        diff = "".join(
            x if x.endswith("\n") else x + "\n\\ No newline at end of file\n" for x in lines
        )
    return FileDiff(
        path=write.path,
        action=write.action,
        expected_sha256=write.expected_sha256,
        current_sha256=None if before is None else sha256_bytes(before),
        diff=diff,
        lines_added=added,
        lines_removed=removed,
    )


def _text(data: bytes | None) -> str | None:
    if data is None:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _binary_note(path: str, before: bytes | None, after: bytes | None) -> str:
    def size(data: bytes | None) -> str:
        return "nothing" if data is None else f"{len(data)} bytes"

    return f"{path}: not UTF-8 text ({size(before)} → {size(after)}); no line diff shown.\n"

"""The one writer of the vault: plan → inspect → approve → journaled apply; recover; undo.

Typical use by a flow::

    plan = Plan(new_operation_id("review"), "review", "Dismiss A ↔ B", (
        Write.replace("A.md", new_a, expected_sha256=hash_of_a_as_read),
        Write.replace("B.md", new_b, expected_sha256=hash_of_b_as_read),
    ))
    preview = inspect_plan(vault, plan)          # diffs, counts, preview.approval
    result = apply_plan(vault, plan, approval=preview.approval, on_change=index.update_paths)

Guarantees: paths are confined to the vault; a plan is applied completely or
not at all (an interruption is rolled back by the next writer or by
``recover_vault``); a file edited after the plan was made refuses the whole
plan (``VaultChanged``); re-applying the same plan returns its stored result;
``undo_operation`` never overwrites a later edit. The plan JSON schema is in
:mod:`desktop.vault.transactions.plan`.
"""

from __future__ import annotations

from desktop.vault.transactions.apply import ApplyResult, FileChange, apply_plan
from desktop.vault.transactions.errors import (
    ApprovalMismatch,
    NothingToUndo,
    PlanInvalid,
    UnknownOperation,
)
from desktop.vault.transactions.history import (
    HistoryEntry,
    build_undo_plan,
    list_history,
    undo_operation,
)
from desktop.vault.transactions.plan import (
    PLAN_SCHEMA,
    Plan,
    Write,
    approval_hash,
    new_operation_id,
    plan_from_json,
    plan_to_json,
    read_plan_file,
    sha256_hex,
)
from desktop.vault.transactions.preview import FileDiff, Preview, inspect_plan
from desktop.vault.transactions.recover import Conflict, OnChange, RecoveryReport, recover_vault

__all__ = [
    "PLAN_SCHEMA",
    "ApplyResult",
    "ApprovalMismatch",
    "Conflict",
    "FileChange",
    "FileDiff",
    "HistoryEntry",
    "NothingToUndo",
    "OnChange",
    "Plan",
    "PlanInvalid",
    "Preview",
    "RecoveryReport",
    "UnknownOperation",
    "Write",
    "apply_plan",
    "approval_hash",
    "build_undo_plan",
    "inspect_plan",
    "list_history",
    "new_operation_id",
    "plan_from_json",
    "plan_to_json",
    "read_plan_file",
    "recover_vault",
    "sha256_hex",
    "undo_operation",
]

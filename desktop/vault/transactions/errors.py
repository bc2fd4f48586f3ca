"""Errors of the transaction engine (besides ``VaultChanged`` and ``VaultBusy``).

The command line maps them to exit codes: :class:`PlanInvalid` is 2 (a bad
plan or argument), ``VaultChanged`` and ``VaultBusy`` are 75 (try again after
re-reading), anything else is 1.
"""

from __future__ import annotations

from desktop.vault.errors import VaultError


class PlanInvalid(VaultError):
    """The plan is malformed or unsafe (bad path, bad JSON, reused id); nothing was written."""


class ApprovalMismatch(PlanInvalid):
    """The approval hash is not the one ``inspect`` gave for this plan and vault."""


class UnknownOperation(PlanInvalid):
    """No completed operation has this id."""


class NothingToUndo(VaultError):
    """The operation was already undone (or changed nothing)."""


class RecordUnsafe(VaultError):
    """A journal record names a path or id the engine never writes; it is left in place."""

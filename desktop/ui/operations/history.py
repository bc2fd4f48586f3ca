"""Undo an applied operation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop.ui.controller import AppController
from desktop.vault.transactions import ApplyResult, undo_operation


def undo(controller: AppController, *, operation_id: str) -> asyncio.Task[ApplyResult] | None:
    root = controller.root
    if root is None:
        return None

    async def go() -> ApplyResult:
        result = await controller.run_in(controller.write_pool, _undo, root, operation_id)
        controller.sig_history_changed.emit()
        controller.notes_changed(result.paths)
        return result

    return controller.spawn(go(), what=f"Undoing {operation_id}")


def _undo(root: Path, operation_id: str) -> ApplyResult:
    return undo_operation(root, operation_id)

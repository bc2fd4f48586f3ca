"""Apply an approved ingest plan from the GUI: one transaction on the vault-write worker."""

from __future__ import annotations

import asyncio
from pathlib import Path

from desktop.flows.ingest import IngestReport, apply_ingest
from desktop.ui.controller import AppController
from desktop.vault.transactions import ApplyResult


def approve_ingest(
    controller: AppController, *, report: IngestReport
) -> asyncio.Task[ApplyResult] | None:
    """Write the previewed plan; a page changed since planning refuses it whole (VaultChanged)."""
    root = controller.root
    if root is None or report.preview is None:
        return None
    approval = report.preview.approval

    async def go() -> ApplyResult:
        result = await controller.run_in(controller.write_pool, _apply, root, report, approval)
        controller.sig_history_changed.emit()
        controller.notes_changed(result.paths)
        return result

    return controller.spawn(go(), what="Applying the ingest plan")


def _apply(root: Path, report: IngestReport, approval: str) -> ApplyResult:
    return apply_ingest(root, report, approval=approval)

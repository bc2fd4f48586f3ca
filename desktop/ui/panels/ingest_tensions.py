"""The Tensions panel's small section for contradictions found by ingests.

Each row is a tension candidate an applied ingest recorded (the judge held the
new claim against an existing page): the source note, the page, both claims
and the severity with the judge's probability. Double-click opens the page.
It is a reflective prompt like every tension, never a truth.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QGroupBox, QTreeWidget, QTreeWidgetItem, QVBoxLayout

from desktop.flows.ingest import TensionCandidate, standing_candidates
from desktop.ui.context import AppContext

PATH_ROLE = Qt.ItemDataRole.UserRole


class QtIngestTensions(QGroupBox):
    sig_listed = Signal(int)
    """The list was refreshed: ``(number of candidates)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__("From ingests")
        self._c = ctx.controller
        self._request = 0
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Source", "Page", "Existing claim", "New claim", "Severity"])
        self.tree.setRootIsDecorated(False)
        self.tree.setMaximumHeight(160)
        self.tree.itemDoubleClicked.connect(self._open)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree)
        self.hide()
        self._c.sig_vault_opened.connect(lambda _root: self.refresh())
        self._c.sig_history_changed.connect(self.refresh)

    def refresh(self) -> None:
        root = self._c.root
        if root is None:
            return
        self._request += 1
        request = self._request

        async def go() -> None:
            rows = await self._c.run_in(self._c.read_pool, standing_candidates, root)
            if request == self._request and self._c.root == root:
                self._fill(rows)

        self._c.spawn(go(), what="Listing ingest tensions")

    def _fill(self, rows: list[TensionCandidate]) -> None:
        self.tree.clear()
        for c in rows:
            item = QTreeWidgetItem(
                [c.source_note, c.page, c.existing_claim, c.new_claim,
                 f"{c.severity} ({c.probability:.2f})"]
            )  # fmt: skip
            item.setData(0, PATH_ROLE, c.page)
            item.setToolTip(0, f"ingest {c.operation_id} at {c.ingested_at} ({c.found_by})")
            item.setToolTip(2, c.existing_claim)
            item.setToolTip(3, c.new_claim)
            self.tree.addTopLevelItem(item)
        self.setVisible(bool(rows))
        self.sig_listed.emit(len(rows))

    def _open(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if path and self._c.root is not None and (Path(self._c.root) / path).exists():
            self._c.sig_preview_requested.emit(str(path))

"""Dismissed pairs: every pair marked as a false positive, with Undismiss.

Re-read after every transaction (this window's or another process's) and after
a note that holds, or held, a dismissal changes on disk. Pairs kept in
``.antinomy/dismissed.json`` (the vault's option) are listed with the notes' own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.hunter.dismissals import STORE_PATH
from desktop.flows.review import FALSE_POSITIVES, DismissedPair, list_dismissed
from desktop.ui.context import AppContext
from desktop.ui.operations import review as review_ops
from desktop.ui.panels import PanelSpec


class QtDismissedPanel(QWidget):
    sig_dismissed_listed = Signal(int)
    """The list was refreshed: ``(number of pairs)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self._request = 0
        self.pairs: list[DismissedPair] = []
        self.list = QListWidget()
        self.list.currentRowChanged.connect(lambda _r: self._buttons())
        self.undismiss_button = QPushButton("Undismiss")
        self.undismiss_button.setToolTip("Let the Hunter show this pair again")
        self.undismiss_button.clicked.connect(self.undismiss_selected)
        self.count = QLabel()
        row = QHBoxLayout()
        row.addWidget(self.count, 1)
        row.addWidget(self.undismiss_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.list, 1)
        layout.addLayout(row)
        self._c.sig_vault_opened.connect(lambda _root: self.refresh())
        self._c.sig_history_changed.connect(self.refresh)
        self._c.sig_notes_changed.connect(self._notes_changed)
        self._buttons()

    def refresh(self) -> None:
        root = self._c.root
        if root is None:
            return
        self._request += 1
        request = self._request

        async def go() -> None:
            pairs = await self._c.run_in(self._c.read_pool, list_dismissed, root)
            if request == self._request:
                self._fill(pairs)

        self._c.spawn(go(), what="Listing dismissed pairs")

    def _notes_changed(self, paths: Sequence[str]) -> None:
        """Re-read the list if one of ``paths`` holds or held a dismissal (an edit by hand)."""
        root = self._c.root
        if root is None:
            return
        listed = {p for d in self.pairs for p in (d.path_a, d.path_b) if p}
        if not listed.isdisjoint(paths):
            self.refresh()
            return

        async def go() -> None:
            if await self._c.run_in(self._c.read_pool, _mention_dismissals, root, list(paths)):
                self.refresh()

        self._c.spawn(go(), what="Listing dismissed pairs")

    def _fill(self, pairs: list[DismissedPair]) -> None:
        self.pairs = pairs
        self.list.clear()
        for pair in pairs:
            text = f"{pair.a}  ↔  {pair.b}"
            if pair.missing:
                text += f"   (missing: {', '.join(pair.missing)})"
            if not pair.reciprocal:
                text += "   (listed in one note only)"
            if "antinomy" in pair.kept_in:
                text += "   (kept in .antinomy/)"
            item = QListWidgetItem(text)
            item.setToolTip(f"{pair.path_a or pair.a}\n{pair.path_b or pair.b}")
            self.list.addItem(item)
        self.count.setText(f"{len(pairs)} dismissed pair{'s' if len(pairs) != 1 else ''}")
        self._buttons()
        self.sig_dismissed_listed.emit(len(pairs))

    def _buttons(self) -> None:
        self.undismiss_button.setEnabled(0 <= self.list.currentRow() < len(self.pairs))

    def undismiss_selected(self) -> None:
        row = self.list.currentRow()
        if not 0 <= row < len(self.pairs):
            return
        pair = self.pairs[row]
        review_ops.undismiss(self._c, a=pair.path_a or pair.a, b=pair.path_b or pair.b)


def _mention_dismissals(root: Path, paths: Sequence[str]) -> bool:
    if STORE_PATH in paths:
        return True
    for path in paths:
        try:
            if FALSE_POSITIVES.encode() in (root / path).read_bytes():
                return True
        except OSError:
            continue
    return False


PANEL = PanelSpec("dismissed", "Dismissed pairs", "tab", QtDismissedPanel)

"""History: applied operations in words, with their files, and Undo.

Refreshed whenever an operation is applied or undone, here or by another
process (the watcher sees the journal change).
"""

from __future__ import annotations

from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.context import AppContext
from desktop.ui.operations import history as history_ops
from desktop.ui.operations.titles import entry_title
from desktop.ui.panels import PanelSpec
from desktop.vault.transactions import HistoryEntry, list_history

OP_ROLE = Qt.ItemDataRole.UserRole


def local_time(stamp: str) -> str:
    """An ISO timestamp as this machine's local time, to the second."""
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp.replace("T", " ")[:19]
    if when.tzinfo is not None:
        when = when.astimezone()
    return when.strftime("%Y-%m-%d %H:%M:%S")


class QtHistoryPanel(QWidget):
    sig_history_listed = Signal(int)
    """The list was refreshed: ``(number of operations)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self._request = 0
        self.entries: list[HistoryEntry] = []
        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["When", "Operation", "Files", "State"])
        header = self.tree.header()
        # "When", "Files" and "State" always fit their text (a fixed width cut the time
        # off beside the expand arrows); the operation in words takes the rest.
        header.setStretchLastSection(False)
        for column in (0, 2, 3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.tree.currentItemChanged.connect(self._update_buttons)
        self.tree.itemDoubleClicked.connect(self._open_file)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Take this operation back (refused if a file changed since)")
        self.undo_button.clicked.connect(self.undo_selected)
        self.undo_button.setEnabled(False)
        refresh = QPushButton("Refresh")
        refresh.clicked.connect(self.refresh)
        self.summary = QLabel()
        buttons = QHBoxLayout()
        buttons.addWidget(self.summary, 1)
        buttons.addWidget(refresh)
        buttons.addWidget(self.undo_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        self._c.sig_history_changed.connect(self.refresh)
        self._c.sig_vault_opened.connect(lambda _root: self.refresh())

    def refresh(self) -> None:
        root = self._c.root
        if root is None:
            return
        self._request += 1
        request = self._request

        async def go() -> None:
            entries = await self._c.run_in(self._c.read_pool, list_history, root)
            if request == self._request:
                self._fill(list(entries))

        self._c.spawn(go(), what="Reading the history")

    def _fill(self, entries: list[HistoryEntry]) -> None:
        self.entries = entries
        self.tree.clear()
        by_id = {e.operation_id: e for e in entries}
        for e in entries:
            state = ""
            if e.undone_by:
                undo = by_id.get(e.undone_by)
                state = f"undone {local_time(undo.applied_at)[11:]}" if undo else "undone"
            item = QTreeWidgetItem(
                [local_time(e.applied_at), entry_title(e, by_id), str(len(e.changes)), state]
            )
            item.setData(0, OP_ROLE, e.operation_id)
            item.setToolTip(1, f"{e.summary}\n{e.operation_type} {e.operation_id}")
            for change in e.changes:
                child = QTreeWidgetItem(["", f"{change.action}  {change.path}", "", ""])
                child.setData(0, OP_ROLE, None)
                child.setData(1, OP_ROLE, change.path)
                item.addChild(child)
            self.tree.addTopLevelItem(item)
        n = len(entries)
        self.summary.setText(f"{n} operation{'s' if n != 1 else ''}")
        self._update_buttons()
        self.sig_history_listed.emit(n)

    def selected_entry(self) -> HistoryEntry | None:
        item: QTreeWidgetItem | None = self.tree.currentItem()
        if item is None:
            return None
        while (parent := item.parent()) is not None:
            item = parent
        op = item.data(0, OP_ROLE)
        return next((e for e in self.entries if e.operation_id == op), None)

    def select_operation(self, operation_id: str) -> None:
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item is not None and item.data(0, OP_ROLE) == operation_id:
                self.tree.setCurrentItem(item)
                return

    def _update_buttons(self, *_: object) -> None:
        entry = self.selected_entry()
        self.undo_button.setEnabled(entry is not None and entry.undone_by is None)

    def undo_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            history_ops.undo(self._c, operation_id=entry.operation_id)

    def _open_file(self, item: QTreeWidgetItem, _column: int) -> None:
        path = item.data(1, OP_ROLE)
        if path:
            self._c.sig_preview_requested.emit(str(path))


PANEL = PanelSpec("history", "History", "tab", QtHistoryPanel)

"""Notes: the vault's notes with type/status filters and a search box.

The search combines full text and meaning (``desktop.vault.search.search``);
it runs off the GUI thread, each request numbered so a stale answer is dropped.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.context import AppContext
from desktop.ui.panels import PanelSpec
from desktop.vault.index import NoteSummary, VaultIndex
from desktop.vault.search import search

ALL = "All"
PATH_ROLE = Qt.ItemDataRole.UserRole


def _query(
    index: VaultIndex, text: str, types: list[str] | None, statuses: list[str] | None
) -> tuple[list[NoteSummary], list[str], list[str], dict[str, str]]:
    """Runs on the read worker: the rows to show, and the filter choices."""
    everything = index.notes()
    all_types = sorted({n.type for n in everything if n.type})
    all_statuses = sorted({n.status for n in everything if n.status})
    snippets: dict[str, str] = {}
    if text.strip():
        hits = search(index, text, k=50, types=types, statuses=statuses)
        rows = [h.note for h in hits]
        snippets = {h.note.path: h.snippet for h in hits if h.snippet}
    else:
        rows = index.notes(types=types, statuses=statuses)
    return rows, all_types, all_statuses, snippets


class QtNotesPanel(QWidget):
    sig_notes_listed = Signal(int)
    """The list was refreshed: ``(number of rows)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self._request = 0
        self.search_box = QLineEdit()
        self.search_box.setPlaceholderText("Search words or meaning…  (Ctrl+F)")
        self.search_box.setClearButtonEnabled(True)
        self.type_filter = QComboBox()
        self.status_filter = QComboBox()
        for combo in (self.type_filter, self.status_filter):
            combo.addItem(ALL)
            combo.currentIndexChanged.connect(self.refresh)
        self.list = QListWidget()
        self.list.currentItemChanged.connect(self._selected)
        self.list.itemActivated.connect(self._selected)
        self.count = QLabel()
        filters = QHBoxLayout()
        filters.addWidget(QLabel("Type"))
        filters.addWidget(self.type_filter, 1)
        filters.addWidget(QLabel("Status"))
        filters.addWidget(self.status_filter, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search_box)
        layout.addLayout(filters)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.count)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(250)
        self._debounce.timeout.connect(self.refresh)
        self.search_box.textChanged.connect(lambda _t: self._debounce.start())
        self._c.sig_index_updated.connect(lambda _r: self.refresh())
        self._c.sig_notes_changed.connect(lambda _p: self.refresh())
        self._c.sig_vault_opened.connect(lambda _root: self.list.clear())

    def menu_actions(self) -> list[QAction]:
        search = QAction("&Search notes", self)
        search.setShortcut(QKeySequence.StandardKey.Find)
        search.triggered.connect(self.focus_search)
        return [search]

    def focus_search(self) -> None:
        self.search_box.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search_box.selectAll()

    def selected_path(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None else str(item.data(PATH_ROLE))

    def _choice(self, combo: QComboBox) -> list[str] | None:
        text = combo.currentText()
        return None if text in ("", ALL) else [text]

    def refresh(self) -> None:
        index = self._c.index
        if index is None:
            return
        self._request += 1
        request = self._request
        text = self.search_box.text()
        types, statuses = self._choice(self.type_filter), self._choice(self.status_filter)

        async def go() -> None:
            rows, all_types, all_statuses, snippets = await self._c.run_in(
                self._c.read_pool, _query, index, text, types, statuses
            )
            if request != self._request:
                return
            self._fill_combo(self.type_filter, all_types)
            self._fill_combo(self.status_filter, all_statuses)
            self._fill(rows, snippets)

        self._c.spawn(go(), what="Listing notes")

    def _fill_combo(self, combo: QComboBox, values: list[str]) -> None:
        current = combo.currentText()
        wanted = [ALL, *values]
        if [combo.itemText(i) for i in range(combo.count())] == wanted:
            return
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(wanted)
        combo.setCurrentText(current if current in wanted else ALL)
        combo.blockSignals(False)

    def _fill(self, rows: list[NoteSummary], snippets: dict[str, str]) -> None:
        keep = self.selected_path()
        self.list.blockSignals(True)
        self.list.clear()
        for note in rows:
            label = note.title
            if note.type:
                label += f"   · {note.type}"
            if note.status:
                label += f" · {note.status}"
            item = QListWidgetItem(label)
            item.setData(PATH_ROLE, note.path)
            tip = note.path + (f"\n{snippets[note.path]}" if note.path in snippets else "")
            item.setToolTip(tip)
            self.list.addItem(item)
            if note.path == keep:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        searching = bool(self.search_box.text().strip())
        self.count.setText(f"{len(rows)} {'matches' if searching else 'notes'}")
        self.sig_notes_listed.emit(len(rows))

    def _selected(self, item: QListWidgetItem | None, *_: object) -> None:
        if item is not None:
            self._c.sig_preview_requested.emit(str(item.data(PATH_ROLE)))


PANEL = PanelSpec("notes", "Notes", "left", QtNotesPanel)

"""Related: the notes nearest in meaning to the one in the preview, and "Scan this note".

The index already holds every note's vector; the neighbours are read on the
read worker (one exact top-k), each request numbered so a stale answer is
dropped. "Scan this note" starts a focus scan on the note in the preview —
whatever the Notes list selection is (a search may have cleared it).
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.flows.progress import plural
from desktop.ui.context import AppContext
from desktop.ui.panels import PanelSpec
from desktop.vault.index import NoteSummary, VaultIndex
from desktop.vault.search import neighbours

PATH_ROLE = Qt.ItemDataRole.UserRole
#: Neighbours listed.
K = 10


def related_notes(index: VaultIndex, path: str, k: int = K) -> list[tuple[NoteSummary, float]]:
    """The notes nearest to ``path`` by meaning, best first (read worker)."""
    return neighbours(index, path, k)


def row_text(note: NoteSummary, score: float) -> str:
    kind = f"  · {note.type}" if note.type else ""
    return f"{score:.2f}   {note.title}{kind}"


class QtRelatedPanel(QWidget):
    sig_related_listed = Signal(str, int)
    """The neighbours of a note are on screen: ``(path, number of rows)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._ctx = ctx
        self._c = ctx.controller
        self.path: str | None = None
        self._request = 0
        self.heading = QLabel("Open a note to see the notes nearest to it in meaning.")
        self.heading.setWordWrap(True)
        self.list = QListWidget()
        self.list.setToolTip("Similarity in meaning (cosine, 1 = same); click to open")
        # A long title is elided in a narrow dock rather than scrolled sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.itemClicked.connect(self._open)
        self.list.itemActivated.connect(self._open)
        self.scan_button = QPushButton("Scan this note")
        self.scan_button.setToolTip(
            "Focus scan: compare the note in the preview with its nearest neighbours"
        )
        self.scan_button.setEnabled(False)
        self.scan_button.clicked.connect(self.scan_this_note)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.scan_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.heading)
        layout.addWidget(self.list, 1)
        layout.addLayout(row)
        preview = ctx.panels.get("preview")
        shown = getattr(preview, "sig_preview_shown", None)
        if shown is not None:
            shown.connect(self.show_related)
        else:
            self._c.sig_preview_requested.connect(self.show_related)
        self._c.sig_vault_opened.connect(lambda _root: self._clear())
        self._c.sig_index_updated.connect(lambda _r: self._again())
        self._c.sig_notes_changed.connect(lambda _p: self._again())

    def _clear(self) -> None:
        self.path = None
        self._request += 1
        self.list.clear()
        self.scan_button.setEnabled(False)
        self.heading.setText("Open a note to see the notes nearest to it in meaning.")

    def _again(self) -> None:
        if self.path is not None:
            self.show_related(self.path)

    def show_related(self, path: str) -> None:
        """List the neighbours of ``path`` (vault-relative), read off the GUI thread."""
        self.path = path
        self.scan_button.setEnabled(True)
        index = self._c.index
        self._request += 1
        request = self._request
        name = path.rsplit("/", 1)[-1].removesuffix(".md")
        if index is None or index.embedding is None:
            self.list.clear()
            self.heading.setText(
                f"<b>{name}</b>: related notes appear once the embedder has indexed the vault."
            )
            return

        async def go() -> None:
            rows = await self._c.run_in(self._c.read_pool, related_notes, index, path)
            if request != self._request:
                return
            self._fill(path, name, rows)

        self._c.spawn(go(), what=f"Finding notes related to {name}")

    def _fill(self, path: str, name: str, rows: list[tuple[NoteSummary, float]]) -> None:
        self.list.clear()
        for note, score in rows:
            item = QListWidgetItem(row_text(note, score))
            item.setData(PATH_ROLE, note.path)
            item.setToolTip(f"{note.path}\nsimilarity {score:.3f}")
            self.list.addItem(item)
        if rows:
            self.heading.setText(
                f"Nearest in meaning to <b>{name}</b> ({plural(len(rows), 'note')}):"
            )
        else:
            self.heading.setText(f"<b>{name}</b> has no indexed neighbour yet.")
        self.sig_related_listed.emit(path, len(rows))

    def _open(self, item: QListWidgetItem) -> None:
        self._c.sig_preview_requested.emit(str(item.data(PATH_ROLE)))

    def scan_this_note(self) -> None:
        if self.path is None:
            return
        tensions = self._ctx.panels.get("tensions")
        scan_focus = getattr(tensions, "scan_focus", None)
        if scan_focus is not None:
            scan_focus(self.path)


PANEL = PanelSpec("related", "Related", "right", QtRelatedPanel)

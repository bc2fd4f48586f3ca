"""Debug: the raw-response debug notes (opened in the preview) and the live app log."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop.ui.context import AppContext
from desktop.ui.panels import PanelSpec

PATH_ROLE = Qt.ItemDataRole.UserRole


def debug_notes(root: Path, folder: str) -> list[str]:
    """Vault-relative paths of the notes under the debug folder, newest first."""
    base = root / folder
    if not base.is_dir():
        return []
    found = [p for p in base.rglob("*.md") if p.is_file()]
    found.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return [p.relative_to(root).as_posix() for p in found]


class QtDebugPanel(QWidget):
    sig_debug_notes_listed = Signal(int)
    """The debug-note list was refreshed: ``(count)``."""

    def __init__(self, ctx: AppContext) -> None:
        super().__init__()
        self._c = ctx.controller
        self._handler = ctx.log_handler
        self.notes = QListWidget()
        self.notes.itemClicked.connect(self._open)
        self.notes.itemActivated.connect(self._open)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(2000)
        self.log.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.log.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        for line in self._handler.lines:
            self.log.appendPlainText(line)
        self._pending: list[str] = []
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.setInterval(100)
        self._flush_timer.timeout.connect(self._flush)
        self._handler.emitter.sig_log_record.connect(
            self._queue, Qt.ConnectionType.QueuedConnection
        )
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        self.notes_label = QLabel("Raw-response debug notes")
        top_layout.addWidget(self.notes_label)
        top_layout.addWidget(self.notes, 1)
        bottom = QWidget()
        bottom_layout = QVBoxLayout(bottom)
        bottom_layout.setContentsMargins(0, 0, 0, 0)
        bottom_layout.addWidget(QLabel("Application log"))
        bottom_layout.addWidget(self.log, 1)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setSizes([150, 300])
        layout = QVBoxLayout(self)
        layout.addWidget(split)
        self._c.sig_vault_opened.connect(lambda _root: self.refresh())
        self._c.sig_notes_changed.connect(lambda _p: self.refresh())
        self._c.sig_index_updated.connect(lambda _r: self.refresh())

    def refresh(self) -> None:
        root = self._c.root
        if root is None:
            return
        folder = self._c.settings.folders.debug

        async def go() -> None:
            paths = await self._c.run_in(self._c.read_pool, debug_notes, root, folder)
            self.notes.clear()
            for path in paths:
                item = QListWidgetItem(Path(path).stem)
                item.setData(PATH_ROLE, path)
                item.setToolTip(path)
                self.notes.addItem(item)
            self.notes_label.setText(f"Raw-response debug notes in {folder}/ ({len(paths)})")
            self.sig_debug_notes_listed.emit(len(paths))

        self._c.spawn(go(), what="Listing debug notes")

    def _open(self, item: QListWidgetItem) -> None:
        self._c.sig_preview_requested.emit(str(item.data(PATH_ROLE)))

    def _queue(self, line: str) -> None:
        # Throttled: a burst of log lines costs one repaint.
        self._pending.append(line)
        if not self._flush_timer.isActive():
            self._flush_timer.start()

    def _flush(self) -> None:
        lines, self._pending = self._pending, []
        if lines:
            self.log.appendPlainText("\n".join(lines))


PANEL = PanelSpec("debug", "Debug", "tab", QtDebugPanel)

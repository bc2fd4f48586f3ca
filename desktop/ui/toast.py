"""The Undo bar: what a review action just did, in words, with Undo; hides by itself.

Non-modal and never in the way: a thin bar under the tabs that leaves after
``HIDE_MS`` (the pointer resting on it keeps it). A new action replaces the
one shown (its Undo stays in History).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

#: How long the bar stays, in milliseconds.
HIDE_MS = 8000


class QtUndoBar(QFrame):
    sig_undo_requested = Signal(str, object)
    """Undo was clicked: ``(what, in words; operation_ids: tuple[str, ...])``."""

    def __init__(self, parent: QWidget | None = None, *, hide_ms: int = HIDE_MS) -> None:
        super().__init__(parent)
        self.setObjectName("undo-bar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(
            "QFrame#undo-bar { background: palette(tooltip-base); border: 1px solid palette(mid);"
            " border-radius: 4px; } QFrame#undo-bar QLabel { color: palette(tooltip-text); }"
        )
        self.text = QLabel()
        self.text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.undo_button = QPushButton("Undo")
        self.undo_button.setToolTip("Take this back (refused for a note edited since)")
        self.undo_button.clicked.connect(self._undo)
        close = QPushButton("×")
        close.setFixedWidth(28)
        close.setToolTip("Hide (Undo stays in History)")
        close.clicked.connect(self.hide)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 2, 4, 2)
        row.addWidget(self.text, 1)
        row.addWidget(self.undo_button)
        row.addWidget(close)
        self.what = ""
        self.operation_ids: tuple[str, ...] = ()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(hide_ms)
        self._timer.timeout.connect(self._expire)
        self.installEventFilter(self)
        self.hide()

    def show_action(self, what: str, operation_ids: tuple[str, ...] = ()) -> None:
        """Show ``what`` was done; with ``operation_ids``, an Undo that takes them back."""
        self.what = what
        self.operation_ids = tuple(operation_ids)
        self.text.setText(what)
        self.text.setToolTip(what)
        self.undo_button.setVisible(bool(self.operation_ids))
        self.undo_button.setEnabled(True)
        self.show()
        self._timer.start()

    def clear(self) -> None:
        """Hide, and forget what Undo would take back (another vault was opened)."""
        self.operation_ids = ()
        self._timer.stop()
        self.hide()

    def _undo(self) -> None:
        if not self.operation_ids:
            return
        ids, self.operation_ids = self.operation_ids, ()
        self.undo_button.setEnabled(False)
        self.text.setText(f"Undoing: {self.what}…")
        self.sig_undo_requested.emit(self.what, ids)

    def _expire(self) -> None:
        if self.underMouse():
            self._timer.start()  # read while the pointer rests on it
            return
        self.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self and event.type() == QEvent.Type.Leave and self.isVisible():
            self._timer.start()
        return False

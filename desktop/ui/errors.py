"""The one non-modal error presenter: background failures are listed, never lost.

Every failure reaches :meth:`ErrorPresenter.show_error` (from the controller's
``sig_error``, and from the excepthook for bugs on the GUI thread). The
presenter keeps all of them in a list the user can read and clear; it never
blocks the window.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShownError:
    at: str
    what: str
    message: str


class ErrorPresenter(QDialog):
    sig_error_shown = Signal(str, str)
    """An error was added: ``(what, message)``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Antinomy — problems")
        self.setModal(False)
        self.resize(560, 320)
        self.errors: list[ShownError] = []
        self._list = QListWidget()
        self._detail = QTextBrowser()
        self._detail.setOpenExternalLinks(False)
        self._headline = QLabel()
        self._headline.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        clear = QPushButton("Clear")
        buttons.addButton(clear, QDialogButtonBox.ButtonRole.ResetRole)
        clear.clicked.connect(self.clear)
        buttons.rejected.connect(self.hide)
        row = QHBoxLayout()
        row.addWidget(self._list, 1)
        row.addWidget(self._detail, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self._headline)
        layout.addLayout(row, 1)
        layout.addWidget(buttons)
        self._list.currentRowChanged.connect(self._select)

    def show_error(self, what: str, message: str) -> None:
        """Add a failure and bring the presenter up (without taking the keyboard)."""
        log.warning("%s: %s", what, message)
        entry = ShownError(datetime.now().strftime("%H:%M:%S"), what, message)
        self.errors.append(entry)
        item = QListWidgetItem(f"{entry.at}  {what}")
        item.setData(Qt.ItemDataRole.ToolTipRole, message)
        self._list.addItem(item)
        self._list.setCurrentRow(self._list.count() - 1)
        n = len(self.errors)
        self._headline.setText(f"{n} problem{'s' if n > 1 else ''} since start-up.")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.show()
        self.sig_error_shown.emit(what, message)

    def _select(self, row: int) -> None:
        if 0 <= row < len(self.errors):
            e = self.errors[row]
            self._detail.setPlainText(f"{e.what}\n\n{e.message}")
        else:
            self._detail.clear()

    def clear(self) -> None:
        self.errors.clear()
        self._list.clear()
        self._headline.setText("No problems.")


def install_excepthook(report: Callable[[str, str], None]) -> Callable[[], None]:
    """Route uncaught GUI-thread exceptions to ``report``; returns the undo."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        log.error("unexpected error", exc_info=(kind, exc, tb))
        text = "".join(traceback.format_exception_only(kind, exc)).strip()
        report("Unexpected error (a bug — please report it)", text)

    sys.excepthook = hook

    def restore() -> None:
        sys.excepthook = previous

    return restore

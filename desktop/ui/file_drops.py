"""Files dropped on a text field of the window go where a drop on the window goes.

A text field (the notes' search box, a settings line, a note's text) takes a dropped
file as its path in words, so a transcript or a source dropped there would never reach
the window's handlers (Memory imports a transcript, Ingest plans a source). This filter,
on each text field of the window, asks the window first (``take(mime, drop)``: whether the
drag is the window's, and on ``drop`` hand it over): whatever the window takes is taken,
and only a drag it refuses is left to the field.

GUI thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QLineEdit,
    QPlainTextEdit,
    QTextEdit,
    QWidget,
)

_TEXT_FIELDS = (QLineEdit, QAbstractSpinBox, QComboBox)
_DRAGS = (QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop)

#: ``take(mime, drop)``: whether the window takes these files; on ``drop``, it does.
Take = Callable[[QMimeData, bool], bool]


def drop_targets(window: QWidget) -> list[QWidget]:
    """The widgets of ``window`` that would take a dropped file as text: line fields, spin
    boxes and editable combo boxes, and the viewport of each text view (drops land there);
    not those of its dialogs, which are windows of their own."""
    out: list[QWidget] = []
    for w in window.findChildren(QWidget):
        if w.window() is not window:
            continue
        if isinstance(w, (QTextEdit, QPlainTextEdit)):
            out.append(w.viewport())
        elif isinstance(w, _TEXT_FIELDS):
            out.append(w)
    return out


class FileDropsToWindow(QObject):
    """Routes file drags over the text fields of ``window`` to the window's ``take``."""

    def __init__(self, window: QWidget, take: Take) -> None:
        super().__init__(window)
        self._window = window
        self._take = take

    def watch(self) -> None:
        """Filter the window's text fields (again once panels have built more of them: the
        window does on each show). Installing a filter twice on a field keeps one."""
        for field in drop_targets(self._window):
            field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _DRAGS and isinstance(event, QDropEvent):
            drop = event.type() == QEvent.Type.Drop
            if self._take(event.mimeData(), drop):
                event.acceptProposedAction()
                return True  # the window's: the field never sees the path as text
        return super().eventFilter(watched, event)

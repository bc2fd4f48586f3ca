"""The PySide6 emit/True reference bug cannot abort the app (see desktop.ui.qt_compat)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal

import desktop.ui.controller  # noqa: F401 - importing it applies the guard
from desktop.ui import qt_compat


class _Emitter(QObject):
    sig_thing_happened = Signal(object)


def test_many_emits_leave_true_alive() -> None:
    e = _Emitter()
    e.sig_thing_happened.connect(lambda _x: None)
    for _ in range(20000):  # more than True's natural reference count
        e.sig_thing_happened.emit(None)
    assert sys.getrefcount(True) > 1000
    assert qt_compat.protect_bools() is False  # applied once, at most

"""A guard against a reference-counting bug of PySide6 6.12 on Python 3.11.

``SignalInstance.emit()`` returns ``True`` without taking a reference to it, so
every emit from Python (ours, qasync's ``call_soon_threadsafe``, pytest-qt's)
takes one reference away from the ``True`` singleton. A few thousand emits
later the interpreter aborts with ``Fatal Python error: bool_dealloc``. Python
3.12+ makes ``True`` immortal, which hides the bug; on 3.11 we do the same by
hand, once, only when a probe shows the bug is present.
"""

from __future__ import annotations

import ctypes
import sys

from PySide6.QtCore import QObject, Signal

#: Added to True's reference count when the bug is present: far more emits than
#: any session makes (3.12's immortal objects use a count of this order).
_TOP_UP = 1 << 40


class _Probe(QObject):
    sig_probe = Signal()


def emit_steals_true() -> bool:
    """True when ``Signal.emit`` drops a reference to ``True`` (the bug)."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(8):
        probe.sig_probe.emit()
    lost = before - sys.getrefcount(True)
    probe.deleteLater()
    return lost >= 8


_protected = False


def protect_bools() -> bool:
    """Make ``True`` effectively immortal if this PySide6 needs it; returns whether it did."""
    global _protected
    if _protected or sys.version_info >= (3, 12) or not emit_steals_true():
        return False
    # The same build also drops references to None and False on some return
    # paths (seen as ``none_dealloc`` at exit): protect all three singletons.
    for singleton in (True, False, None):
        refcount = ctypes.c_ssize_t.from_address(id(singleton))
        refcount.value += _TOP_UP
    _protected = True
    return True

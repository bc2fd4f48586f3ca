"""The Elevate form is a normal titled dialog window: title bar with its title and a close
button, owned by the main window, never made at zero height."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow, QWidget

from desktop.ui.dialogs.review_dialogs import DefeatDialog, ElevateDialog


def test_elevate_is_a_titled_dialog_of_the_main_window(qtbot) -> None:  # type: ignore[no-untyped-def]
    window = QMainWindow()
    qtbot.addWidget(window)
    deep = QWidget()  # the pair list asks from inside a tab
    window.setCentralWidget(deep)
    window.show()
    dialog = ElevateDialog("Friday releases", deep)
    qtbot.addWidget(dialog)
    flags = dialog.windowFlags()
    assert dialog.windowType() == Qt.WindowType.Dialog
    assert flags & Qt.WindowType.WindowTitleHint
    assert flags & Qt.WindowType.WindowCloseButtonHint
    assert not flags & Qt.WindowType.FramelessWindowHint
    assert not flags & Qt.WindowType.WindowContextHelpButtonHint
    assert dialog.windowTitle() == "Elevate tension to a principle"
    assert dialog.parentWidget() is window
    # Its size comes from its form: never a zero-high window for the window manager.
    assert dialog.height() >= dialog.minimumSizeHint().height() > 0
    assert dialog.width() >= 520
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.isWindow() and dialog.isVisible()
    assert dialog.height() >= dialog.minimumSizeHint().height()
    dialog.close()


def test_defeat_shares_the_titled_form(qtbot) -> None:  # type: ignore[no-untyped-def]
    dialog = DefeatDialog("Quiet weekends")
    qtbot.addWidget(dialog)
    assert dialog.windowTitle() == "Mark as defeated"
    assert dialog.windowFlags() & Qt.WindowType.WindowTitleHint
    assert dialog.height() > 0

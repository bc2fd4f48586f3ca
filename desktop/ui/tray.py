"""The system-tray icon: keeps the app resident when the window is closed."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget


def tray_available() -> bool:
    return QSystemTrayIcon.isSystemTrayAvailable()


class QtTray(QSystemTrayIcon):
    def __init__(self, icon: QIcon, *, window: QWidget, quit_app: Callable[[], None]) -> None:
        super().__init__(icon, window)
        self._window = window
        self.setToolTip("Antinomy")
        menu = QMenu(window)
        show = QAction("Show Antinomy", menu)
        show.triggered.connect(self.show_window)
        quit_action = QAction("Quit", menu)
        quit_action.triggered.connect(quit_app)
        menu.addAction(show)
        menu.addSeparator()
        menu.addAction(quit_action)
        self.setContextMenu(menu)
        self._menu = menu
        self.activated.connect(self._activated)

    def show_window(self) -> None:
        self._window.showNormal()
        self._window.raise_()
        self._window.activateWindow()

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.show_window()

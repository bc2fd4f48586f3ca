"""The main window: composes the registered panels, menus, status bar, tray. Nothing else.

A panel may offer ``menu_actions() -> list[QAction]``; they go into a menu named
after the panel, which also makes their keyboard shortcuts live window-wide.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QByteArray, QMimeData, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QCloseEvent,
    QDragEnterEvent,
    QDropEvent,
    QIcon,
    QKeySequence,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QMainWindow,
    QMenu,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.resources import resources_dir
from desktop.ui.context import AppContext
from desktop.ui.controller import AppController
from desktop.ui.dialogs.settings_dialog import SettingsDialog
from desktop.ui.endpoint import endpoint_for
from desktop.ui.errors import ErrorPresenter
from desktop.ui.file_drops import FileDropsToWindow
from desktop.ui.logview import QtLogHandler
from desktop.ui.operations import history as history_ops
from desktop.ui.panels import panels
from desktop.ui.panels.ingest import dropped_source
from desktop.ui.panels.memory_import import dropped_files
from desktop.ui.statusbar import QtStatusBar
from desktop.ui.toast import QtUndoBar
from desktop.ui.tray import QtTray, tray_available
from desktop.ui.watcher import VaultWatcher

#: Side docks on first show: (share of the window's width, least, most) in pixels.
DOCK_SHARES = {"notes": (0.19, 260, 420), "preview": (0.24, 320, 560)}


def app_icon() -> QIcon:
    return QIcon(str(resources_dir() / "icons" / "antinomy.svg"))


class MainWindow(QMainWindow):
    sig_window_hidden_to_tray = Signal()
    """The window was closed while a tray icon keeps the app running."""

    def __init__(
        self,
        controller: AppController,
        *,
        log_handler: QtLogHandler,
        use_tray: bool | None = None,
    ) -> None:
        super().__init__()
        self.controller = controller
        self.setWindowTitle("Antinomy")
        self.setWindowIcon(app_icon())
        self.setMinimumSize(720, 480)
        self.resize(1280, 800)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks)
        self.ctx = AppContext(controller=controller, log_handler=log_handler)
        self.errors = ErrorPresenter(self)
        controller.sig_error.connect(self.errors.show_error)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        # What an action just did, with Undo: under the tabs, whichever tab is shown.
        self.undo_bar = QtUndoBar()
        self.undo_bar.sig_undo_requested.connect(self._undo_from_bar)
        controller.sig_action_done.connect(self.undo_bar.show_action)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(2)
        column.addWidget(self.tabs, 1)
        column.addWidget(self.undo_bar)
        self.setCentralWidget(central)
        self.docks: dict[str, QDockWidget] = {}
        self._view_menu = QMenu("&View", self)
        # The loopback endpoint (agent hooks): starts once the models are ready.
        self.endpoint = endpoint_for(controller)
        self._build_panels()
        self._build_menus()
        self.status = QtStatusBar(controller, self)
        self.setStatusBar(self.status)
        self.watcher = VaultWatcher(controller)
        controller.sig_vault_opened.connect(self._vault_opened)
        controller.sig_settings_changed.connect(lambda _s: self._fill_recent())
        self._quitting = False
        self._shown_once = False
        self.tray: QtTray | None = None
        if use_tray if use_tray is not None else tray_available():
            self.tray = QtTray(app_icon(), window=self, quit_app=self.quit_app)
            self.tray.show()
        self._restore_geometry()
        self.setAcceptDrops(True)  # a conversation transcript (.jsonl) dropped anywhere is imported
        # ... on a text field too, where it would otherwise land as its path in words.
        self._field_drops = FileDropsToWindow(self, self.take_files)
        self._field_drops.watch()
        if controller.settings_problem:
            self.errors.show_error("Reading the settings", controller.settings_problem)

    # ------------------------------------------------------------------ building

    def _build_panels(self) -> None:
        for spec in panels():
            widget = spec.factory(self.ctx)
            widget.setObjectName(f"panel-{spec.key}")
            self.ctx.panels[spec.key] = widget
            if spec.area == "tab":
                self.tabs.addTab(widget, spec.title)
            else:
                dock = QDockWidget(spec.title, self)
                dock.setObjectName(f"dock-{spec.key}")
                dock.setWidget(widget)
                area = (
                    Qt.DockWidgetArea.LeftDockWidgetArea
                    if spec.area == "left"
                    else Qt.DockWidgetArea.RightDockWidgetArea
                )
                self.addDockWidget(area, dock)
                self.docks[spec.key] = dock
                self._view_menu.addAction(dock.toggleViewAction())
        self._fit_docks()

    def _fit_docks(self) -> None:
        """The side docks' widths as shares of the window's (within bounds), so the tabs
        keep most of a 1280-wide window and the note names fit at 1920."""
        left = self.docks.get("notes")
        right = self.docks.get("preview")
        if left is None or right is None:
            return
        width = self.width()
        widths = [
            round(min(max(width * share, low), high))
            for share, low, high in (DOCK_SHARES["notes"], DOCK_SHARES["preview"])
        ]
        self.resizeDocks([left, right], widths, Qt.Orientation.Horizontal)

    def panel(self, key: str) -> QWidget:
        return self.ctx.panels[key]

    def show_panel(self, key: str) -> None:
        widget = self.ctx.panels[key]
        if key in self.docks:
            self.docks[key].show()
            self.docks[key].raise_()
        else:
            self.tabs.setCurrentWidget(widget)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        open_action = QAction("&Open vault…", self)
        open_action.setShortcut(QKeySequence.StandardKey.Open)
        open_action.triggered.connect(self.choose_vault)
        file_menu.addAction(open_action)
        self._recent_menu = file_menu.addMenu("Open &recent")
        self._fill_recent()
        import_action = QAction("&Import conversation transcript…", self)
        import_action.setToolTip("Capture a Claude Code transcript (.jsonl) into memory")
        import_action.triggered.connect(self.import_transcript)
        file_menu.addAction(import_action)
        self.import_action = import_action
        settings_action = QAction("&Settings…", self)
        settings_action.setShortcut(QKeySequence.StandardKey.Preferences)
        settings_action.triggered.connect(self.edit_settings)
        file_menu.addAction(settings_action)
        file_menu.addSeparator()
        quit_action = QAction("&Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.quit_app)
        file_menu.addAction(quit_action)
        for key, widget in self.ctx.panels.items():
            make = getattr(widget, "menu_actions", None)
            if make is None:
                continue
            actions: list[QAction] = make()
            title = next(s.title for s in panels() if s.key == key)
            menu = bar.addMenu(f"&{title}")
            for action in actions:
                menu.addAction(action)
        bar.addMenu(self._view_menu)
        self._view_menu.addSeparator()
        for i in range(self.tabs.count()):
            action = QAction(self.tabs.tabText(i), self)
            action.setShortcut(QKeySequence(f"Alt+{i + 1}"))
            action.triggered.connect(partial(self.tabs.setCurrentIndex, i))
            self._view_menu.addAction(action)
        problems = QAction("&Problems…", self)
        problems.triggered.connect(self.errors.show)
        self._view_menu.addAction(problems)

    def _fill_recent(self) -> None:
        self._recent_menu.clear()
        for path in self.controller.settings.recent_vaults:
            action = self._recent_menu.addAction(path)
            action.triggered.connect(partial(self.controller.open_vault, Path(path)))
        self._recent_menu.setEnabled(bool(self.controller.settings.recent_vaults))

    # ------------------------------------------------------------------ actions

    def choose_vault(self) -> None:
        start = str(self.controller.root or Path.home())
        folder = QFileDialog.getExistingDirectory(self, "Open a vault (a folder of notes)", start)
        if folder:
            self.controller.open_vault(Path(folder))

    def import_transcript(self) -> None:
        """File ▸ Import conversation transcript…: the Memory panel imports it, in view."""
        if "memory" in self.ctx.panels:
            self.show_panel("memory")
            self.ctx.panels["memory"].choose_and_import()  # type: ignore[attr-defined]

    def take_files(self, mime: QMimeData, drop: bool) -> bool:
        """Whether dragged files are the window's — transcripts for Memory, one source for
        Ingest — and, on ``drop``, hand them over: what a drop on the window does, for a
        drop on one of its text fields."""
        transcripts = dropped_files(mime, transcripts_only=True)
        if transcripts and "memory" in self.ctx.panels:
            if drop:
                self.show_panel("memory")
                self.ctx.panels["memory"].import_files(transcripts)  # type: ignore[attr-defined]
            return True
        source = dropped_source(mime)
        if source is not None and "ingest" in self.ctx.panels:
            if drop:
                self.ctx.panels["ingest"].dropped(source)  # type: ignore[attr-defined]
            return True
        return False

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if "memory" in self.ctx.panels and dropped_files(event.mimeData(), transcripts_only=True):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        files = dropped_files(event.mimeData(), transcripts_only=True)
        if files and "memory" in self.ctx.panels:
            event.acceptProposedAction()
            self.show_panel("memory")
            self.ctx.panels["memory"].import_files(files)  # type: ignore[attr-defined]

    def edit_settings(self) -> None:
        dialog = SettingsDialog(self.controller.settings, self, vault=self.controller.root)
        if dialog.exec() and dialog.result_settings is not None:
            self.controller.apply_settings(dialog.result_settings)
        dialog.deleteLater()

    def _vault_opened(self, root: Path) -> None:
        self.setWindowTitle(f"{root.name} — Antinomy")
        self.undo_bar.clear()  # its operations belong to the vault left
        self.watcher.watch(root)

    def _undo_from_bar(self, what: str, operation_ids: tuple[str, ...]) -> None:
        history_ops.undo_all(self.controller, operation_ids, what=what)

    # ------------------------------------------------------------------ geometry and closing

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._field_drops.watch()
        if not self._shown_once:
            self._shown_once = True
            if not self.controller.settings.window_state:  # a saved layout is the user's
                self._fit_docks()

    def _restore_geometry(self) -> None:
        s = self.controller.settings
        # Dock layout first: restoring it after the geometry would resize the window.
        if s.window_state:
            self.restoreState(QByteArray.fromBase64(s.window_state.encode()))
        if s.window_geometry:
            self.restoreGeometry(QByteArray.fromBase64(s.window_geometry.encode()))

    def save_geometry(self) -> None:
        from dataclasses import replace

        geometry = bytes(self.saveGeometry().toBase64().data()).decode()
        state = bytes(self.saveState().toBase64().data()).decode()
        s = self.controller.settings
        self.controller.update_settings(replace(s, window_geometry=geometry, window_state=state))

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_geometry()
        if self.tray is not None and self.tray.isVisible() and not self._quitting:
            # Resident: the engines stay warm; Quit is in the tray menu.
            event.ignore()
            self.hide()
            self.sig_window_hidden_to_tray.emit()
            return
        self.shutdown()
        event.accept()

    def quit_app(self) -> None:
        """Quit for real: save, stop the engines, leave the event loop."""
        self._quitting = True
        self.close()
        app = QApplication.instance()
        if app is not None:
            app.quit()

    def shutdown(self) -> None:
        self.watcher.stop()
        if self.tray is not None:
            self.tray.hide()
        self.errors.close()
        self.controller.close()

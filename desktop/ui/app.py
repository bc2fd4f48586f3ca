"""Application bootstrap: QApplication, the qasync loop, the window, the runtime.

The window is shown first; the models warm and the vault indexes in the
background, so the window is usable at once.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from PySide6.QtWidgets import QApplication

from desktop.ui.controller import AppController, RuntimeFactory, default_runtime
from desktop.ui.errors import install_excepthook
from desktop.ui.logview import QtLogHandler, install_log_handler, remove_log_handler
from desktop.ui.window import MainWindow, app_icon
from inference.runtime import Runtime

log = logging.getLogger(__name__)

#: Set by the launcher before Qt is imported, for the start-up benchmark.
LAUNCHED_AT: float | None = None


def build_window(
    *,
    loop: asyncio.AbstractEventLoop,
    runtime: Runtime | None = None,
    make_runtime: RuntimeFactory = default_runtime,
    log_handler: QtLogHandler | None = None,
    use_tray: bool | None = None,
    owns_runtime: bool = True,
) -> MainWindow:
    """The main window over a new controller (not started yet: call ``window.controller.start``)."""
    controller = AppController(
        loop=loop, runtime=runtime, make_runtime=make_runtime, owns_runtime=owns_runtime
    )
    return MainWindow(controller, log_handler=log_handler or QtLogHandler(), use_tray=use_tray)


def run_app(argv: Sequence[str] | None = None, *, vault: Path | None = None) -> int:
    """Open the desktop app and run until the user quits. Returns the exit code."""
    import qasync

    app = QApplication.instance() or QApplication(list(argv or sys.argv[:1]))
    assert isinstance(app, QApplication)
    app.setApplicationName("Antinomy")
    app.setOrganizationName("Antinomy")
    app.setWindowIcon(app_icon())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    handler = install_log_handler()
    window = build_window(loop=loop, log_handler=handler)
    restore_hook = install_excepthook(window.errors.show_error)
    app.setQuitOnLastWindowClosed(window.tray is None)
    window.show()
    if LAUNCHED_AT is not None:
        log.info("window shown %.3f s after launch", time.perf_counter() - LAUNCHED_AT)
    window.controller.start(vault)
    try:
        with loop:
            loop.run_forever()
    finally:
        window.shutdown()
        restore_hook()
        remove_log_handler(handler)
    return 0

"""Runs Hunter scans off the GUI thread, one at a time, with Stop.

Each scan runs on its own single-worker executor with the runtime's queued
generator and judge as engines, so each model is still only touched by its
own worker.
Every scan has a request number: Stop (or a newer scan) bumps it, the GUI
returns to idle at once, and the stopped scan's late result is dropped.
"""

from __future__ import annotations

from PySide6.QtCore import Signal

from desktop.flows.hunter import Mode, ScanRun, scan
from desktop.flows.settings import resolve
from desktop.ui.controller import AppController
from desktop.ui.flow_runner import FlowRunner


class ScanRunner(FlowRunner):
    sig_scan_started = Signal(str)
    """A scan began: ``(mode)``."""
    sig_scan_progress = Signal(int, int, str)
    """Scan progress: ``(done, total, what)``; throttled."""
    sig_scan_finished = Signal(object)
    """A scan ended with a run (any status but a user Stop): ``(ScanRun)``."""
    sig_scan_stopped = Signal()
    """The user stopped the scan; the GUI is idle again."""
    sig_scan_failed = Signal(str)
    """The scan could not start or crashed: ``(message)``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller, thread_name="antinomy-scan")
        self._signals(
            failed=self.sig_scan_failed,
            progress=self.sig_scan_progress,
            stopped=self.sig_scan_stopped,
        )

    def start(self, mode: Mode, *, focus: str | None = None) -> None:
        """Start a scan; a scan still running is stopped first (its result is dropped)."""
        if self.running:
            self.stop()
        engine = self._engine()
        if engine is None:
            return
        judge = self._c.runtime.queued_judge()
        index = self._c.index
        if index is None:
            self.sig_scan_failed.emit("The vault is still being indexed — try again in a moment.")
            return
        request, stop, progress = self._begin()
        settings = resolve(saved=self._c.settings).scan
        self.sig_scan_started.emit(mode)

        def work() -> ScanRun:
            return scan(
                index,
                engine,
                judge=judge,
                mode=mode,
                focus=focus,
                settings=settings,
                stop=stop,
                progress=progress,
            )

        self.run(
            work,
            request=request,
            on_done=self.sig_scan_finished.emit,
            what="Running the scan",
            describe=str,
        )

"""Runs Hunter scans off the GUI thread, one at a time, with Stop.

Each scan runs on its own single-worker executor with the runtime's queued
generator as engine, so the ``Llama`` is still only touched by its worker.
Every scan has a request number: Stop (or a newer scan) bumps it, the GUI
returns to idle at once, and the stopped scan's late result is dropped.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.flows.hunter import Mode, ScanRun, scan
from desktop.ui.controller import AppController
from inference.base import StopFlag
from inference.errors import ModelUnavailable
from inference.runtime import State


class ScanRunner(QObject):
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
        super().__init__(controller)
        self._c = controller
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-scan")
        self.request = 0
        self.running = False
        self._stop: StopFlag | None = None
        self._pending: tuple[int, int, str] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._flush)

    def start(self, mode: Mode, *, focus: str | None = None) -> None:
        """Start a scan; a scan still running is stopped first (its result is dropped)."""
        if self.running:
            self.stop()
        if self._c.runtime.state is not State.READY:
            problem = self._c.runtime.error
            self.sig_scan_failed.emit(
                str(problem)
                if problem
                else "The models are still loading — try again when the status bar says ready."
            )
            return
        index = self._c.index
        if index is None:
            self.sig_scan_failed.emit("The vault is still being indexed — try again in a moment.")
            return
        try:
            engine = self._c.runtime.queued_generator()
        except ModelUnavailable as exc:
            self.sig_scan_failed.emit(str(exc))
            return
        self.request += 1
        request = self.request
        stop = StopFlag()
        self._stop = stop
        self.running = True
        settings = self._c.settings.scan_settings()
        self.sig_scan_started.emit(mode)

        def progress(done: int, total: int, what: str) -> None:
            self._c.from_worker(self._queue, request, done, total, what)

        def work() -> ScanRun:
            return scan(
                index,
                engine,
                mode=mode,
                focus=focus,
                settings=settings,
                stop=stop,
                progress=progress,
            )

        async def go() -> None:
            try:
                run = await self._c.run_in(self.pool, work)
            except Exception as exc:
                if request == self.request:
                    self.running = False
                    self.sig_scan_failed.emit(str(exc))
                return
            if request != self.request:
                return  # stopped or replaced: the GUI has moved on
            self.running = False
            self._timer.stop()
            self.sig_scan_finished.emit(run)

        self._c.spawn(go(), what="Running the scan")

    def stop(self) -> None:
        """Stop now: the generation ends at its next token; the GUI is idle at once."""
        if self._stop is not None:
            self._stop.set()
        if not self.running:
            return
        self.running = False
        self.request += 1
        self._timer.stop()
        self.sig_scan_stopped.emit()

    def close(self) -> None:
        if self._stop is not None:
            self._stop.set()
        self.running = False
        self.pool.shutdown(wait=True, cancel_futures=True)

    def _queue(self, request: int, done: int, total: int, what: str) -> None:
        if request != self.request:
            return
        self._pending = (done, total, what)
        if not self._timer.isActive():
            self._timer.start()

    def _flush(self) -> None:
        if self._pending is not None and self.running:
            self.sig_scan_progress.emit(*self._pending)

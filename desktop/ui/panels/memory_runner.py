"""Runs a memory consolidation off the GUI thread, one at a time, with Stop.

The run uses the runtime's queued generator, so the ``Llama`` is only touched by
its own worker. Stop sets the flag (the generation ends at its next token, the
flow keeps the steps already written) and returns the GUI to idle at once; the
stopped run's report still arrives and is shown, since its finished steps are
real writes, unless a newer run started meanwhile.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.flows.memory import Report, consolidate
from desktop.ui.controller import AppController
from inference.base import StopFlag
from inference.errors import ModelUnavailable
from inference.runtime import State


class ConsolidationRunner(QObject):
    sig_consolidation_started = Signal()
    """A consolidation began."""
    sig_consolidation_progress = Signal(int, int, str)
    """Progress: ``(steps done, steps planned, what)``; throttled."""
    sig_consolidation_finished = Signal(object)
    """A run ended (any status, ``stopped`` included): ``(Report)``."""
    sig_consolidation_stopped = Signal()
    """The user pressed Stop; the GUI is idle again (the report follows)."""
    sig_consolidation_failed = Signal(str)
    """The run could not start or crashed: ``(message)``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller)
        self._c = controller
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-memory")
        self.request = 0
        self.running = False
        self._stop: StopFlag | None = None
        self._pending: tuple[int, int, str] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._flush)

    def start(self, *, force: bool = True) -> None:
        """Consolidate the vault's pending memory; ``force`` closes the open batch first."""
        if self.running:
            return
        root = self._c.root
        if root is None:
            self.sig_consolidation_failed.emit("Open a vault first.")
            return
        runtime = self._c.runtime
        if runtime.state is not State.READY:
            problem = runtime.error
            self.sig_consolidation_failed.emit(
                str(problem)
                if problem
                else "The models are still loading — try again when the status bar says ready."
            )
            return
        try:
            engine = runtime.queued_generator()
        except ModelUnavailable as exc:
            self.sig_consolidation_failed.emit(str(exc))
            return
        self.request += 1
        request = self.request
        stop = StopFlag()
        self._stop = stop
        self.running = True
        self.sig_consolidation_started.emit()

        def progress(done: int, total: int, what: str) -> None:
            self._c.from_worker(self._queue, request, done, total, what)

        def work(vault: Path) -> Report:
            return consolidate(vault, engine, force=force, stop=stop, progress=progress)

        async def go() -> None:
            try:
                report = await self._c.run_in(self.pool, work, root)
            except Exception as exc:
                if request == self.request:
                    self.running = False
                    self.sig_consolidation_failed.emit(f"{type(exc).__name__}: {exc}")
                return
            if request == self.request:
                self.running = False
                self._timer.stop()
            elif self.running:
                return  # a newer run is on screen
            if report.operations:
                self._c.sig_history_changed.emit()
                self._c.notes_changed(report.pages)
            self.sig_consolidation_finished.emit(report)

        self._c.spawn(go(), what="Consolidating memory")

    def stop(self) -> None:
        """Stop now: the GUI is idle at once; the run ends at its next token."""
        if self._stop is not None:
            self._stop.set()
        if not self.running:
            return
        self.running = False
        self.request += 1
        self._timer.stop()
        self.sig_consolidation_stopped.emit()

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
            self.sig_consolidation_progress.emit(*self._pending)

"""The shared half of running a blocking flow off the GUI thread, one at a time, with Stop.

A subclass (the scan, the consolidation) declares its own ``sig_*`` signals and
hands three of them to :meth:`FlowRunner._signals`; this base owns the single-worker
executor, the request number (Stop or a newer run bumps it, so a late result
is dropped), the stop flag and the throttled progress (at most one repaint per
100 ms, calibre-style).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from PySide6.QtCore import QObject, QTimer, SignalInstance

from desktop.flows.progress import Progress
from desktop.ui.controller import AppController
from foundation.errors import ModelUnavailable
from inference.base import Generator, StopFlag
from inference.runtime import State

T = TypeVar("T")


class FlowRunner(QObject):
    def __init__(self, controller: AppController, *, thread_name: str) -> None:
        super().__init__(controller)
        self._c = controller
        self.pool = ThreadPoolExecutor(1, thread_name_prefix=thread_name)
        self.request = 0
        self.running = False
        self._stop: StopFlag | None = None
        self._pending: tuple[int, int, str] | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._flush)

    def _signals(
        self, *, failed: SignalInstance, progress: SignalInstance, stopped: SignalInstance
    ) -> None:
        """The subclass's own signals for "could not run", throttled progress and Stop."""
        self._failed_signal = failed
        self._progress_signal = progress
        self._stopped_signal = stopped

    def _emit_failed(self, message: str) -> None:
        self._failed_signal.emit(message)

    # -- shared ------------------------------------------------------------

    def _engine(self) -> Generator | None:
        """The queued generator, or None after saying why the run cannot start."""
        runtime = self._c.runtime
        if runtime.state is not State.READY:
            problem = runtime.error
            self._emit_failed(
                str(problem)
                if problem
                else "The models are still loading — try again when the status bar says ready."
            )
            return None
        try:
            return runtime.queued_generator()
        except ModelUnavailable as exc:
            self._emit_failed(str(exc))
            return None

    def _begin(self) -> tuple[int, StopFlag, Progress]:
        """A new request: its number, its stop flag and a progress callback for workers."""
        self.request += 1
        request = self.request
        stop = StopFlag()
        self._stop = stop
        self.running = True

        def progress(done: int, total: int, what: str) -> None:
            self._c.from_worker(self._queue, request, done, total, what)

        return request, stop, progress

    def _finished(self) -> None:
        self.running = False
        self._timer.stop()

    def run(
        self,
        work: Callable[[], T],
        *,
        request: int,
        on_done: Callable[[T], None],
        what: str,
        describe: Callable[[BaseException], str] = lambda exc: str(exc) or type(exc).__name__,
        report_stopped: bool = False,
    ) -> None:
        """Run ``work`` on this runner's worker, then ``on_done(result)`` on the GUI thread —
        unless Stop or a newer run came first (with ``report_stopped``, a stopped run is
        still reported while no newer one is on screen: what it wrote stays written). A
        failure is said through the failed signal (``describe``), never raised."""

        async def go() -> None:
            try:
                result = await self._c.run_in(self.pool, work)
            except Exception as exc:
                if request == self.request:
                    self.running = False
                    self._emit_failed(describe(exc))
                return
            if request == self.request:
                self._finished()
            elif not report_stopped or self.running:
                return  # stopped, or a newer run is on screen
            on_done(result)

        self._c.spawn(go(), what=what)

    def stop(self) -> None:
        """Stop now: the work ends at its next token; the GUI is idle at once."""
        if self._stop is not None:
            self._stop.set()
        if not self.running:
            return
        self.running = False
        self.request += 1
        self._timer.stop()
        self._stopped_signal.emit()

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
            self._progress_signal.emit(*self._pending)

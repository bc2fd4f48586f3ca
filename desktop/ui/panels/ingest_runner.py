"""Plans an ingest off the GUI thread, one at a time, with Stop.

The model is the runtime's queued generator (the ``Llama`` is only touched by
its own worker); the judge is the runtime's when it has one. Stop sets the
flag and returns the GUI to idle at once; a stopped plan writes nothing.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal

from desktop.flows.ingest import IngestReport, IngestSettings, plan_ingest
from desktop.flows.settings import resolve
from desktop.ui.controller import AppController
from desktop.ui.flow_runner import FlowRunner
from foundation.errors import ModelUnavailable
from inference.judge import Judge

PHASES = ("reading", "planning", "validating", "repairing", "checking", "previewing")


class IngestRunner(FlowRunner):
    sig_ingest_started = Signal(str)
    """Planning began: ``(source path)``."""
    sig_ingest_progress = Signal(int, int, str)
    """Progress: ``(phase number, phases, "phase: detail")``; throttled."""
    sig_ingest_finished = Signal(object)
    """A plan ended (any status): ``(IngestReport)``."""
    sig_ingest_stopped = Signal()
    """The user pressed Stop; the GUI is idle again."""
    sig_ingest_failed = Signal(str)
    """The plan could not start, or the source was refused: ``(message)``."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller, thread_name="antinomy-ingest")
        self._signals(
            failed=self.sig_ingest_failed,
            progress=self.sig_ingest_progress,
            stopped=self.sig_ingest_stopped,
        )

    def judge(self) -> Judge | None:
        """The resident judge, or None when it is not loaded (the report then says so)."""
        try:
            return self._c.runtime.queued_judge()
        except ModelUnavailable:
            return None

    def start(self, source: Path) -> None:
        if self.running:
            return
        root = self._c.root
        if root is None:
            self.sig_ingest_failed.emit("Open a vault first.")
            return
        engine = self._engine()
        if engine is None:
            return
        judge = self.judge()
        index = self._c.index
        folders = resolve(saved=self._c.settings).folders
        settings = IngestSettings(sources_folder=folders.sources, pages_folder=folders.subjects)
        request, stop, progress = self._begin()
        self.sig_ingest_started.emit(str(source))

        def phase(name: str, detail: str) -> None:
            number = PHASES.index(name) if name in PHASES else 0
            progress(number, len(PHASES), f"{name}: {detail}")

        def work(vault: Path) -> IngestReport:
            return plan_ingest(
                vault,
                source,
                engine=engine,
                judge=judge,
                index=index,
                settings=settings,
                stop=stop,
                progress=phase,
            )

        self.run(
            lambda: work(root),
            request=request,
            on_done=self.sig_ingest_finished.emit,
            what="Planning an ingest",
        )

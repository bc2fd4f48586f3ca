"""Runs a memory consolidation off the GUI thread, one at a time, with Stop.

The run uses the runtime's queued generator, so the ``Llama`` is only touched by
its own worker. Stop sets the flag (the generation ends at its next token, the
flow keeps the steps already written) and returns the GUI to idle at once; the
stopped run's report still arrives and is shown, since its finished steps are
real writes, unless a newer run started meanwhile.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal

from desktop.flows.memory import Report, consolidate
from desktop.flows.settings import resolve
from desktop.ui.controller import AppController
from desktop.ui.flow_runner import FlowRunner


class ConsolidationRunner(FlowRunner):
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
        super().__init__(controller, thread_name="antinomy-memory")
        self._signals(
            failed=self.sig_consolidation_failed,
            progress=self.sig_consolidation_progress,
            stopped=self.sig_consolidation_stopped,
        )

    def start(self, *, force: bool = True) -> None:
        """Consolidate the vault's pending memory; ``force`` closes the open batch first."""
        if self.running:
            return
        root = self._c.root
        if root is None:
            self.sig_consolidation_failed.emit("Open a vault first.")
            return
        engine = self._engine()
        if engine is None:
            return
        runtime = self._c.runtime
        embedder = runtime.queued_embedder()
        judge = runtime.queued_judge()  # the resident judge checks entailment and duplicates
        request, stop, progress = self._begin()
        settings = resolve(saved=self._c.settings).memory
        self.sig_consolidation_started.emit()

        def work(vault: Path) -> Report:
            return consolidate(
                vault,
                engine,
                judge=judge,
                embedder=embedder,
                force=force,
                stop=stop,
                progress=progress,
                settings=settings,
            )

        def done(report: Report) -> None:
            if report.operations:
                self._c.sig_history_changed.emit()
                self._c.notes_changed(report.pages)
            self.sig_consolidation_finished.emit(report)

        self.run(
            lambda: work(root),
            request=request,
            on_done=done,
            what="Consolidating memory",
            describe=lambda exc: f"{type(exc).__name__}: {exc}",
            report_stopped=True,  # what a stopped consolidation wrote stays written
        )

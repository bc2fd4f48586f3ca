"""Automatic consolidation: after a batch closes, in the background, one at a time.

The app and ``antinomy serve`` run the same endpoint code; its memory routes own
one :class:`AutoConsolidator`. :meth:`AutoConsolidator.notify` (any thread, cheap:
it sets an event) is called after each captured turn and once at start. The
worker thread then waits :data:`SETTLE_SECONDS` (a burst of turns makes one
run), closes a batch left open from an earlier day, and consolidates while
closed batches hold pending lines. Each run's report is saved as the last
report, which the Memory panel shows. The consolidation lock keeps it to one
run per vault, across processes: a run the user started (or another process)
makes this one report ``already_running`` and wait for the next notice.

The setting ``memory.auto_consolidate`` (Settings) turns it off; it is read
before every run, so a change applies at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from desktop.flows.memory.batches import RawStore
from desktop.flows.memory.capture import close_stale_batch
from desktop.flows.memory.consolidate import consolidate
from desktop.flows.memory.progress import read_progress
from desktop.flows.memory.records import MemorySettings, Report
from desktop.flows.memory.rejected import RejectedStore
from desktop.flows.memory.steps import anything_pending
from inference.base import Generator, StopFlag
from inference.embedder import Embedder
from inference.judge import Judge

log = logging.getLogger(__name__)

SETTLE_SECONDS = 2.0
#: The worker checks for the endpoint closing this often, and ends after IDLE_SECONDS idle.
POLL_SECONDS = 0.1
IDLE_SECONDS = 60.0
#: A failed run (models still loading, say) is tried again this often, this many times.
RETRY_SECONDS = 5.0
MAX_RETRIES = 12
#: Runs in a row before waiting for the next notice (each run has its own budget).
MAX_RUNS_PER_NOTICE = 20


class _Closing(StopFlag):
    """Stop as soon as the endpoint closes."""

    def __init__(self, closing: threading.Event) -> None:
        super().__init__()
        self._closing = closing

    def is_set(self) -> bool:
        return self._closing.is_set() or super().is_set()


class AutoConsolidator:
    def __init__(
        self,
        vault_root: Path,
        *,
        generator: Callable[[], Generator],
        embedder: Callable[[], Embedder | None],
        judge: Callable[[], Judge | None],
        enabled: Callable[[], bool],
        closing: threading.Event,
        settings: MemorySettings | None = None,
        settle_seconds: float = SETTLE_SECONDS,
        on_report: Callable[[Report], None] | None = None,
    ) -> None:
        self.root = vault_root
        self._generator = generator
        self._embedder = embedder
        self._judge = judge
        self._enabled = enabled
        self._closing = closing
        self._settings = settings or MemorySettings()
        self._settle = settle_seconds
        self._on_report = on_report
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.reports: list[Report] = []

    def notify(self) -> None:
        """Something may have closed a batch: consolidate soon (any thread; never blocks)."""
        with self._lock:
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="antinomy-auto-consolidate", daemon=True
                )
                self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def _loop(self) -> None:
        idle = 0.0
        retries = 0
        while not self._closing.is_set():
            if not self._wake.wait(timeout=POLL_SECONDS):
                idle += POLL_SECONDS
                if idle < IDLE_SECONDS:
                    continue
                with self._lock:
                    if not self._wake.is_set():
                        self._thread = None  # idle: the next notice starts another thread
                        return
            idle = 0.0
            self._wake.clear()
            if self._closing.wait(self._settle):
                return
            try:
                self.run_pending()
                retries = 0
            except Exception:  # a background failure must never take the endpoint down
                log.exception("automatic consolidation failed")
                # The models may still be loading: try again a little later, a few times.
                retries += 1
                if retries <= MAX_RETRIES and not self._closing.wait(RETRY_SECONDS):
                    self._wake.set()
        with self._lock:
            self._thread = None

    def pending(self) -> bool:
        close_stale_batch(self.root, today=datetime.now(UTC).date().isoformat())
        journal = read_progress(self.root, self._settings.memory_folder)
        return anything_pending(RawStore(self.root), RejectedStore(self.root), journal)

    def run_pending(self) -> list[Report]:
        """Consolidate while closed batches hold pending lines (this thread blocks)."""
        done: list[Report] = []
        for _ in range(MAX_RUNS_PER_NOTICE):
            if self._closing.is_set() or not self._enabled() or not self.pending():
                break
            report = consolidate(
                self.root,
                self._generator(),
                judge=self._judge(),
                embedder=self._embedder(),
                stop=_Closing(self._closing),
                settings=self._settings,
            )
            done.append(report)
            self.reports.append(report)
            if self._on_report is not None:
                self._on_report(report)
            if report.status not in ("ok", "empty") or not report.lines_pending:
                break
        return done

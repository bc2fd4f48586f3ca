"""The application's state and its background work: settings, runtime, vault, index.

One :class:`AppController` per window. It owns three single-worker executors —
index updates, index reads (searches, note loads) and vault writes
(transactions) — none of them the engines' own, so a long embedding or
generation never queues behind a click. Every background job is an asyncio
task on the qasync loop whose handle is kept until it ends; a failure is sent
to ``sig_error`` (the error presenter), never dropped.

Only the GUI thread calls methods here; worker threads reach it through
``loop.call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, QTimer, Signal

from desktop.flows.embedding import embedding_model
from desktop.flows.settings import (
    Settings,
    SettingsInvalid,
    load_settings,
    resolve,
    save_settings,
)
from desktop.resources import ensure_sample_vault
from desktop.ui.qt_compat import protect_bools
from desktop.vault.index import IndexReport, VaultIndex
from foundation.errors import AntinomyError
from foundation.paths import data_dir
from inference.runtime import Runtime, State

log = logging.getLogger(__name__)

protect_bools()  # before any signal is emitted from Python (see qt_compat)

T = TypeVar("T")
RuntimeFactory = Callable[[Settings], Runtime]


def default_runtime(settings: Settings) -> Runtime:
    return Runtime(resolve(saved=settings).runtime)


class AppController(QObject):
    sig_runtime_changed = Signal()
    """The runtime changed state (read ``controller.runtime.state``)."""
    sig_vault_opened = Signal(object)
    """A vault was opened: ``(root: Path)``."""
    sig_index_progress = Signal(int, int, str)
    """Index update progress: ``(done, total, phase)``; throttled to ~10 per second."""
    sig_index_updated = Signal(object)
    """An index update finished: ``(report: IndexReport)``."""
    sig_notes_changed = Signal(object)
    """Notes changed on disk or by an operation: ``(paths: tuple[str, ...])``."""
    sig_history_changed = Signal()
    """An operation was applied or undone: by this window, or by another process (the
    watcher sees the journal change). Every view of vault state re-reads it then."""
    sig_writes_settled = Signal()
    """No write of this window is in flight any more (emitted before the writer's own
    code after the write runs, which announces it: see :meth:`run_in`)."""
    sig_action_done = Signal(str, object)
    """A user action changed the vault (or found it already so): ``(what, in words;
    operation_ids: tuple[str, ...])`` — undoing those ids takes it back."""
    sig_preview_requested = Signal(str)
    """Show this vault-relative note in the preview: ``(path)``."""
    sig_error = Signal(str, str)
    """A failure the user must see: ``(what was being done, message)``."""
    sig_settings_changed = Signal(object)
    """Settings were saved: ``(settings: Settings)``."""

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        runtime: Runtime | None = None,
        make_runtime: RuntimeFactory = default_runtime,
        settings: Settings | None = None,
        owns_runtime: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.loop = loop
        self.settings_problem: str | None = None
        if settings is None:
            try:
                settings = load_settings()
            except SettingsInvalid as exc:
                self.settings_problem = str(exc)
                settings = Settings()
        self.settings = settings
        self._make_runtime = make_runtime
        #: False when the runtime is shared with its creator, who closes it.
        self.owns_runtime = owns_runtime or runtime is None
        self.runtime = runtime if runtime is not None else make_runtime(settings)
        self.root: Path | None = None
        self.index: VaultIndex | None = None
        self.last_report: IndexReport | None = None
        self._index_has_vectors = False
        self._failure_shown: Runtime | None = None
        self.index_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-index")
        self.read_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-read")
        self.write_pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-vault")
        #: Writes of this window on ``write_pool`` not finished yet (:meth:`run_in`).
        self.writes_in_flight = 0
        self.tasks: set[asyncio.Task[Any]] = set()
        self._index_task: asyncio.Task[Any] | None = None
        self._index_stop = threading.Event()
        self._index_superseded = threading.Event()
        self._pending_progress: tuple[int, int, str] | None = None
        self._progress_timer = QTimer(self)
        self._progress_timer.setSingleShot(True)
        self._progress_timer.setInterval(100)
        self._progress_timer.timeout.connect(self._flush_progress)
        self._closed = False
        #: Operations this window applied: the watcher does not announce them a second time.
        self.applied_here: set[str] = set()
        #: Called by close() before the engines stop (e.g. a scan runner's own pool).
        self.closers: list[Callable[[], None]] = []

    # ------------------------------------------------------------------ tasks

    def spawn(self, coro: Awaitable[T], *, what: str) -> asyncio.Task[T]:
        """Run ``coro`` on the loop; keep its handle; report its failure as ``what``."""
        task: asyncio.Task[T] = asyncio.ensure_future(coro, loop=self.loop)
        self.tasks.add(task)

        def done(t: asyncio.Task[T]) -> None:
            self.tasks.discard(t)
            if t.cancelled() or self._closed:
                return
            exc = t.exception()
            if exc is not None:
                self.report_error(what, exc)

        task.add_done_callback(done)
        return task

    def run_in(self, pool: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> Awaitable[T]:
        future = self.loop.run_in_executor(pool, fn, *args)
        if pool is self.write_pool:
            # Counted while in flight, so the watcher does not take this window's own
            # operation for another process's before it is announced. The count drops in a
            # done-callback added before anyone awaits the future: it runs just before the
            # awaiting code (which announces the write), with nothing between the two.
            self.writes_in_flight += 1
            future.add_done_callback(self._write_done)
        return future

    def _write_done(self, _future: object) -> None:
        self.writes_in_flight -= 1
        if not self.writes_in_flight:
            self.sig_writes_settled.emit()

    def history_changed(self, operation_ids: Iterable[str] = ()) -> None:
        """This window applied or undid ``operation_ids``: every view re-reads the vault."""
        self.applied_here.update(operation_ids)
        self.sig_history_changed.emit()

    def report_error(self, what: str, exc: BaseException) -> None:
        if isinstance(exc, AntinomyError):
            message = str(exc)
        else:
            log.error("%s failed", what, exc_info=exc)
            message = f"{type(exc).__name__}: {exc}"
        self.sig_error.emit(what, message)

    def from_worker(self, fn: Callable[..., None], *args: Any) -> None:
        """Call ``fn(*args)`` on the GUI thread; safe from any thread."""
        if not self._closed:
            self.loop.call_soon_threadsafe(fn, *args)

    # ------------------------------------------------------------------ start-up

    def start(self, vault: Path | None = None) -> None:
        """Start warming the models and open a vault; returns at once."""
        self._watch_runtime(self.runtime)
        self.runtime.start()
        target = vault or self._initial_vault()
        self.open_vault(target)

    def _initial_vault(self) -> Path:
        last = self.settings.last_vault
        if last and Path(last).is_dir():
            return Path(last)
        return ensure_sample_vault(data_dir())

    def _watch_runtime(self, runtime: Runtime) -> None:
        def changed(rt: Runtime) -> None:
            self.from_worker(self._runtime_changed, rt)

        runtime.add_listener(changed)

    def _runtime_changed(self, rt: Runtime) -> None:
        if rt is not self.runtime:
            return  # a runtime being replaced
        self.sig_runtime_changed.emit()
        if rt.state is State.READY and self.root is not None and not self._index_has_vectors:
            self.reindex()
        if rt.state is State.FAILED and rt.error is not None and self._failure_shown is not rt:
            # Once per runtime: queued LOADING and FAILED notices both see FAILED here.
            self._failure_shown = rt
            self.report_error("Loading the models", rt.error)

    def semantic_ready(self) -> bool:
        return self.runtime.state is State.READY

    # ------------------------------------------------------------------ vault

    def open_vault(self, path: Path) -> None:
        """Open ``path`` as the current vault and index it in the background."""
        path = Path(path).expanduser().resolve()
        if not path.is_dir():
            self.sig_error.emit(
                "Opening a vault",
                f"{path} is not a folder — choose the folder that holds your notes.",
            )
            return
        if self.index is not None and self.root != path:
            self.read_pool.submit(self.index.close)
            self.index = None
            self.last_report = None
        self.root = path
        self._index_has_vectors = False
        self.update_settings(self.settings.with_vault_opened(path))
        self.sig_vault_opened.emit(path)
        self.reindex()

    def reindex(self) -> None:
        """(Re)open the index — with vectors once the embedder is warm — and update it."""
        if self.root is None:
            return
        if self._index_task is not None and not self._index_task.done():
            # That job's own flags (the new job gets fresh ones): it stops at its next
            # check, then closes its index and drops its report.
            self._index_superseded.set()
            self._index_stop.set()
        self._index_stop = threading.Event()
        self._index_superseded = threading.Event()
        superseded = self._index_superseded
        self._index_task = self.spawn(
            self._update_index(self.root, self._index_stop, superseded), what="Indexing the vault"
        )

    def stop_indexing(self) -> None:
        self._index_stop.set()

    async def _update_index(
        self, root: Path, stop: threading.Event, superseded: threading.Event
    ) -> None:
        with_vectors = self.semantic_ready()
        embedding = embedding_model(self.runtime.queued_embedder()) if with_vectors else None
        old = self.index

        def stopping() -> bool:
            return stop.is_set() or self._closed

        def progress(done: int, total: int, phase: str) -> None:
            self.from_worker(self._queue_progress, root, done, total, phase)

        def work() -> tuple[VaultIndex, IndexReport]:
            index = VaultIndex(root, embedding=embedding)
            report = index.update(progress=progress, stop=stopping)
            return index, report

        index, report = await self.run_in(self.index_pool, work)
        if superseded.is_set() or self.root != root or self._closed:
            await self.run_in(self.index_pool, index.close)
            return
        self.index = index
        if old is not None and old is not index:
            # On the read worker, after any read still using the old connection.
            self.read_pool.submit(old.close)
        self._index_has_vectors = with_vectors
        self.last_report = report
        self._pending_progress = None
        self.sig_index_updated.emit(report)

    def _queue_progress(self, root: Path, done: int, total: int, phase: str) -> None:
        if root != self.root:
            return  # a vault no longer on screen, still winding down
        # Repaints are throttled: many updates a second would flood the loop.
        self._pending_progress = (done, total, phase)
        if not self._progress_timer.isActive():
            self._progress_timer.start()

    def _flush_progress(self) -> None:
        if self._pending_progress is not None:
            self.sig_index_progress.emit(*self._pending_progress)

    def notes_changed(self, paths: Iterable[str]) -> None:
        """Re-index these paths (an external edit, or an operation), then tell the panels."""
        changed = tuple(dict.fromkeys(paths))
        index = self.index
        if not changed or index is None:
            return

        async def go() -> None:
            await self.run_in(self.index_pool, index.update_paths, changed)
            self.sig_notes_changed.emit(changed)

        self.spawn(go(), what="Re-indexing changed notes")

    # ------------------------------------------------------------------ settings and runtime

    def update_settings(self, settings: Settings) -> None:
        self.settings = settings
        try:
            save_settings(settings)
        except OSError as exc:
            self.sig_error.emit("Saving the settings", f"Cannot write the settings: {exc}.")
        self.sig_settings_changed.emit(settings)

    def apply_settings(self, settings: Settings) -> None:
        """Save ``settings``; reload the models if the model files or backends changed."""
        reload = (settings.models, settings.backend, settings.embedder_backend) != (
            self.settings.models,
            self.settings.backend,
            self.settings.embedder_backend,
        )
        self.update_settings(settings)
        if reload:
            self.restart_runtime()

    def restart_runtime(self) -> None:
        old = self.runtime
        self.runtime = self._make_runtime(self.settings)
        self._index_has_vectors = False
        self._watch_runtime(self.runtime)
        self.sig_runtime_changed.emit()

        async def go() -> None:
            await self.run_in(self.write_pool, old.close)
            self.runtime.start()

        self.spawn(go(), what="Reloading the models")

    # ------------------------------------------------------------------ shutdown

    def close(self) -> None:
        """Stop background work and free both engines. Blocks until they are released."""
        if self._closed:
            return
        self._closed = True
        self._index_stop.set()
        for task in list(self.tasks):
            task.cancel()
        for closer in self.closers:
            closer()
        if self.owns_runtime:
            self.runtime.close()
        for pool in (self.read_pool, self.write_pool, self.index_pool):
            pool.shutdown(wait=True, cancel_futures=True)
        if self.index is not None:
            self.index.close()
            self.index = None

"""GUI test fixtures: a qasync loop on the test's QApplication, a window over a
fake runtime, and leak checks (no thread, QThread or top-level widget outlives a test)."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
import qasync
from PySide6.QtCore import QCoreApplication, QEvent, QThread
from PySide6.QtWidgets import QApplication, QWidget

from desktop.resources import ensure_sample_vault
from desktop.ui.app import build_window
from desktop.ui.window import MainWindow
from inference.base import Generator
from inference.judge import Judge
from inference.runtime import Runtime, State
from tests.fakes import ScriptedGenerator, WordEmbedder, confirming_judge

WARM_UP = ["x", "{}"]  # the runtime's tiny and full warm-up calls


def ui_embedder() -> WordEmbedder:
    """The window's embedder: hashed words in 32 dimensions."""
    return WordEmbedder(dimension=32)


def fake_runtime(
    answers: Sequence[str | BaseException] = (),
    generator: Generator | None = None,
    judge: Judge | None = None,
) -> Runtime:
    """Scripted engines. The default judge confirms every pair the scripted model proposes
    and finds none itself (``confirming_judge``), so scan answers stay in order."""
    gen = generator or ScriptedGenerator([*WARM_UP, *answers])
    chosen = judge or confirming_judge()
    return Runtime(make_generator=lambda: gen, make_embedder=ui_embedder, make_judge=lambda: chosen)


@pytest.fixture
def qloop(qapp: QApplication) -> Iterator[asyncio.AbstractEventLoop]:
    """A qasync loop that runs whenever Qt processes events (qtbot.wait*)."""
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    for task in asyncio.all_tasks(loop):
        task.cancel()
    QCoreApplication.processEvents()
    asyncio.events._set_running_loop(None)
    asyncio.set_event_loop(None)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return ensure_sample_vault(tmp_path)


@pytest.fixture(autouse=True)
def no_leaks(qapp: QApplication) -> Iterator[None]:
    before_widgets = {id(w) for w in QApplication.topLevelWidgets()}
    before_threads = set(threading.enumerate())
    yield
    for _ in range(3):
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        QCoreApplication.processEvents()
    leaked = [
        w for w in QApplication.topLevelWidgets() if id(w) not in before_widgets and w.isVisible()
    ]
    for w in leaked:
        w.close()
        w.deleteLater()
    assert not leaked, f"top-level widgets left open: {leaked}"
    threads = [
        t
        for t in set(threading.enumerate()) - before_threads
        if t.name.startswith("antinomy-") and t.is_alive()
    ]
    for t in threads:
        t.join(timeout=5)
    assert not [t for t in threads if t.is_alive()], f"threads left running: {threads}"
    gc.collect()
    running = [o for o in gc.get_objects() if isinstance(o, QThread) and o.isRunning()]
    assert not running, f"QThreads left running: {running}"


WindowFactory = Callable[..., MainWindow]


@pytest.fixture
def make_window(qtbot, qloop, vault: Path) -> Iterator[WindowFactory]:  # type: ignore[no-untyped-def]
    windows: list[MainWindow] = []

    def make(
        runtime: Runtime | None = None, *, start: bool = True, wait_ready: bool = True
    ) -> MainWindow:
        window = build_window(loop=qloop, runtime=runtime or fake_runtime(), use_tray=False)
        qtbot.addWidget(window)
        windows.append(window)
        window.show()
        if start:
            window.controller.start(vault)
        if start and wait_ready:
            qtbot.waitUntil(
                lambda: (
                    window.controller.runtime.state is State.READY
                    and window.controller.index is not None
                    and window.controller.index.embedding is not None
                ),
                timeout=20000,
            )
        return window

    yield make
    for window in windows:
        window.close()
        window.deleteLater()


def visible_top_levels() -> list[QWidget]:
    return [w for w in QApplication.topLevelWidgets() if w.isVisible()]

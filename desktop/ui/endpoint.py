"""The local endpoint inside the desktop app: the server ``antinomy serve`` runs, same code.

Once the models are ready and a vault is open (and indexed), :class:`AppEndpoint` starts
:func:`desktop.service.server.start_endpoint` for that vault (its own thread and
event loop, so GUI work never delays a hook) — embeddings, the guard and the
memory routes (``/v1/capture``, ``/v1/recall``). A new vault or a
reloaded runtime restarts it; Quit stops it before the engines close.

A port already taken (``antinomy serve`` running, say) is a state, not a crash:
``state == "failed"`` with the message, shown by the Guard panel and the status
bar; **Start** in the Guard panel tries again.

Starting and stopping run on one single-worker executor, so they never overlap
and ``close()`` can wait for both. Only the GUI thread calls methods here; the
guard log's listener (called on the server thread) hops to the GUI thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal, cast

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QLabel, QWidget

from desktop.service.guard_log import GuardLog, GuardRecord
from desktop.service.routes import JsonBody
from desktop.service.server import DEFAULT_PORT, EndpointHandle, start_endpoint
from desktop.ui.controller import AppController
from foundation.errors import AntinomyError
from inference.runtime import Runtime, State

log = logging.getLogger(__name__)

EndpointState = Literal["down", "starting", "up", "failed"]
OBJECT_NAME = "antinomy-endpoint"


class AppEndpoint(QObject):
    sig_endpoint_changed = Signal()
    """The endpoint started, stopped or failed (read ``state``, ``url``, ``problem``)."""
    sig_guard_checked = Signal(object)
    """A hook's guard check was answered: ``(GuardRecord)``; emitted on the GUI thread."""
    sig_memory_captured = Signal()
    """A turn was captured through ``POST /v1/capture``; emitted on the GUI thread."""

    def __init__(self, controller: AppController) -> None:
        super().__init__(controller)
        self.setObjectName(OBJECT_NAME)
        self._c = controller
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="antinomy-endpoint-ctl")
        self.state: EndpointState = "down"
        self.problem: str | None = None
        #: The running endpoint as the GUI knows it (None unless ``state == "up"``).
        self.handle: EndpointHandle | None = None
        #: One log for every (re)start, so the Guard panel keeps its history.
        self.guard_log = GuardLog()
        self.guard_log.add_listener(self._checked_on_server)
        self._live: EndpointHandle | None = None  # touched only on the pool's worker
        self._target: tuple[Runtime, Path] | None = None
        self._request = 0
        self._port_tried: int | None = None
        self._closed = False
        controller.closers.append(self.close)
        controller.sig_runtime_changed.connect(self._follow)
        controller.sig_vault_opened.connect(lambda _root: self._follow())
        controller.sig_index_updated.connect(lambda _report: self._index_updated())
        controller.sig_notes_changed.connect(lambda _paths: self._refresh_guard())
        controller.sig_settings_changed.connect(lambda _s: self._port_changed())
        self._follow()

    # ------------------------------------------------------------------ what the GUI reads

    @property
    def port(self) -> int:
        """The port served, or the one configured when down."""
        if self.handle is not None:
            return self.handle.port
        return self._c.settings.endpoint.port

    @property
    def url(self) -> str | None:
        return self.handle.url if self.handle is not None else None

    def describe(self) -> str:
        """One line for the status bar."""
        if self.state == "up":
            return f"endpoint: up :{self.port}"
        if self.state == "starting":
            return "endpoint: starting…"
        if self.state == "failed":
            return f"endpoint: down (port {self.port} unavailable)"
        return "endpoint: down"

    # ------------------------------------------------------------------ start / stop

    def _wanted(self) -> tuple[Runtime, Path] | None:
        runtime, root = self._c.runtime, self._c.root
        if root is None or runtime.state is not State.READY:
            return None
        return runtime, root

    def _indexed(self) -> bool:
        """The app's first full index of the vault (with vectors) is done.

        The guard keeps its own metadata index of the same ``index.db``; started
        together, the two wrote it at once and the app's indexing failed with
        "database is locked" (see the report on desktop/vault/index.py).
        """
        index = self._c.index
        return index is not None and index.root == self._c.root and index.embedding is not None

    def _follow(self) -> None:
        """Start once ready with a vault; restart on a new vault or runtime."""
        if self._closed:
            return
        want = self._wanted()
        current = self._target
        if want is None:
            stale = current is not None and (
                current[0] is not self._c.runtime or current[1] != self._c.root
            )
            if stale:  # the runtime is being replaced, or the vault is gone
                self.stop()
            return
        if current is not None and current[0] is want[0] and current[1] == want[1]:
            return
        if not self._indexed():
            return  # sig_index_updated calls again
        self._target = want
        self.start()

    def start(self) -> None:
        """(Re)start the endpoint for the current vault and runtime; returns at once."""
        if self._closed:
            return
        want = self._wanted()
        if want is None:
            self._set("down", "The endpoint starts once the models are ready and a vault is open.")
            return
        self._target = want
        runtime, root = want
        port = self._c.settings.endpoint.port
        self._port_tried = port
        self._request += 1
        request = self._request
        self.handle = None
        self._set("starting", None)

        async def go() -> None:
            try:
                handle = await self._c.run_in(self.pool, self._restart, runtime, root, port)
            except AntinomyError as exc:
                self._failed(request, str(exc))
                return
            except Exception as exc:  # not expected: say what it was, never crash
                log.exception("the endpoint did not start")
                self._failed(request, f"The endpoint did not start: {type(exc).__name__}: {exc}")
                return
            if request == self._request:
                self.handle = handle
                self._set("up", None)

        self._c.spawn(go(), what="Starting the endpoint")

    def _port_changed(self) -> None:
        """The settings name another port: move there (settings are saved often: compare)."""
        if self._closed or self.state not in ("up", "failed"):
            return
        if self._c.settings.endpoint.port != self._port_tried:
            self.start()

    def stop(self) -> None:
        """Stop serving (a hook then allows every tool call); returns at once."""
        if self._closed:
            return
        self._request += 1
        self._target = None
        self.handle = None
        self._c.spawn(self._c.run_in(self.pool, self._stop_live), what="Stopping the endpoint")
        self._set("down", None)

    def close(self) -> None:
        """Stop the endpoint and wait for it (Quit). Blocks briefly."""
        if self._closed:
            return
        self._closed = True
        self._request += 1
        self.pool.submit(self._stop_live)
        self.pool.shutdown(wait=True)
        self.handle = None
        self.state = "down"

    def _failed(self, request: int, message: str) -> None:
        if request != self._request:
            return
        log.warning("endpoint: %s", message)
        self._set("failed", message)

    def _set(self, state: EndpointState, problem: str | None) -> None:
        self.state = state
        self.problem = problem
        if not self._closed:
            self.sig_endpoint_changed.emit()

    # ------------------------------------------------------------------ the worker side

    def _restart(self, runtime: Runtime, root: Path, port: int) -> EndpointHandle:
        self._stop_live()
        handle = start_endpoint(
            runtime=runtime, vault_root=root, port=port, guard_log=self.guard_log
        )
        watch_captures(handle, self._captured_on_server)
        self._live = handle
        return handle

    def _stop_live(self) -> None:
        handle, self._live = self._live, None
        if handle is not None:
            handle.stop()
            log.info("endpoint on port %d stopped", handle.port)

    # ------------------------------------------------------------------ guard

    def _checked_on_server(self, record: GuardRecord) -> None:
        # Called on the endpoint's thread: widgets only change on the GUI thread.
        if not self._closed:
            self._c.from_worker(self._checked, record)

    def _checked(self, record: GuardRecord) -> None:
        if not self._closed:
            self.sig_guard_checked.emit(record)

    def _index_updated(self) -> None:
        self._follow()
        self._refresh_guard()

    def _captured_on_server(self) -> None:
        if not self._closed:
            self._c.from_worker(self._captured)

    def _captured(self) -> None:
        if not self._closed:
            self.sig_memory_captured.emit()

    def _refresh_guard(self) -> None:
        """The GUI re-indexed: let the guard re-read the decisions now, not in 15 s."""
        handle = self.handle
        if handle is not None and handle.guard is not None:
            handle.guard.refresh_now()


def watch_captures(handle: EndpointHandle, captured: Callable[[], None]) -> None:
    """Call ``captured()`` (on a server thread) after each turn ``/v1/capture`` stored."""
    route = handle.routes.post("/v1/capture")
    if route is None or route.is_async:
        return
    handler = cast(Callable[[JsonBody], JsonBody], route.handler)

    def capture(body: JsonBody) -> JsonBody:
        answer = handler(body)
        captured()
        return answer

    handle.register_route("/v1/capture", capture)


def endpoint_for(controller: AppController) -> AppEndpoint:
    """The app's endpoint (created, and started when it can be, on first call). GUI thread."""
    found = controller.findChild(AppEndpoint, OBJECT_NAME)
    if isinstance(found, AppEndpoint):
        return found
    return AppEndpoint(controller)


class QtEndpointStatus(QLabel):
    """The status bar's endpoint up/down indicator."""

    def __init__(self, endpoint: AppEndpoint, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._endpoint = endpoint
        endpoint.sig_endpoint_changed.connect(self.show_state)
        self.show_state()

    def show_state(self) -> None:
        e = self._endpoint
        self.setText(e.describe())
        if e.state == "up":
            tip = f"Serving {e.url} for agent hooks (guard, recall) and embeddings."
        elif e.problem:
            tip = e.problem
        else:
            tip = f"Loopback endpoint, port {e.port} (default {DEFAULT_PORT})."
        self.setToolTip(tip)

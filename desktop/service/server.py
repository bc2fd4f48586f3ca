"""Start and stop the endpoint: uvicorn on loopback, in its own thread and event loop.

The same function serves ``antinomy serve`` and the desktop app::

    handle = start_endpoint(runtime=runtime, vault_root=root, port=8765)
    handle.url                       # "http://127.0.0.1:8765"
    handle.guard_log.add_listener(on_check)
    handle.register_route("/v1/recall", recall)   # see desktop.service.routes
    handle.stop()

The server has its own thread and asyncio loop, so a busy GUI thread never
delays a hook. Embedding work goes to the runtime's embedder worker, through
the micro-batcher. It listens on 127.0.0.1 and, when the machine has IPv6, on
``::1`` at the same port. asyncio turns Nagle's algorithm off on every
accepted socket (``TCP_NODELAY``); tests/test_service.py checks it.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import uvicorn

import foundation
from desktop.service.app import EndpointApp
from desktop.service.batching import EmbedBatcher
from desktop.service.connections import (
    MAX_CONNECTIONS,
    REQUEST_READ_SECONDS,
    WRITE_SECONDS,
    connection_cap,
    guarded_protocol,
)
from desktop.service.embeddings import TokenCounter, embedding_routes
from desktop.service.errors import EndpointError
from desktop.service.guard_log import GuardLog
from desktop.service.guard_route import GuardService
from desktop.service.memory_route import memory_routes
from desktop.service.model_names import WARM_WAIT_SECONDS
from desktop.service.model_routes import model_routes
from desktop.service.routes import (
    ROUTE_FACTORIES,
    JsonBody,
    JsonHandler,
    RouteTable,
    ServiceContext,
)
from desktop.service.security import Guardrails, load_or_create_token
from foundation import atomic
from foundation.paths import config_dir
from inference.runtime import Runtime, State

log = logging.getLogger(__name__)

DEFAULT_PORT = 8765
ENDPOINT_FILE = "endpoint.json"


def endpoint_file() -> Path:
    """Where a running endpoint publishes its port (the hook client reads it)."""
    return config_dir() / ENDPOINT_FILE


class EndpointHandle:
    """A running endpoint. ``stop()`` may be called from any thread, more than once."""

    def __init__(
        self,
        *,
        server: uvicorn.Server,
        thread: threading.Thread,
        port: int,
        routes: RouteTable,
        context: ServiceContext,
        workers: ThreadPoolExecutor,
        published: Path | None,
        guard: GuardService | None,
        instance: str = "",
        previous: dict[str, Any] | None = None,
        protocol: Any = None,
    ) -> None:
        self._server = server
        self._thread = thread
        self.host = "127.0.0.1"
        self.port = port
        self.routes = routes
        self.context = context
        self.guard_log = context.guard_log
        self.batcher = context.batcher
        self._workers = workers
        self._published = published
        self._instance = instance
        self._previous = previous
        #: The connection protocol class: ``open_count``, ``timed_out``, ``refused``.
        self.connections = protocol
        #: The vault's guard (None without ``guard=True``); ``guard.refresh_now()``
        #: after the GUI re-indexed, ``guard.switch`` for its settings.
        self.guard = guard
        self.started_at = time.time()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread.is_alive() and not self._server.should_exit

    def register_route(self, path: str, handler: JsonHandler) -> None:
        """Serve ``POST path`` with ``handler`` from now on (see desktop.service.routes)."""
        self.routes.register_route(path, handler)

    def stop(self, timeout: float = 5.0) -> None:
        self.context.closing.set()
        self._server.should_exit = True
        self._thread.join(timeout)
        if self.guard is not None:
            self.guard.stop()
        self._workers.shutdown(wait=False, cancel_futures=True)
        if self._published is not None:
            _unpublish(self._published, self._instance, self._previous)
            self._published = None


def _tcp_socket(family: socket.AddressFamily) -> socket.socket:
    # proto must be IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted
    # sockets only when it is (base_events._set_nodelay). With proto 0 every
    # response written as headers + body stalled ~40 ms on a delayed ACK
    # (measured here: /healthz p50 44 ms before, <2 ms after). The listening
    # socket gets the option too; Linux passes it on to accepted sockets.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    return sock


def _bind(port: int) -> list[socket.socket]:
    sockets: list[socket.socket] = []
    v4 = _tcp_socket(socket.AF_INET)
    try:
        v4.bind(("127.0.0.1", port))
    except OSError as exc:
        v4.close()
        if exc.errno == errno.EADDRINUSE:
            raise EndpointError(
                f"Port {port} on 127.0.0.1 is in use — is `antinomy serve` or the desktop app "
                "already running? Stop it, or choose another port with --port."
            ) from None
        raise EndpointError(f"Cannot listen on 127.0.0.1:{port}: {exc}.") from None
    sockets.append(v4)
    port = v4.getsockname()[1]
    if socket.has_ipv6:
        v6 = _tcp_socket(socket.AF_INET6)
        try:
            v6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            v6.bind(("::1", port))
            sockets.append(v6)
        except OSError as exc:  # no IPv6 loopback here, or the port is taken there
            v6.close()
            log.info("endpoint: not listening on [::1]:%d (%s)", port, exc)
    for sock in sockets:
        sock.listen(128)
        sock.setblocking(False)
    return sockets


#: Endpoints running in this process, by the instance id they published under.
_LIVE_INSTANCES: set[str] = set()


def _publish(
    port: int, vault_root: Path | None, instance: str
) -> tuple[Path, dict[str, Any] | None]:
    """Write ``endpoint.json`` for this endpoint; returns the path and what it replaced
    when that still names a live endpoint (restored when this one stops)."""
    path = endpoint_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    previous = _read_published(path)
    info = {
        "port": port,
        "pid": os.getpid(),
        "instance": instance,
        "url": f"http://127.0.0.1:{port}",
        "vault": str(vault_root) if vault_root else None,
        "started": time.time(),
    }
    _write_published(path, info)
    _LIVE_INSTANCES.add(instance)
    return path, previous if previous is not None and _alive(previous) else None


def _unpublish(path: Path, instance: str, previous: dict[str, Any] | None) -> None:
    """Only the endpoint that wrote ``endpoint.json`` takes it away — and if it had
    replaced one that still runs, that one's entry is put back, so a second
    ``antinomy serve`` that stops never switches the first one's guard off."""
    _LIVE_INSTANCES.discard(instance)
    info = _read_published(path)
    if info is None or info.get("instance") != instance:
        return  # another endpoint published since: its file, not ours
    try:
        if previous is not None and _alive(previous):
            _write_published(path, previous)
        else:
            path.unlink()
    except OSError as exc:
        log.warning("endpoint: cannot update %s: %s", path, exc)


def _read_published(path: Path) -> dict[str, Any] | None:
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _write_published(path: Path, info: dict[str, Any]) -> None:
    atomic.write_json(path, info, indent=None, newline=False, mode=atomic.PRIVATE_MODE)


def _alive(info: dict[str, Any]) -> bool:
    """Does the endpoint ``info`` names still run? (Its process, or, in this process,
    its instance.)"""
    pid = info.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    if pid == os.getpid():
        return info.get("instance") in _LIVE_INSTANCES
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: it exists
    except OSError:
        return False
    return True


def start_endpoint(
    *,
    runtime: Runtime,
    vault_root: Path | None = None,
    port: int = DEFAULT_PORT,
    guard_log: GuardLog | None = None,
    token: str | None = None,
    max_body: int = 2 * 1024 * 1024,
    max_batch: int = 256,
    publish: bool = True,
    guard: bool = True,
    ready_timeout: float = 10.0,
    read_seconds: float = REQUEST_READ_SECONDS,
    write_seconds: float = WRITE_SECONDS,
    max_connections: int = MAX_CONNECTIONS,
    open_embeddings: bool = False,
    warm_wait_seconds: float = WARM_WAIT_SECONDS,
) -> EndpointHandle:
    """Start serving; returns once the sockets accept connections. Any thread.

    ``port=0`` picks a free port (tests). ``runtime`` may still be loading: an
    embedding request then waits up to ``warm_wait_seconds`` for the embedder, the
    guard answers 503 at once (the hook's budget is 300 ms). ``open_embeddings`` serves
    the embedding routes without the token (see desktop.service.security).
    ``publish`` writes ``<config dir>/endpoint.json`` (port, pid) for the hook
    client; stopping removes it only if this endpoint wrote it (and puts back the
    entry of an endpoint it replaced that still runs). A client has ``read_seconds``
    to send a whole request and ``write_seconds`` to take each answer; at most
    ``max_connections`` are held (fewer where the open-file limit is lower), some of them
    kept for clients that send the token (see desktop.service.connections). ``guard`` adds
    ``POST /v1/guard/check`` for ``vault_root``.
    Raises :class:`EndpointError` when the port is taken.
    """
    sockets = _bind(port)
    port = sockets[0].getsockname()[1]
    guardrails = Guardrails(
        port=port,
        token=token or load_or_create_token(),
        max_body=max_body,
        max_batch=max_batch,
        open_embeddings=open_embeddings,
    )
    # Guard checks and other small requests go on the runtime's urgent embedding lane (a
    # second thread on the same embedder: its ONNX session allows two callers), so they
    # never wait behind a bulk chunk; the runtime counts both lanes as embedder work.
    batcher = EmbedBatcher(
        lambda texts: runtime.submit_embed(texts),
        max_texts=max_batch,
        submit_urgent=lambda texts: runtime.submit_embed(texts, urgent=True),
    )
    context = ServiceContext(
        runtime=runtime,
        vault_root=vault_root,
        guard_log=guard_log or GuardLog(),
        batcher=batcher,
    )
    routes = RouteTable()
    guard_service = GuardService(context) if guard else None
    _add_builtin_routes(
        routes, context, max_batch=max_batch, guard=guard_service, wait_seconds=warm_wait_seconds
    )
    if guard_service is not None:
        for path, handler in guard_service.routes().items():
            routes.register_route(path, handler)
    for factory in ROUTE_FACTORIES:
        for path, handler in factory(context).items():
            routes.register_route(path, handler)
    workers = ThreadPoolExecutor(4, thread_name_prefix="antinomy-endpoint")
    app = EndpointApp(guardrails=guardrails, routes=routes, workers=workers)
    protocol = guarded_protocol(
        read_seconds=read_seconds,
        write_seconds=write_seconds,
        max_connections=connection_cap(max_connections),
        holds_token=guardrails.holds_token,
    )
    config = uvicorn.Config(
        app,
        lifespan="off",
        http=protocol,
        ws="none",
        log_config=None,
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    failed: list[BaseException] = []

    def serve() -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.serve(sockets=sockets))
        except BaseException as exc:  # surfaced to start_endpoint's caller
            failed.append(exc)
            log.exception("endpoint stopped with an error")
        finally:
            for sock in sockets:
                sock.close()
            loop.close()

    thread = threading.Thread(target=serve, name="antinomy-endpoint", daemon=True)
    thread.start()
    deadline = time.monotonic() + ready_timeout
    while not server.started:
        if failed or not thread.is_alive():
            raise EndpointError(f"The endpoint did not start: {failed[0] if failed else 'exited'}.")
        if time.monotonic() > deadline:
            server.should_exit = True
            raise EndpointError(f"The endpoint did not start within {ready_timeout} s.")
        time.sleep(0.005)
    if guard_service is not None:
        guard_service.start()
    instance = secrets.token_hex(8)
    published, previous = _publish(port, vault_root, instance) if publish else (None, None)
    handle = EndpointHandle(
        server=server,
        thread=thread,
        port=port,
        routes=routes,
        context=context,
        workers=workers,
        published=published,
        guard=guard_service,
        instance=instance,
        previous=previous,
        protocol=protocol,
    )
    log.info("endpoint listening on %s", handle.url)
    return handle


def guard_state(guard: GuardService | None) -> str:
    """``none`` (no guard route), ``ready`` (decisions read), ``error``, or ``reading``."""
    if guard is None:
        return "none"
    if guard.ready.is_set():
        return "ready"
    return "error" if guard.error else "reading"


def _add_builtin_routes(
    routes: RouteTable,
    context: ServiceContext,
    *,
    max_batch: int,
    guard: GuardService | None,
    wait_seconds: float,
) -> None:
    runtime = context.runtime

    async def healthz() -> JsonBody:
        models = runtime.state.value
        state = guard_state(guard)
        return {
            "status": "ok",
            "models": models,
            "guard": state,
            # What ``antinomy-hook sessionstart`` waits for: engines warm, decisions read.
            "ready": models == State.READY.value and state in ("ready", "none"),
            "version": foundation.__version__,
            "vault": context.vault_root is not None,
        }

    routes.register_get("/healthz", healthz)
    for path, get in model_routes(context, wait_seconds=wait_seconds).items():
        routes.register_get(path, get)  # /v1/models, /api/tags, /api/version
    counter = TokenCounter(runtime)
    embedding = embedding_routes(
        context, max_batch=max_batch, counter=counter, wait_seconds=wait_seconds
    )
    for path, handler in embedding.items():
        routes.register_route(path, handler)
    for path, handler in memory_routes(context).items():  # POST /v1/capture, /v1/recall
        routes.register_route(path, handler)

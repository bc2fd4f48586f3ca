"""The route table: JSON POST handlers (and a few GETs), pluggable by other features.

A handler takes the parsed JSON object and returns a JSON-able dict::

    def recall(body: dict[str, Any]) -> dict[str, Any]: ...      # blocking is fine
    async def embed(body: dict[str, Any]) -> dict[str, Any]: ...  # runs on the server loop

Plain functions run on the endpoint's worker threads, so they may block (read
the vault, wait for the LLM through ``runtime.queued_generator()``); coroutine
functions run on the server's own loop and must not block. To refuse a
request, raise a :class:`~desktop.service.errors.ServiceError` subclass
(``BadRequest`` → 400 …); its message becomes the JSON error body. Any other
``AntinomyError`` answers 422 (``ModelUnavailable`` 503); anything else 500.

Every route gets the same front door (token, Host, Origin, JSON content type,
body size): a handler only ever sees a JSON object.

Two ways to add routes:

* on a running endpoint: ``handle.register_route("/v1/recall", recall)``;
* for every endpoint started from now on (``antinomy serve`` and the desktop
  app): append a factory to :data:`ROUTE_FACTORIES` — a function of the
  :class:`ServiceContext` returning ``{path: handler}``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from desktop.service.batching import EmbedBatcher
    from desktop.service.guard_log import GuardLog
    from inference.runtime import Runtime

JsonBody = dict[str, Any]
JsonHandler = Callable[[JsonBody], JsonBody] | Callable[[JsonBody], Awaitable[JsonBody]]
GetHandler = Callable[[], Awaitable[JsonBody]]


@dataclass(frozen=True)
class ServiceContext:
    """What route factories get: the shared engines, the vault, the log, the batcher.

    ``closing`` is set when the endpoint stops: background threads a factory
    starts should watch it and end.
    """

    runtime: Runtime
    vault_root: Path | None
    guard_log: GuardLog
    batcher: EmbedBatcher
    closing: threading.Event = field(default_factory=threading.Event)


RouteFactory = Callable[[ServiceContext], Mapping[str, JsonHandler]]

#: Factories applied to every endpoint when it starts (see module docstring).
ROUTE_FACTORIES: list[RouteFactory] = []


@dataclass(frozen=True)
class Route:
    handler: JsonHandler
    is_async: bool


class RouteTable:
    """Paths to handlers. Registering is safe from any thread, even while serving."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._post: dict[str, Route] = {}
        self._get: dict[str, GetHandler] = {}

    def register_route(self, path: str, handler: JsonHandler) -> None:
        """Serve ``POST path`` with ``handler`` (replaces an earlier one)."""
        if not path.startswith("/"):
            raise ValueError(f"a route path starts with '/': {path!r}")
        route = Route(handler, inspect.iscoroutinefunction(handler))
        with self._lock:
            self._post[path] = route

    def register_get(self, path: str, handler: GetHandler) -> None:
        with self._lock:
            self._get[path] = handler

    def post(self, path: str) -> Route | None:
        return self._post.get(path)

    def get(self, path: str) -> GetHandler | None:
        return self._get.get(path)

    def has(self, path: str) -> bool:
        return path in self._post or path in self._get

    def paths(self) -> list[str]:
        with self._lock:
            return sorted({*self._post, *self._get})

"""Connections that never finish a request are not held: a read timeout and a cap.

uvicorn's h11 protocol arms no timer until a first response has gone out, so a
client that connects and sends half a request line (or nothing) is held for
ever: 3,000 such connections were all still open after 10 s. This protocol
adds, per connection:

* a **request-read timeout** (:data:`REQUEST_READ_SECONDS`): from the moment the
  connection opens — or the previous response was sent — the client has that
  long to deliver a whole request (headers and body); then the connection is
  closed. A request being answered is never cut.
* a **connection cap** (:data:`MAX_CONNECTIONS`): when a new connection would go
  over it, the oldest connections still waiting for their request are closed
  to make room (a flood of idle sockets cannot lock the hook out); if every
  connection is busy answering, the new one is closed at once.

It runs on the endpoint's event loop only.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

REQUEST_READ_SECONDS = 5.0
MAX_CONNECTIONS = 256


def guarded_protocol(
    *, read_seconds: float = REQUEST_READ_SECONDS, max_connections: int = MAX_CONNECTIONS
) -> type[H11Protocol]:
    """A protocol class with its own limits and its own registry (one per endpoint)."""

    class GuardedH11Protocol(H11Protocol):
        #: Connections waiting for (the rest of) a request, oldest first.
        waiting: ClassVar[OrderedDict[Any, None]] = OrderedDict()
        open_count: ClassVar[int] = 0
        refused: ClassVar[int] = 0
        timed_out: ClassVar[int] = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            cls = type(self)
            cls.open_count += 1
            self._read_timer: asyncio.TimerHandle | None = None
            self._counted = True
            if cls.open_count > max_connections:
                for old in list(cls.waiting)[: cls.open_count - max_connections]:
                    old._close("the connection cap was reached")
            if cls.open_count > max_connections:
                cls.refused += 1
                self._close("the connection cap was reached (every connection is busy)")
                return
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self._release()
            super().connection_lost(exc)

        def _release(self) -> None:
            if getattr(self, "_counted", False):
                self._counted = False
                type(self).open_count -= 1

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the whole request is in: answering it is not bounded here

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()  # the next request on this keep-alive connection

        def _arm(self) -> None:
            self._disarm()
            self._read_timer = self.loop.call_later(read_seconds, self._read_timed_out)
            type(self).waiting[self] = None

        def _disarm(self) -> None:
            if getattr(self, "_read_timer", None) is not None:
                assert self._read_timer is not None
                self._read_timer.cancel()
                self._read_timer = None
            type(self).waiting.pop(self, None)

        def _read_timed_out(self) -> None:
            self._read_timer = None
            cycle: Any = self.cycle
            answering = (
                cycle is not None
                and not cycle.response_complete
                and (self.conn.their_state is not h11.SEND_BODY)
            )
            if not answering:
                type(self).timed_out += 1
                self._close(f"no whole request within {read_seconds:g} s")

        def _close(self, why: str) -> None:
            self._disarm()
            self._release()  # now, not when the loop reports the close: room for the next one
            log.debug("endpoint: closing a connection: %s", why)
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol

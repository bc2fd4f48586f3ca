"""What one connection may cost: a read timeout, a write timeout, a pipelining cap, a cap
on connections with room kept for token holders.

uvicorn's h11 protocol arms no timer until a first response has gone out, so a
client that connects and sends half a request line (or nothing) was held for
ever; and one that pipelines requests without reading the answers was answered
as fast as it sent them (a flood of ``GET /healthz`` on 256 connections kept the
server thread at 78 % CPU, ~3,500 answers/s, and every hook call failed open).
This protocol adds, per connection:

* a **request-read timeout** (:data:`REQUEST_READ_SECONDS`): from the moment the
  connection opens — or the previous response was sent — the client has that
  long to deliver a whole request (headers and body); then the connection is
  closed. A request being answered is never cut.
* a **write timeout** (:data:`WRITE_SECONDS`): an answer the client leaves unread
  that long (the socket's buffers are full) ends the connection, and so does a
  close that cannot flush — nothing is held for a client that stopped reading.
* a **pipelining cap** (:data:`MAX_PIPELINED`): at most that many requests in a
  row are answered while the client keeps sending more before each answer is out;
  then the connection is no longer read nor answered, and is closed at its read
  deadline. Closing at once would invite the sender to reconnect and start again
  (measured: a server thread just as busy). Ordinary clients send one request at a
  time and never meet it.
* a **connection cap** (:data:`MAX_CONNECTIONS`), of which :data:`RESERVED_FOR_TOKEN`
  are kept for connections that have sent the bearer token. A new connection counts
  as tokenless until it sends the token; when the tokenless ones go over their share,
  one is closed (see ``_evict_tokenless`` for which), so a flood of connections
  without the token cannot lock out the hook or a client that holds it. Past the
  whole cap, the oldest idle connections make room; if every connection is busy
  answering, the new one is closed at once. A flood of more connections than the
  share churns (each newcomer closes one, which comes back): it costs the server
  again, and is not stopped here.

It runs on the endpoint's event loop only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

REQUEST_READ_SECONDS = 5.0
WRITE_SECONDS = 5.0
MAX_PIPELINED = 2
MAX_CONNECTIONS = 1024
RESERVED_FOR_TOKEN = 64
#: What one read takes from a connection that has not sent the token yet (a request's
#: headers fit; h11 refuses longer ones). asyncio reads 256 KiB at a time otherwise, and
#: what a held-back connection had read stayed buffered until it closed.
TOKENLESS_READ_BYTES = 16 * 1024
#: The open-file limit asked for (up to the hard limit) so the cap fits in it.
WANTED_OPEN_FILES = 4096

#: Says whether a request's ``Authorization`` header value carries the endpoint's token.
TokenCheck = Callable[[str], bool]


def connection_cap(wanted: int = MAX_CONNECTIONS) -> int:
    """``wanted``, or less where this process may not open that many files: half of its
    open-file limit, after raising that limit towards :data:`WANTED_OPEN_FILES` (up to the
    hard limit), as Go's runtime does. Past the limit, asyncio stops accepting for a
    second — every client, the hook included, would be refused."""
    try:
        import resource
    except ImportError:  # Windows: no such limit on sockets
        return wanted
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < WANTED_OPEN_FILES:
        target = WANTED_OPEN_FILES
        if hard != resource.RLIM_INFINITY:
            target = min(hard, WANTED_OPEN_FILES)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft == resource.RLIM_INFINITY:
        return wanted
    return min(wanted, max(16, soft // 2))


def guarded_protocol(
    *,
    read_seconds: float = REQUEST_READ_SECONDS,
    write_seconds: float = WRITE_SECONDS,
    max_pipelined: int = MAX_PIPELINED,
    max_connections: int = MAX_CONNECTIONS,
    reserved_for_token: int = RESERVED_FOR_TOKEN,
    holds_token: TokenCheck = lambda value: False,
) -> type[H11Protocol]:
    """A protocol class with its own limits and its own registry (one per endpoint)."""
    tokenless_limit = max(1, max_connections - min(reserved_for_token, max_connections // 4))

    class GuardedH11Protocol(H11Protocol):
        #: Connections waiting for (the rest of) a request, oldest first.
        waiting: ClassVar[OrderedDict[Any, None]] = OrderedDict()
        #: Connections that have not sent the token yet, oldest first.
        tokenless: ClassVar[OrderedDict[Any, None]] = OrderedDict()
        open_count: ClassVar[int] = 0
        refused: ClassVar[int] = 0
        timed_out: ClassVar[int] = 0
        #: Closed because an answer stayed unread for ``write_seconds``.
        write_timed_out: ClassVar[int] = 0
        #: Held back (no longer read or answered) after ``max_pipelined`` pipelined requests.
        pipeline_held: ClassVar[int] = 0
        #: Tokenless connections closed to keep their share.
        evicted: ClassVar[int] = 0

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            cls = type(self)
            cls.open_count += 1
            self._read_timer: asyncio.TimerHandle | None = None
            self._write_timer: asyncio.TimerHandle | None = None
            self._counted = True
            self._lost = False
            self._pipelined = 0
            self._held_back = False
            self._seen_headers: Any = None
            cls.tokenless[self] = None
            _set_read_size(transport, TOKENLESS_READ_BYTES)
            if len(cls.tokenless) > tokenless_limit:
                self._evict_tokenless(len(cls.tokenless) - tokenless_limit)
            if cls.open_count > max_connections:
                for old in list(cls.waiting)[: cls.open_count - max_connections]:
                    old._close("the connection cap was reached")
            if cls.open_count > max_connections:
                cls.refused += 1
                self._close("the connection cap was reached (every connection is busy)")
                return
            self._arm()

        def _evict_tokenless(self, count: int) -> None:
            """Close ``count`` tokenless connections, those least likely to be a client
            first: held back for pipelining; then those that have not sent a request yet
            (a client sends its request as soon as it connects); then those that pipeline;
            then the rest. Oldest first within each kind; never the newcomer itself."""
            cls = type(self)

            def kind(c: GuardedH11Protocol) -> int:
                if c._held_back:
                    return 0
                if c._seen_headers is None:
                    return 1
                return 2 if c._pipelined else 3

            # sorted() is stable: oldest first within each kind
            order = sorted((c for c in cls.tokenless if c is not self), key=kind)
            for old in order[:count]:
                cls.evicted += 1
                old._close("too many connections without the token")

        def connection_lost(self, exc: Exception | None) -> None:
            self._lost = True
            self._disarm()
            self._disarm_write()
            self._release()
            super().connection_lost(exc)

        def _release(self) -> None:
            type(self).tokenless.pop(self, None)
            if getattr(self, "_counted", False):
                self._counted = False
                type(self).open_count -= 1

        def handle_events(self) -> None:
            if self._held_back:
                return  # over the pipelining cap: what it sent stays unread until it is closed
            super().handle_events()
            if self.headers is not None and self.headers is not self._seen_headers:
                self._seen_headers = self.headers  # a new request: does it carry the token?
                if self in type(self).tokenless and self._has_token(self.headers):
                    del type(self).tokenless[self]
                    _set_read_size(self.transport, None)
            if self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
                self._disarm()  # the whole request is in: answering it is not bounded here

        @staticmethod
        def _has_token(headers: list[tuple[bytes, bytes]]) -> bool:
            for name, value in headers:
                if name == b"authorization":
                    return holds_token(value.decode("latin-1"))
            return False

        def on_response_complete(self) -> None:
            if self._pipelined + 1 >= max_pipelined and self._next_request_is_here():
                # The client keeps sending without waiting for answers: stop reading and
                # answering it; it is closed at its read deadline (or sooner, for room).
                type(self).pipeline_held += 1
                self._held_back = True
                self.flow.pause_reading()
                self._arm()
                return
            answered = self.cycle
            super().on_response_complete()
            if self.transport.is_closing():
                self._abort_unflushed()
            elif self.cycle is answered:
                self._pipelined = 0
                self._arm()  # the next request on this keep-alive connection
            else:
                self._pipelined += 1  # the next request was here before this answer went out

        def _next_request_is_here(self) -> bool:
            return bool(self.conn.trailing_data[0])

        # Write timeout: asyncio calls these when the transport's buffer passes its marks.
        def pause_writing(self) -> None:
            super().pause_writing()
            if self._write_timer is None and not self._lost:
                self._write_timer = self.loop.call_later(write_seconds, self._write_timed_out)

        def resume_writing(self) -> None:
            self._disarm_write()
            super().resume_writing()

        def _disarm_write(self) -> None:
            if getattr(self, "_write_timer", None) is not None:
                assert self._write_timer is not None
                self._write_timer.cancel()
                self._write_timer = None

        def _write_timed_out(self) -> None:
            self._write_timer = None
            if not self._lost:
                type(self).write_timed_out += 1
                log.debug("endpoint: closing a connection: an answer unread for %gs", write_seconds)
                self._release()
                self.transport.abort()

        def _abort_unflushed(self) -> None:
            """A closing transport waits for its buffer to flush; if the client does not
            read, that would be for ever."""
            if self._write_timer is None and not self._lost:
                self._write_timer = self.loop.call_later(write_seconds, self._write_timed_out)

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
            if self.transport.is_closing():
                return
            if self.transport.get_write_buffer_size():
                self.transport.abort()  # answers it never read: nothing to flush for
            else:
                self.transport.close()
                self._abort_unflushed()

    return GuardedH11Protocol


def _set_read_size(transport: asyncio.BaseTransport, size: int | None) -> None:
    """asyncio's socket transports read ``max_size`` bytes at a time (an attribute, not a
    parameter); ``None`` puts back the class's own."""
    if size is None:
        with contextlib.suppress(AttributeError):
            del transport.max_size  # type: ignore[attr-defined]
    elif hasattr(transport, "max_size"):
        transport.max_size = size

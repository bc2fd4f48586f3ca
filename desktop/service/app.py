"""The ASGI application behind the endpoint: one front door, then the route table.

Every request passes, in order: ``Host`` (403), ``Origin`` (403), bearer token
(401; ``GET /healthz`` and the proof ``GET /v1/hello`` are the open routes, and the
embedding routes with ``Guardrails.open_embeddings``), route
and method (404/405), ``Content-Type: application/json`` (415), body size (413),
UTF-8 (400: strictly, no UTF-16, no surrogates as bytes), JSON object (400: also for
nesting too deep, a number too long, a lone surrogate escape).
Errors are JSON in the OpenAI shape, so OpenAI clients show the message::

    {"error": {"message": "...", "type": "invalid_request_error", "code": 400}}

and, on Ollama's routes (``/api/...``), in Ollama's, which its clients read::

    {"error": "..."}

A refused body is read and dropped (up to :data:`DRAIN_LIMIT`) before the
answer, so the client reliably gets its 413/401 instead of a reset connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from desktop.service.errors import (
    BadRequest,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    UnsupportedMediaType,
)
from desktop.service.routes import JsonBody, RouteTable
from desktop.service.security import NONCE_HEADER, PROOF_PATH, PROOF_SCHEME, Guardrails
from foundation.errors import AntinomyError, ModelUnavailable

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

#: A refused body up to this size is drained so the client can read the answer.
DRAIN_LIMIT = 32 * 1024 * 1024
OPEN_PATHS = frozenset({"/healthz"})


def error_body(
    exc: ServiceError | AntinomyError | Exception, status: int, *, ollama: bool = False
) -> JsonBody:
    """OpenAI's error shape, or Ollama's (``{"error": "..."}``: what Ollama's clients
    read) for ``ollama``."""
    if ollama:
        return {"error": exc.ollama_message() if isinstance(exc, ServiceError) else str(exc)}
    kind = getattr(exc, "kind", "server_error" if status >= 500 else "invalid_request_error")
    return {
        "error": {"message": str(exc), "type": kind, "code": getattr(exc, "code", None) or status}
    }


class EndpointApp:
    """The ASGI callable. Runs on the endpoint's own event loop."""

    def __init__(
        self, *, guardrails: Guardrails, routes: RouteTable, workers: ThreadPoolExecutor
    ) -> None:
        self.guardrails = guardrails
        self.routes = routes
        self._workers = workers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])
        }
        reader = _BodyReader(receive)
        ollama = str(scope.get("path", "")).startswith("/api/")
        extra: tuple[tuple[str, str], ...] = ()
        try:
            body = await self._handle(scope, headers, reader)
            status = 200
        except ServiceError as exc:
            status, body, extra = (
                exc.status,
                error_body(exc, exc.status, ollama=ollama),
                exc.headers,
            )
        except ModelUnavailable as exc:
            status, body = 503, error_body(exc, 503, ollama=ollama)
        except AntinomyError as exc:
            status, body = 422, error_body(exc, 422, ollama=ollama)
        except Exception as exc:
            # The exception's own text may name files or internals: it goes to the log only.
            log.exception("endpoint: %s %s failed", scope.get("method"), scope.get("path"))
            status = 500
            body = error_body(
                RuntimeError(
                    f"Internal error ({type(exc).__name__}) — see the server log "
                    "(`antinomy serve` prints it; the app's log is in the Debug panel)."
                ),
                500,
                ollama=ollama,
            )
        if scope.get("method") == "POST":
            await reader.drain(headers)
        await _send_json(send, status, body, extra)

    async def _handle(self, scope: Scope, headers: dict[str, str], reader: _BodyReader) -> JsonBody:
        g = self.guardrails
        g.check_host(headers)
        g.check_origin(headers)
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        if path == PROOF_PATH and method == "GET":
            # Open, like /healthz: the hook asks it *before* it sends the token (or anything
            # else) to whatever listens on the port; only the holder of the token can answer.
            return {"proof": g.prove(headers.get(NONCE_HEADER, "")), "scheme": PROOF_SCHEME}
        if path not in OPEN_PATHS and g.needs_token(path):
            g.check_token(headers)
        if method == "GET":
            get = self.routes.get(path)
            if get is None:
                raise self._missing(path, method)
            return await get()
        if method != "POST":
            raise MethodNotAllowed(f"{method} is not supported on {path}; use POST or GET.")
        route = self.routes.post(path)
        if route is None:
            raise self._missing(path, method)
        media = headers.get("content-type", "").split(";")[0].strip().lower()
        if media != "application/json":
            raise UnsupportedMediaType(
                f"Content-Type {media or '(none)'!r} is refused: send the body as "
                "'application/json'."
            )
        raw = await reader.read(headers, g.max_body)
        parsed = parse_body(raw)
        if not isinstance(parsed, dict):
            raise BadRequest(f"The body must be a JSON object, not {type(parsed).__name__}.")
        result: Any
        if route.is_async:
            result = await route.handler(parsed)  # type: ignore[misc]
        else:
            loop = asyncio.get_running_loop()
            result = await loop.run_in_executor(self._workers, route.handler, parsed)
        if not isinstance(result, dict):
            raise TypeError(f"the handler of {path} returned {type(result).__name__}, not a dict")
        return result

    def _missing(self, path: str, method: str) -> ServiceError:
        if self.routes.has(path):
            other = "GET" if method != "GET" else "POST"
            return MethodNotAllowed(f"{method} is not supported on {path}; use {other}.")
        return NotFound(f"No route {path}. Routes: {', '.join(self.routes.paths())}.")


#: A ``\\uD800``–``\\uDFFF`` escape: only then can the parsed text hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def parse_body(raw: bytes) -> Any:
    """The body as JSON, or :class:`BadRequest` with what is wrong — never an internal error.

    The bytes must be UTF-8 (RFC 8259), strictly: ``json.loads`` on bytes also took
    UTF-16 and UTF-32, and surrogates written as bytes (``ED A0 80``), which then
    crashed whatever wrote the text later (the memory log, the answer itself).
    Beyond syntax this refuses what ``json.loads`` accepts (or crashes on) but no
    handler can use: nesting deep enough to exhaust the parser's stack, integers
    with more digits than Python converts, and lone UTF-16 surrogate escapes
    (``"\\ud800"``), which cannot be written as UTF-8 anywhere later either.
    """
    if raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise BadRequest(
            "The body is UTF-16 (it starts with a byte-order mark): send the JSON as UTF-8."
        )
    if b"\x00" in raw:  # never in JSON text, always in UTF-16 or UTF-32 text
        raise BadRequest("The body looks like UTF-16 or UTF-32: send the JSON as UTF-8.")
    try:
        text = raw.decode("utf-8")  # strict: json.loads(bytes) let UTF-16 and lone surrogates in
    except UnicodeDecodeError as exc:
        raise BadRequest(_not_utf8(raw, exc)) from None
    try:
        parsed = json.loads(text.removeprefix("\ufeff"))  # a UTF-8 byte-order mark is tolerated
    except RecursionError:
        raise BadRequest(
            "The body is nested too deeply to read: send at most a few levels of arrays "
            "and objects."
        ) from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"The body is not valid JSON: {exc}.") from None
    except ValueError as exc:  # e.g. "Exceeds the limit (4300 digits) for integer string…"
        raise BadRequest(f"The body holds a value that cannot be read: {exc}.") from None
    if _SURROGATE_ESCAPE.search(raw):
        where = _lone_surrogate(parsed)
        if where is not None:
            raise BadRequest(
                f"The body holds a lone UTF-16 surrogate escape (\\u{ord(where):04x}), which is "
                "not a character: send the text as valid Unicode (a pair like \\ud83d\\ude00 "
                "is fine)."
            )
    return parsed


def _not_utf8(raw: bytes, exc: UnicodeDecodeError) -> str:
    bad = raw[exc.start : exc.start + 3]
    if bad[:1] == b"\xed" and len(bad) > 1 and bad[1] >= 0xA0:
        return (
            f"The body holds a UTF-16 surrogate encoded as bytes ({bad.hex(' ')} at byte "
            f"{exc.start}), which is not UTF-8: send the text as valid Unicode."
        )
    return (
        f"The body is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at byte {exc.start}): "
        "send the JSON as UTF-8."
    )


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in the strings (and keys) of ``value``, iteratively."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return item[exc.start]
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


class _BodyReader:
    """Reads the request body with a size cap; drains what a refusal left unread."""

    def __init__(self, receive: Receive) -> None:
        self._receive = receive
        self.finished = False

    async def _next(self) -> bytes | None:
        message = await self._receive()
        if message["type"] != "http.request":
            self.finished = True
            return None
        if not message.get("more_body", False):
            self.finished = True
        return bytes(message.get("body", b""))

    async def read(self, headers: dict[str, str], limit: int) -> bytes:
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(
                f"The body is {int(declared)} bytes; the limit is {limit} bytes — "
                "send less at once."
            )
        chunks: list[bytes] = []
        size = 0
        while not self.finished:
            chunk = await self._next()
            if chunk is None:
                raise BadRequest("The client went away before sending the whole body.")
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(
                    f"The body is over the limit of {limit} bytes — send less at once."
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def drain(self, headers: dict[str, str]) -> None:
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > DRAIN_LIMIT:
            return  # too big to drain: the server closes the connection instead
        drained = 0
        while not self.finished and drained <= DRAIN_LIMIT:
            chunk = await self._next()
            drained += len(chunk or b"")


def _encode(status: int, body: JsonBody) -> tuple[int, bytes]:
    try:
        return status, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (UnicodeEncodeError, TypeError, ValueError) as exc:
        # A handler's answer that is not JSON-able UTF-8 (a lone surrogate read from a file):
        # still a JSON 500, not the server's plain-text one.
        log.error("endpoint: the answer cannot be sent as JSON: %r", exc)
        error = RuntimeError(f"Internal error ({type(exc).__name__}) — see the server log.")
        return 500, json.dumps(error_body(error, 500)).encode("utf-8")


async def _send_json(
    send: Send, status: int, body: JsonBody, extra: tuple[tuple[str, str], ...] = ()
) -> None:
    status, data = _encode(status, body)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(data)).encode("ascii")),
                (b"cache-control", b"no-store"),
                *((k.encode("latin-1"), v.encode("latin-1")) for k, v in extra),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})

"""Embeddings from an OpenAI-compatible server: ``POST {base_url}/embeddings``.

Any server that speaks OpenAI's embeddings route works: llama.cpp's
``llama-server --embeddings``, Ollama, vLLM, text-embeddings-inference, or
another Antinomy's own endpoint (``antinomy serve``). This is how the first
index of a large vault moves to a GPU box; the index, the transactions and the
judge stay here.

Standard library only. Texts go in batches (``batch_size`` texts, at most
``max_batch_chars`` characters a request), on one keep-alive connection per
calling thread. A transient failure — connection refused or reset, a timeout,
408/429/5xx — is retried with exponential backoff (``Retry-After`` honoured up
to :data:`MAX_RETRY_AFTER`); anything else is one :class:`ModelUnavailable`
naming the fix. Vectors are L2-normalised here whatever the server does, and
every answer is checked (count, order, dimension, finite values) before use.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from foundation.errors import ModelUnavailable
from inference.embedder import Embedder, Vectors
from inference.http_backend import is_loopback_host

log = logging.getLogger(__name__)

#: Statuses worth another try: the server is busy, restarting or behind a proxy hiccup.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: A server asking us to wait longer than this is treated as down.
MAX_RETRY_AFTER = 10.0


@dataclass(frozen=True)
class HttpEmbedderSettings:
    base_url: str
    #: The model id sent to the server; "" lets the server use its default (llama-server,
    #: Antinomy); Ollama, vLLM and TEI behind a router need the name.
    model: str = ""
    api_key: str | None = None
    #: Texts per request. Antinomy's endpoint takes up to 256; llama-server's limit is its
    #: batch size in tokens, which 32 index chunks of ~230 tokens can exceed, so 32.
    batch_size: int = 32
    #: Characters per request, so no request nears a server's body limit (Antinomy: 2 MiB).
    max_batch_chars: int = 64_000
    #: Each text is cut to this many characters first. The shipped embedder reads 256
    #: tokens (~1,500 characters of prose); the index sends chunks of ~1,000.
    max_chars: int = 2_000
    #: Tries per request, the first included.
    attempts: int = 4
    #: Seconds before the second try; doubled for each next one.
    backoff: float = 0.5
    connect_timeout: float = 5.0
    read_timeout: float = 120.0

    def __post_init__(self) -> None:
        for name in ("batch_size", "max_batch_chars", "max_chars", "attempts"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ModelUnavailable(f"HttpEmbedderSettings.{name} must be at least 1.")


class _Transient(Exception):
    """A failure worth another try; carries the server's requested wait, if any."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff
    return seconds if seconds is not None and seconds >= 0 else None


class OpenAIHttpEmbedder(Embedder):
    """An :class:`Embedder` whose vectors come from an OpenAI-compatible server.

    Construction sends one probe text: an unreachable or wrong server fails at
    load time (with the fix), not on the first index, and the probe tells the
    dimension and the model id the server really serves. ``name`` carries that id,
    so an index built with one server model is re-embedded under another.
    """

    def __init__(
        self,
        settings: HttpEmbedderSettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urlsplit(settings.base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelUnavailable(
                f"{settings.base_url!r} is not an http(s) URL — give the embedding server's "
                "base URL, e.g. http://127.0.0.1:8080/v1."
            )
        self.settings = settings
        self._parts = parts
        self._path = (parts.path or "") + "/embeddings"
        self._sleep = sleep
        self._local = threading.local()
        self._connections: list[http.client.HTTPConnection] = []
        self._conn_lock = threading.Lock()
        #: True when calls send note text to another machine (non-loopback URL).
        self.leaves_machine = not is_loopback_host(parts.hostname)
        self.backend_name = f"openai-compatible {settings.base_url}"
        #: Requests sent, and how many of them were retries (for doctor and benchmarks).
        self.requests = 0
        self.retries = 0
        self.served_model = settings.model
        self.dimension = 0
        #: The server answers one vector per token (a model without pooling). Then each
        #: text goes alone: llama-cpp-python 0.3's server mixes up the token vectors of a
        #: batch (measured: only the first text of a batch of three came back right).
        self.token_level = False
        probe = self._post(["probe"])
        self.dimension = int(probe.shape[1])
        self.name = f"{self.served_model or 'server default'} (openai-compatible)"
        #: What the index records: the served model, so a switch re-embeds the vault.
        self.model_id = self.name

    # ------------------------------------------------------------------ transport

    def _connection(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self._local, "conn", None)
        if conn is None:
            cls = (
                http.client.HTTPSConnection
                if self._parts.scheme == "https"
                else http.client.HTTPConnection
            )
            conn = cls(
                self._parts.hostname or "",
                self._parts.port,
                timeout=self.settings.connect_timeout,
            )
            self._local.conn = conn
            with self._conn_lock:
                self._connections.append(conn)
        return conn

    def _drop_connection(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def _exchange(self, payload: bytes) -> tuple[http.client.HTTPResponse, bytes]:
        conn = self._connection()
        if conn.sock is None:
            conn.connect()
            assert conn.sock is not None
            conn.sock.settimeout(self.settings.read_timeout)
        conn.request("POST", self._path, body=payload, headers=self._headers())
        response = conn.getresponse()
        return response, response.read()

    def _send_once(self, payload: bytes) -> Any:
        """One request; raises :class:`_Transient` or :class:`ModelUnavailable`."""
        reused = getattr(self._local, "conn", None) is not None and self._local.conn.sock
        try:
            try:
                response, body = self._exchange(payload)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                if not reused:
                    raise
                # The server closed an idle keep-alive connection (uvicorn does after 5 s):
                # not a failure, so a fresh connection at once, without a backoff.
                self._drop_connection()
                response, body = self._exchange(payload)
        except (OSError, http.client.HTTPException) as exc:
            # Refused, reset, timed out, or closed mid-answer.
            self._drop_connection()
            raise _Transient(f"{type(exc).__name__}: {exc}") from exc
        if response.getheader("Connection", "").lower() == "close":
            self._drop_connection()
        status = response.status
        if status in TRANSIENT_STATUSES:
            raise _Transient(
                f"HTTP {status}: {self._detail(body)}",
                _retry_after(response.getheader("Retry-After")),
            )
        if status in (401, 403):
            raise ModelUnavailable(
                f"The embedding server at {self.settings.base_url} refused the request "
                f"({status}) — check the embedder API key in Settings (--embedder-api-key)."
            )
        if status == 404:
            raise ModelUnavailable(
                f"{self.settings.base_url}/embeddings does not exist (404: "
                f"{self._detail(body)}) — give the base URL ending in /v1, start llama-server "
                "with --embeddings, or name a model the server has (--embedder-model)."
            )
        if status >= 400:
            raise ModelUnavailable(
                f"The embedding server at {self.settings.base_url} answered {status}: "
                f"{self._detail(body)} — check the model name and the server's limits "
                "(batch size, context length)."
            )
        try:
            return json.loads(body)
        except ValueError as exc:
            raise ModelUnavailable(
                f"{self.settings.base_url}/embeddings did not answer JSON — is this the base URL "
                "of an OpenAI-compatible server (usually ending in /v1)?"
            ) from exc

    @staticmethod
    def _detail(body: bytes) -> str:
        text = body[:4000].decode("utf-8", "replace").strip()
        try:
            data = json.loads(text)
        except ValueError:
            return text[:300] or "(no detail)"
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
        return text[:300]

    def _post(self, texts: Sequence[str]) -> Vectors:
        """Embed one batch, retrying transient failures; returns normalised rows."""
        body: dict[str, Any] = {"input": list(texts), "encoding_format": "float"}
        if self.settings.model:
            body["model"] = self.settings.model
        payload = json.dumps(body).encode()
        s = self.settings
        for attempt in range(1, s.attempts + 1):
            self.requests += 1
            try:
                answer = self._send_once(payload)
                break
            except _Transient as exc:
                if attempt == s.attempts:
                    raise ModelUnavailable(
                        f"Cannot reach the embedding server at {s.base_url} ({exc}; "
                        f"{s.attempts} tries) — start the server, or change the embedder URL in "
                        "Settings (--embedder-url), or use the bundled embedder."
                    ) from exc
                wait = s.backoff * 2 ** (attempt - 1)
                if exc.retry_after is not None:
                    if exc.retry_after > MAX_RETRY_AFTER:
                        raise ModelUnavailable(
                            f"The embedding server at {s.base_url} asks to wait "
                            f"{exc.retry_after:.0f} s ({exc}) — try again later."
                        ) from exc
                    wait = max(wait, exc.retry_after)
                log.info("embedding request failed (%s); try %d in %.1f s", exc, attempt + 1, wait)
                self.retries += 1
                self._sleep(wait)
        return self._vectors(answer, len(texts))

    def _vectors(self, answer: Any, count: int) -> Vectors:
        where = f"{self.settings.base_url}/embeddings"
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list) or len(data) != count:
            got = len(data) if isinstance(data, list) else "no"
            raise ModelUnavailable(
                f"{where} answered {got} embeddings for {count} texts — the server is not "
                "OpenAI-compatible for embeddings."
            )
        served = answer.get("model")
        if isinstance(served, str) and served:
            self.served_model = served
        rows: list[Any] = [None] * count
        for position, item in enumerate(data):
            index = item.get("index", position) if isinstance(item, dict) else None
            vector = item.get("embedding") if isinstance(item, dict) else None
            if not isinstance(index, int) or not 0 <= index < count or rows[index] is not None:
                raise ModelUnavailable(f"{where} answered a bad or repeated index {index!r}.")
            if not isinstance(vector, list) or not vector:
                raise ModelUnavailable(
                    f"{where} answered an embedding that is not a list of numbers — the server "
                    "must support encoding_format 'float'."
                )
            rows[index] = self._pooled(vector, where)
        try:
            matrix = np.asarray(rows, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ModelUnavailable(
                f"{where} answered embeddings of different lengths or with non-numbers."
            ) from exc
        if matrix.ndim != 2:
            raise ModelUnavailable(f"{where} answered embeddings of different lengths.")
        if self.dimension and matrix.shape[1] != self.dimension:
            raise ModelUnavailable(
                f"{where} answered {matrix.shape[-1]}-dimensional vectors, earlier "
                f"{self.dimension} — the server changed model; restart Antinomy to re-embed."
            )
        if not np.isfinite(matrix).all():
            raise ModelUnavailable(f"{where} answered vectors with NaN or infinite values.")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if (norms == 0).any():
            raise ModelUnavailable(f"{where} answered an all-zero vector; it cannot be compared.")
        vectors: Vectors = (matrix / norms).astype(np.float32)
        return vectors

    def _pooled(self, vector: list[Any], where: str) -> Any:
        """One vector per text. A server running a model without a pooling layer
        (llama-cpp-python's server on a chat GGUF) answers one vector per token:
        those are mean-pooled here, as sentence-transformers pools."""
        if not all(isinstance(v, list) for v in vector):
            return vector
        self.token_level = True
        try:
            tokens = np.asarray(vector, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise ModelUnavailable(
                f"{where} answered token vectors of different lengths or with non-numbers."
            ) from exc
        if tokens.ndim != 2 or tokens.shape[0] == 0:
            raise ModelUnavailable(f"{where} answered an embedding of shape {tokens.shape}.")
        return tokens.mean(axis=0)

    # ------------------------------------------------------------------ Embedder

    def _batches(self, texts: Sequence[str]) -> list[list[int]]:
        s = self.settings
        per_request = 1 if self.token_level else s.batch_size
        batches: list[list[int]] = []
        current: list[int] = []
        chars = 0
        for i, text in enumerate(texts):
            size = min(len(text), s.max_chars)
            if current and (len(current) >= per_request or chars + size > s.max_batch_chars):
                batches.append(current)
                current, chars = [], 0
            current.append(i)
            chars += size
        if current:
            batches.append(current)
        return batches

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` on the server, in batches. Any thread (one connection each).

        Raises :class:`ModelUnavailable` when the server stays unreachable or answers
        something unusable; nothing is returned half-done.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # OpenAI-style servers refuse an empty string; one space embeds as "nothing".
        bounded = [t[: self.settings.max_chars] if t.strip() else " " for t in texts]
        for idx in self._batches(bounded):
            out[idx] = self._post([bounded[i] for i in idx])
        return out

    def close(self) -> None:
        with self._conn_lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()

"""An OpenAI-compatible chat backend: llama.cpp's llama-server, Ollama, LM Studio, vLLM.

Standard library only. Answers are streamed (server-sent events) so that Stop
closes the connection between two chunks instead of waiting for the whole
answer. A base URL that is not loopback sets :attr:`leaves_machine`; the GUI
shows its "this sends note text off this machine" warning from that flag.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from foundation.errors import GenerationError, ModelUnavailable
from inference.base import (
    Completion,
    FinishReason,
    GenerationSettings,
    Generator,
    Message,
    StopFlag,
)


def is_loopback_host(host: str) -> bool:
    """True for localhost and loopback literals; any other name counts as remote."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class HttpSettings:
    base_url: str
    model: str = ""
    api_key: str | None = None
    connect_timeout: float = 5.0
    #: Longest silence allowed between two streamed chunks.
    read_timeout: float = 120.0


class _FormatRefused(Exception):
    """The server rejected our ``response_format``; try the next dialect."""


#: How servers spell "constrain to this JSON schema": OpenAI's own (llama-server,
#: vLLM, LM Studio, Ollama), llama-cpp-python's server, and none at all.
_SCHEMA_DIALECTS = ("json_schema", "json_object", "none")


def _response_format(dialect: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    if dialect == "json_schema":
        return {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": schema, "strict": True},
        }
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    return None


class OpenAIHttpGenerator(Generator):
    """Chat completions from an OpenAI-compatible server (``…/v1``).

    The schema is sent the OpenAI way first; a server that refuses that
    ``response_format`` is asked again in the next dialect, and the one it
    accepts is remembered. Without any, the structured-output policy still
    extracts and checks the JSON.
    """

    def __init__(self, settings: HttpSettings) -> None:
        parts = urlsplit(settings.base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ModelUnavailable(
                f"{settings.base_url!r} is not an http(s) URL — give the server's base URL, "
                "e.g. http://127.0.0.1:8080/v1."
            )
        self.settings = settings
        self._parts = parts
        self._path = parts.path or ""
        self.leaves_machine = not is_loopback_host(parts.hostname)
        self.model_name = settings.model or "(server default)"
        self.model_id = f"{settings.base_url.rstrip('/')}#{settings.model}"
        self.backend_name = f"openai-compatible {settings.base_url}"
        self._dialect = 0

    # ------------------------------------------------------------------ transport

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        cls = (
            http.client.HTTPSConnection
            if self._parts.scheme == "https"
            else http.client.HTTPConnection
        )
        return cls(self._parts.hostname or "", self._parts.port, timeout=timeout)

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        return headers

    def _unreachable(self, exc: BaseException) -> ModelUnavailable:
        return ModelUnavailable(
            f"Cannot reach the LLM server at {self.settings.base_url} ({exc}) — start the "
            "server, or change the backend URL in Settings (or use the embedded model)."
        )

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn = self._connection(self.settings.connect_timeout)
        try:
            conn.connect()
            if conn.sock is not None:
                conn.sock.settimeout(self.settings.read_timeout)
            payload = json.dumps(body).encode() if body is not None else None
            conn.request(method, self._path + path, body=payload, headers=self._headers())
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            raise self._unreachable(exc) from exc
        if response.status >= 400:
            detail = response.read(4000).decode("utf-8", "replace").strip()
            conn.close()
            if body and "response_format" in body and "response_format" in detail:
                raise _FormatRefused(detail)
            if response.status in (401, 403):
                raise ModelUnavailable(
                    f"The LLM server at {self.settings.base_url} refused the request "
                    f"({response.status}) — check the API key in Settings."
                )
            raise GenerationError(
                f"The LLM server at {self.settings.base_url} answered {response.status}: "
                f"{detail[:300]}"
            )
        return conn, response

    def list_models(self) -> list[str]:
        """Model ids the server offers; raises ModelUnavailable when unreachable."""
        conn, response = self._request("GET", "/models", None)
        try:
            data = json.loads(response.read())
        except ValueError as exc:
            raise ModelUnavailable(
                f"{self.settings.base_url}/models did not return JSON — is this the base URL of "
                "an OpenAI-compatible server (usually ending in /v1)?"
            ) from exc
        finally:
            conn.close()
        return [str(m.get("id")) for m in data.get("data", []) if isinstance(m, dict)]

    @staticmethod
    def _events(response: http.client.HTTPResponse) -> Iterator[dict[str, Any]]:
        for raw in response:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            try:
                event = json.loads(data)
            except ValueError:
                continue
            if isinstance(event, dict):
                yield event

    # ------------------------------------------------------------------ Generator

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        settings = settings or GenerationSettings()
        body: dict[str, Any] = {
            "messages": [m.as_dict() for m in messages],
            "max_tokens": settings.max_tokens,
            "temperature": settings.temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.settings.model:
            body["model"] = self.settings.model
        start = time.perf_counter()
        first_token_at: float | None = None
        pieces: list[str] = []
        finish: FinishReason = "stop"
        usage: dict[str, Any] = {}
        chunks = 0
        while True:
            fmt = (
                None
                if schema is None
                else _response_format(_SCHEMA_DIALECTS[self._dialect], schema)
            )
            body.pop("response_format", None)
            if fmt is not None:
                body["response_format"] = fmt
            try:
                conn, response = self._request("POST", "/chat/completions", body)
                break
            except _FormatRefused:
                if self._dialect + 1 >= len(_SCHEMA_DIALECTS):
                    raise GenerationError(
                        f"The LLM server at {self.settings.base_url} refused the request's "
                        "response format."
                    ) from None
                self._dialect += 1
        try:
            for event in self._events(response):
                if stop is not None and stop.is_set():
                    finish = "stopped"
                    break
                if isinstance(event.get("usage"), dict):
                    usage = event["usage"]
                for choice in event.get("choices") or []:
                    delta = choice.get("delta") or choice.get("message") or {}
                    text = delta.get("content")
                    if text:
                        if first_token_at is None:
                            first_token_at = time.perf_counter()
                        pieces.append(text)
                        chunks += 1
                    if choice.get("finish_reason") == "length":
                        finish = "length"
        except (TimeoutError, OSError, http.client.HTTPException) as exc:
            raise GenerationError(
                f"The connection to {self.settings.base_url} broke mid-answer ({exc}) — "
                "check the server and try again."
            ) from exc
        finally:
            conn.close()
        text = "".join(pieces)
        return Completion(
            text=text,
            tokens_in=int(usage.get("prompt_tokens") or 0)
            or sum(self.count_tokens(m.content) for m in messages),
            tokens_out=int(usage.get("completion_tokens") or 0) or chunks,
            duration=time.perf_counter() - start,
            finish_reason=finish,
            model=self.model_name,
            backend=self.backend_name,
            prompt_seconds=(first_token_at or time.perf_counter()) - start,
        )

"""Helpers for the endpoint tests: raw HTTP calls with full control of headers."""

from __future__ import annotations

import http.client
import json
from typing import Any

TOKEN = "test-token-" + "x" * 40


def call(
    port: int,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = TOKEN,
    headers: dict[str, str] | None = None,
    raw: bytes | None = None,
    timeout: float = 30.0,
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = {"Content-Type": "application/json"}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    sent.update(headers or {})
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    try:
        conn.request(method, path, body=data, headers=sent)
        response = conn.getresponse()
        payload = response.read()
        return response.status, json.loads(payload) if payload else {}
    finally:
        conn.close()

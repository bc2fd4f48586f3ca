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


def rss_mib() -> float:
    """This process's resident memory now (Linux), in MiB."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run_load(
    port: int,
    *,
    clients: int = 8,
    seconds: float = 5.0,
    token: str = TOKEN,
    requests: list[tuple[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """``clients`` threads, each on its own keep-alive connection, cycling through
    ``requests`` (path, body) until ``seconds`` have passed. Returns counts,
    requests/s, latency p50/p99 (ms) and errors (any non-200 or exception)."""
    import threading
    import time

    work = requests or [("/v1/embeddings", {"input": "Production releases go out on Friday."})]
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}

    def client(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: list[float] = []
        i = n
        try:
            while time.perf_counter() < stop_at:
                path, body = work[i % len(work)]
                i += 1
                t0 = time.perf_counter()
                conn.request("POST", path, body=json.dumps(body).encode(), headers=headers)
                response = conn.getresponse()
                response.read()
                mine.append(time.perf_counter() - t0)
                if response.status != 200:
                    with lock:
                        errors.append(f"{path}: {response.status}")
        except Exception as exc:  # counted, not raised: the report says what failed
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            conn.close()
            with lock:
                latencies.extend(mine)

    rss_before = rss_mib()
    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    ordered = sorted(latencies)

    def pct(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {
        "clients": clients,
        "seconds": round(elapsed, 2),
        "requests": len(ordered),
        "errors": errors[:10],
        "error_count": len(errors),
        "requests_per_s": round(len(ordered) / elapsed, 1),
        "p50_ms": pct(0.5) if ordered else None,
        "p99_ms": pct(0.99) if ordered else None,
        "rss_mib_before": round(rss_before, 1),
        "rss_mib_after": round(rss_mib(), 1),
    }

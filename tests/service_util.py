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


def error_message(body: dict[str, Any]) -> str:
    """The message of an error answer, in OpenAI's shape or (on ``/api/...``) Ollama's."""
    error = body["error"]
    return error if isinstance(error, str) else str(error["message"])


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


def pipelining_flood(
    port: int, connections: int, *, rcvbuf: int | None = None, seconds: float = 600.0
) -> dict[str, Any]:
    """Hold ``connections`` sockets, each pipelining ``GET /healthz`` (no token) as fast as
    it takes them, never reading an answer; one the server closes is opened again at
    once. Runs ``seconds`` or until SIGTERM; returns counts. ``rcvbuf`` shrinks each
    socket's receive buffer, so unread answers fill it sooner."""
    import selectors
    import signal
    import socket
    import threading
    import time

    stopped = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    block = (f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n" * 256).encode()
    sel = selectors.DefaultSelector()
    counts = {"opened": 0, "closed_by_server": 0, "connect_failed": 0}
    sent = 0

    def open_one() -> None:
        try:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            if rcvbuf is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            sock.settimeout(1)
            sock.connect(("127.0.0.1", port))
        except OSError:
            sock.close()
            counts["connect_failed"] += 1
            return
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_WRITE)
        counts["opened"] += 1

    stop_at = time.monotonic() + seconds
    while time.monotonic() < stop_at and not stopped.is_set():
        while len(sel.get_map()) < connections and not stopped.is_set():
            open_one()
            if counts["connect_failed"] > 10 * connections:
                stopped.set()
        for key, _ in sel.select(timeout=0.05):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            try:
                sent += sock.send(block)
            except BlockingIOError:
                continue
            except OSError:  # closed by the server: come back at once
                sel.unregister(sock)
                sock.close()
                counts["closed_by_server"] += 1
    held = len(sel.get_map())
    for key in list(sel.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    return {**counts, "held_at_end": held, "requests_sent_mb": round(sent / 2**20, 1)}


class PipeliningFlood:
    """:func:`pipelining_flood` in a process of its own (as an attacker would be), for
    the length of a ``with`` block; ``report`` holds its counts afterwards."""

    def __init__(self, port: int, connections: int, *, rcvbuf: int | None = None) -> None:
        self.args = (port, connections, rcvbuf)
        self.report: dict[str, Any] = {}

    def __enter__(self) -> PipeliningFlood:
        import subprocess
        import sys
        from pathlib import Path

        port, connections, rcvbuf = self.args
        code = (
            "import json; from tests.service_util import pipelining_flood; "
            f"print(json.dumps(pipelining_flood({port}, {connections}, rcvbuf={rcvbuf})))"
        )
        self._proc = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=Path(__file__).resolve().parents[1],
            stdout=subprocess.PIPE,
            text=True,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._proc.terminate()
        out, _ = self._proc.communicate(timeout=60)
        self.report = json.loads(out) if out.strip() else {"exit": self._proc.returncode}

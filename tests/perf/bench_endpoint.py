"""The endpoint: single-request latency, Nagle, batched throughput, and a 60 s load test.

In one run, on the real shipped embedder:

* ``GET /healthz`` on a keep-alive connection, against a plain asyncio server
  that writes headers and body in two sends with Nagle's algorithm on (what
  happens without ``TCP_NODELAY``): p50/p99 side by side;
* ``POST /v1/embeddings`` one short text per request, sequential: p50/p99, and
  the in-process embed of the same text for the HTTP overhead;
* throughput in texts/s: sequential single-text requests; 8 concurrent
  clients sending single texts (micro-batched: the average batch is reported);
  one request of 64 texts;
* load: 8 keep-alive clients for ``--seconds`` (default 60) cycling through
  embeddings, Ollama embed and guard checks on the sample vault — requests/s,
  p50/p99, errors, resident memory before/after.

Prints JSON. Run: ``python tests/perf/bench_endpoint.py [--seconds 60]``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.guard import GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service.server import start_endpoint
from inference.runtime import Runtime
from tests.service_util import TOKEN, run_load

TEXT = "Production releases go out every Friday between 14:00 and 16:00."
HEADERS = {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


def timed_requests(port: int, method: str, path: str, body: Any, n: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", port)
    data = None if body is None else json.dumps(body).encode()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request(method, path, body=data, headers=HEADERS)
        response = conn.getresponse()
        response.read()
        out.append(time.perf_counter() - t0)
        assert response.status == 200, response.status
    conn.close()
    return out


def nagle_server() -> tuple[int, threading.Event]:
    """A minimal HTTP server that writes headers, then body, with Nagle on."""
    ready = threading.Event()
    stop = threading.Event()
    port_box: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        body = b'{"status":"ok"}'
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head:
                    break
                writer.write(
                    b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                    b"content-length: " + str(len(body)).encode() + b"\r\n\r\n"
                )
                await writer.drain()
                writer.write(body)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port_box.append(server.sockets[0].getsockname()[1])
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        server.close()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    ready.wait()
    return port_box[0], stop


def concurrent_singles(port: int, clients: int, seconds: float) -> int:
    count = [0]
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port)
        n = 0
        while time.perf_counter() < stop_at:
            body = json.dumps({"input": f"{TEXT} ({i}-{n})"}).encode()
            conn.request("POST", "/v1/embeddings", body=body, headers=HEADERS)
            conn.getresponse().read()
            n += 1
        conn.close()
        with lock:
            count[0] += n

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="antinomy-bench-endpoint-"))
    os.environ["ANTINOMY_HOME"] = str(tmp / "home")
    try:
        vault = tmp / "vault"
        shutil.copytree(sample_vault_source(), vault)
        save_guard_settings(vault, GuardSettings(enabled=True))
        runtime = Runtime()
        runtime.start()
        runtime.wait_ready()
        handle = start_endpoint(
            runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False
        )
        assert handle.guard is not None and handle.guard.ready.wait(120)
        port = handle.port
        report: dict[str, Any] = {"python": sys.version.split()[0]}

        nagle_port, stop_nagle = nagle_server()
        ours, theirs = [], []
        for _ in range(5):  # interleaved blocks, the machine is noisy
            ours += timed_requests(port, "GET", "/healthz", None, 20)
            theirs += timed_requests(nagle_port, "GET", "/healthz", None, 20)
        stop_nagle.set()
        report["healthz_keepalive_ms"] = {
            "endpoint_p50": pct(ours, 0.5),
            "endpoint_p99": pct(ours, 0.99),
            "nagle_on_two_writes_p50": pct(theirs, 0.5),
            "nagle_on_two_writes_p99": pct(theirs, 0.99),
        }

        single = timed_requests(port, "POST", "/v1/embeddings", {"input": TEXT}, args.requests)
        inproc = []
        for _ in range(args.requests):
            t0 = time.perf_counter()
            runtime.submit_embed([TEXT]).result()
            inproc.append(time.perf_counter() - t0)
        report["embeddings_single_ms"] = {
            "p50": pct(single, 0.5),
            "p99": pct(single, 0.99),
            "in_process_p50": pct(inproc, 0.5),
            "in_process_p99": pct(inproc, 0.99),
        }

        seq_seconds = sum(single)
        before = (handle.batcher.stats.calls, handle.batcher.stats.requests)
        window = 10.0
        texts = concurrent_singles(port, 8, window)
        calls = handle.batcher.stats.calls - before[0]
        requests = handle.batcher.stats.requests - before[1]
        batch = [f"{TEXT} ({i})" for i in range(64)]
        big = timed_requests(port, "POST", "/v1/embeddings", {"input": batch}, 5)
        report["throughput_texts_per_s"] = {
            "sequential_single_requests": round(args.requests / seq_seconds, 1),
            "8_clients_single_texts_micro_batched": round(texts / window, 1),
            "average_batch_requests": round(requests / max(calls, 1), 2),
            "one_request_of_64_texts": round(64 / (sorted(big)[2]), 1),
        }

        work = [
            ("/v1/embeddings", {"input": TEXT}),
            ("/v1/guard/check", {"summary": "rm /var/lib/billing/ledger.db", "session_id": "l"}),
            ("/api/embed", {"input": ["two", "short texts"]}),
        ]
        report["load"] = run_load(port, clients=8, seconds=args.seconds, requests=work)
        handle.stop()
        runtime.close()
        print(json.dumps(report, indent=1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

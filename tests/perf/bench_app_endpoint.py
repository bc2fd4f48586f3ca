"""The desktop app's endpoint on the real models; prints JSON.

    python tests/perf/bench_app_endpoint.py [--checks 200]

Opens the app offscreen on a fresh sample vault (temporary ANTINOMY_HOME, a
free port, the guard on), then times ``POST /v1/guard/check`` from one
keep-alive client, side by side in one run:

* ``gui_idle`` — the GUI thread runs its event loop;
* ``gui_blocked`` — the GUI thread is off its loop in blocking calls (GIL released);
* ``gui_busy_python`` — the GUI thread runs Python code (holds the GIL between
  switches): the endpoint has its own thread and loop, but shares the GIL.

Also: model-ready → endpoint up, launch → endpoint up, and window close (endpoint
and engines stopped). Machines here are shared and noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SUMMARIES = [
    "DROP the SQLite billing ledger and move invoices to Postgres",
    "git push origin main && ./deploy.sh production on Saturday night",
    "npm test -- --watch=false in the frontend folder",
    "Add a weekly on-call rotation schedule for the team",
]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--checks", type=int, default=200)
    args = parser.parse_args()
    os.environ["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-bench-endpoint-")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop.flows.guard import GuardSettings
    from desktop.flows.guard import save_guard_settings as save_guard
    from desktop.flows.settings import EndpointSettings, Settings, save_settings
    from desktop.resources import ensure_sample_vault
    from desktop.service.security import load_or_create_token
    from desktop.ui.app import build_window
    from desktop.ui.panels.guard import MAX_ROWS

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    save_settings(replace(Settings(), endpoint=EndpointSettings(port=port)))
    vault = ensure_sample_vault(Path(os.environ["ANTINOMY_HOME"]) / "vault")
    save_guard(vault, GuardSettings(enabled=True))
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = build_window(loop=loop, use_tray=False)
    window.show()
    endpoint = window.endpoint
    seen: dict[str, float] = {}
    endpoint.sig_endpoint_changed.connect(
        lambda: seen.setdefault(endpoint.state, time.perf_counter())
    )

    def spin(done: Callable[[], bool], seconds: float = 600) -> None:
        end = time.time() + seconds
        while not done():
            if time.time() > end:
                raise TimeoutError("timed out")
            app.processEvents()
            time.sleep(0.005)

    launched = time.perf_counter()
    window.controller.start(vault)
    spin(lambda: endpoint.state in ("up", "failed"))
    handle = endpoint.handle
    assert handle is not None and handle.guard is not None, endpoint.problem
    guard = handle.guard
    spin(guard.ready.is_set)
    token = load_or_create_token()

    def client(n: int, out: list[tuple[float, float]]) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        for i in range(n):
            body = {
                "summary": SUMMARIES[i % len(SUMMARIES)],
                "session_id": f"bench-{i}-{time.time_ns()}",
                "cwd": "/tmp",
                "tool_name": "Bash",
            }
            t = time.perf_counter()
            conn.request("POST", "/v1/guard/check", body=json.dumps(body), headers=headers)
            answer = json.loads(conn.getresponse().read())
            out.append(((time.perf_counter() - t) * 1000, answer["latency_ms"]))
        conn.close()

    result: dict[str, object] = {"checks": args.checks, "port": port}
    for label in ("gui_idle", "gui_blocked", "gui_busy_python"):
        out: list[tuple[float, float]] = []
        thread = threading.Thread(target=client, args=(args.checks, out))
        thread.start()
        while thread.is_alive():
            if label == "gui_idle":
                app.processEvents()
                time.sleep(0.002)
            elif label == "gui_blocked":
                time.sleep(0.2)
                app.processEvents()
            else:
                busy = time.perf_counter() + 0.2
                while time.perf_counter() < busy:
                    pass
                app.processEvents()
        trip = [a for a, _ in out]
        server = [b for _, b in out]
        result[label] = {
            "roundtrip_p50_ms": pct(trip, 50),
            "roundtrip_p99_ms": pct(trip, 99),
            "server_p50_ms": pct(server, 50),
            "server_p99_ms": pct(server, 99),
        }
    # The live log caught up with every check (it keeps the newest MAX_ROWS).
    log = window.panel("guard").log  # type: ignore[attr-defined]
    spin(lambda: log.topLevelItemCount() >= min(3 * args.checks, MAX_ROWS), 60)
    closing = time.perf_counter()
    window.close()
    result["close_s"] = round(time.perf_counter() - closing, 2)
    result["ready_to_endpoint_up_s"] = round(seen["up"] - seen.get("starting", seen["up"]), 3)
    result["launch_to_endpoint_up_s"] = round(seen["up"] - launched, 2)
    result["load_average"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

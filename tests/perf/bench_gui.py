"""GUI start-up and responsiveness on the sample vault; prints JSON.

    python tests/perf/bench_gui.py [--launches 5] [--mode classic]

Each launch is a fresh subprocess (offscreen, temporary ANTINOMY_HOME) timing
launch → window shown → models ready → first scan result; the medians are
reported. The stall figure is the largest lateness of a 10 ms QTimer while a
scan runs (target < 50 ms), beside the same figure for a bare Python thread
sleeping 10 ms in the same process (what the machine and the GIL allow).
Machines here are shared and noisy: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, os, sys, time
t0 = float(sys.argv[1]); mode = sys.argv[2]; cap = int(sys.argv[4])
if sys.argv[5] != "default":
    sys.setswitchinterval(float(sys.argv[5]))
sys.path.insert(0, sys.argv[3])
import threading
from dataclasses import replace
import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from desktop.resources import ensure_sample_vault
from desktop.ui.app import build_window
from inference.paths import data_dir
from inference.runtime import State
app = QApplication([]); loop = qasync.QEventLoop(app); asyncio.set_event_loop(loop)
w = build_window(loop=loop, use_tray=False); w.show(); app.processEvents()
out = {"shown": time.perf_counter() - t0}
late = []; last = [time.perf_counter()]
def tick():
    now = time.perf_counter(); late.append(now - last[0] - 0.010); last[0] = now
timer = QTimer(); timer.setInterval(10); timer.timeout.connect(tick)
# Control: a bare Python thread sleeping 10 ms, no Qt: what the machine and GIL allow.
bare = []; bare_on = threading.Event()
def sleeper():
    last = time.perf_counter()
    while True:
        time.sleep(0.01); now = time.perf_counter()
        if bare_on.is_set(): bare.append(now - last - 0.010)
        last = now
threading.Thread(target=sleeper, daemon=True).start()
async def wait(pred, timeout):
    end = time.perf_counter() + timeout
    while not pred():
        if time.perf_counter() > end: raise TimeoutError
        await asyncio.sleep(0.01)
async def main():
    c = w.controller
    c.start(ensure_sample_vault(data_dir()))
    await wait(lambda: c.runtime.state is State.READY, 300)
    out["ready"] = time.perf_counter() - t0
    await wait(lambda: c.index is not None and c.index.embedding is not None, 300)
    from desktop.flows.settings import ScanCaps
    c.update_settings(replace(c.settings, scan=ScanCaps(cap=cap)))
    t = w.panel("tensions"); t.mode.setCurrentIndex({"classic": 0, "whole-vault": 2}[mode])
    done = []
    t.runner.sig_scan_finished.connect(done.append); t.runner.sig_scan_failed.connect(done.append)
    last[0] = time.perf_counter(); timer.start(); bare_on.set()
    t.run_scan()
    await wait(lambda: bool(done), 1800)
    timer.stop(); bare_on.clear()
    out["first_result"] = time.perf_counter() - t0
    r = done[0]
    out["scan_status"] = getattr(r, "status", str(r))
    out["scan_seconds"] = getattr(r, "duration", None)
    out["max_lateness_ms"] = max(late) * 1000 if late else None
    out["timer_ticks"] = len(late)
    out["bare_thread_max_lateness_ms"] = max(bare) * 1000 if bare else None
with loop:
    loop.run_until_complete(main())
w.shutdown()
print(json.dumps(out))
"""


def launch(mode: str, cap: int, switch: str = "default") -> dict[str, float]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-bench-gui-")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(t0), mode, str(ROOT), str(cap), switch],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--mode", default="classic", choices=["classic", "whole-vault"])
    parser.add_argument(
        "--cap", type=int, default=20, help="classic-mode note cap (20 = the app's default)"
    )
    args = parser.parse_args()
    runs = [launch(args.mode, args.cap) for _ in range(args.launches)]
    keys = ["shown", "ready", "first_result", "max_lateness_ms", "bare_thread_max_lateness_ms"]
    print(
        json.dumps(
            {
                "launches": args.launches,
                "mode": args.mode,
                "cap": args.cap,
                "median": {k: statistics.median(r[k] for r in runs) for k in keys},
                "runs": runs,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

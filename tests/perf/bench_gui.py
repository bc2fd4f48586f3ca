"""GUI start-up and responsiveness on the sample vault; prints JSON.

    python tests/perf/bench_gui.py [--launches 3] [--mode whole-vault] [--extra-notes 300]

Each launch is a fresh subprocess (offscreen, temporary ANTINOMY_HOME, the sample
vault plus ``--extra-notes`` deterministic notes) timing launch → window shown →
models ready → first scan result; the medians are reported. The stall figures
are the largest (and p99) lateness of a 10 ms QTimer on the GUI thread while the
vault is indexed with vectors and while a scan runs (target < 50 ms), beside the
same figures for a bare Python thread sleeping 10 ms in the same process over
the same phase (what the machine and the GIL allow).
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
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import asyncio, json, os, sys, time
t0 = float(sys.argv[1]); mode = sys.argv[2]; cap = int(sys.argv[4]); extra = int(sys.argv[6])
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
from foundation.paths import data_dir
from inference.runtime import State
vault = ensure_sample_vault(data_dir())
if extra:  # more notes to index (deterministic texts), so indexing lasts long enough to measure
    from tests.perf.corpus import notes
    texts = notes(); folder = vault / "Bench"; folder.mkdir(exist_ok=True)
    for i in range(extra):
        body = texts[i % len(texts)]
        (folder / f"Bench note {i:04d}.md").write_text(f"# Bench note {i}\n\n{body}\n")
app = QApplication([]); loop = qasync.QEventLoop(app); asyncio.set_event_loop(loop)
w = build_window(loop=loop, use_tray=False); w.show(); app.processEvents()
out = {"shown": time.perf_counter() - t0}
# Lateness of a 10 ms QTimer on the GUI thread, per phase; and, as the reference, of a
# bare Python thread sleeping 10 ms in the same process (what the machine and GIL allow).
phase = ["loading"]; late = {}; bare = {}; last = [time.perf_counter()]
def tick():
    now = time.perf_counter(); late.setdefault(phase[0], []).append(now - last[0] - 0.010)
    last[0] = now
timer = QTimer(); timer.setInterval(10); timer.timeout.connect(tick)
def sleeper():
    prev = time.perf_counter()
    while True:
        time.sleep(0.01); now = time.perf_counter()
        bare.setdefault(phase[0], []).append(now - prev - 0.010)
        prev = now
# Diagnosis: when the GUI thread has not ticked for 60 ms, keep its stack (what blocks it).
import traceback
main_id = threading.get_ident(); stalls = []
def watchdog():
    seen = None
    while True:
        time.sleep(0.02)
        gap = time.perf_counter() - last[0]
        if gap > 0.06 and seen != last[0] and timer.isActive():
            seen = last[0]
            frame = sys._current_frames().get(main_id)
            stack = traceback.format_stack(frame)[-8:] if frame else []
            stalls.append({"phase": phase[0], "after_ms": round(gap * 1000),
                           "stack": [line.strip().splitlines()[0] for line in stack]})
threading.Thread(target=watchdog, daemon=True).start()
async def wait(pred, timeout):
    end = time.perf_counter() + timeout
    while not pred():
        if time.perf_counter() > end: raise TimeoutError
        await asyncio.sleep(0.01)
async def main():
    c = w.controller
    last[0] = time.perf_counter(); timer.start()
    threading.Thread(target=sleeper, daemon=True).start()
    c.start(vault)
    await wait(lambda: c.runtime.state is State.READY, 300)
    out["ready"] = time.perf_counter() - t0
    phase[0] = "indexing"; started = time.perf_counter()
    await wait(lambda: c.index is not None and c.index.embedding is not None, 600)
    out["indexing_seconds"] = time.perf_counter() - started
    out["notes_indexed"] = c.last_report.notes_indexed if c.last_report else None
    phase[0] = "idle"
    from desktop.flows.settings import ScanCaps
    c.update_settings(replace(c.settings, scan=ScanCaps(cap=cap)))
    t = w.panel("tensions"); t.mode.setCurrentIndex(t.mode.findData(mode))
    done = []
    t.runner.sig_scan_finished.connect(done.append); t.runner.sig_scan_failed.connect(done.append)
    await asyncio.sleep(0.5)
    phase[0] = "scanning"
    t.run_scan()
    await wait(lambda: bool(done), 1800)
    phase[0] = "done"; timer.stop()
    out["first_result"] = time.perf_counter() - t0
    r = done[0]
    out["scan_status"] = getattr(r, "status", str(r))
    out["scan_seconds"] = getattr(r, "duration", None)
    out["note_pairs_judged"] = getattr(r, "note_pairs_judged", None)
    out["pairs_shown"] = len(getattr(r, "pairs", ()))
    def stats(values):
        if not values: return None
        values = sorted(values)
        return {"max_ms": round(values[-1] * 1000, 1),
                "p99_ms": round(values[int(0.99 * (len(values) - 1))] * 1000, 1),
                "ticks": len(values)}
    out["gui_stalls_over_60ms"] = stalls[:12]
    for name in ("indexing", "scanning"):
        out[name] = {"gui_thread": stats(late.get(name)), "plain_thread": stats(bare.get(name))}
with loop:
    loop.run_until_complete(main())
w.shutdown()
print(json.dumps(out))
"""


def launch(mode: str, cap: int, extra: int, switch: str = "default") -> dict[str, Any]:
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-bench-gui-")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(t0), mode, str(ROOT), str(cap), switch, str(extra)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--mode", default="whole-vault", choices=["classic", "whole-vault"])
    parser.add_argument(
        "--cap", type=int, default=20, help="classic-mode note cap (20 = the app's default)"
    )
    parser.add_argument(
        "--extra-notes", type=int, default=300, help="notes added to the sample vault to index"
    )
    args = parser.parse_args()
    runs = [launch(args.mode, args.cap, args.extra_notes) for _ in range(args.launches)]

    def median(path: list[str]) -> float | None:
        values = []
        for r in runs:
            v: Any = r
            for key in path:
                v = v.get(key) if isinstance(v, dict) else None
            if isinstance(v, int | float):
                values.append(float(v))
        return round(statistics.median(values), 3) if values else None

    summary = {k: median([k]) for k in ("shown", "ready", "first_result", "indexing_seconds")}
    for phase in ("indexing", "scanning"):
        for who in ("gui_thread", "plain_thread"):
            summary[f"{phase}_{who}_max_ms"] = median([phase, who, "max_ms"])
            summary[f"{phase}_{who}_p99_ms"] = median([phase, who, "p99_ms"])
    print(
        json.dumps(
            {
                "launches": args.launches,
                "mode": args.mode,
                "cap": args.cap,
                "extra_notes": args.extra_notes,
                "median": summary,
                "runs": runs,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

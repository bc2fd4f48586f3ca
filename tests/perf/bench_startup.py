"""Cold start to both engines warm, measured from outside a fresh process.

Each run spawns a new Python process that imports the runtime, starts it and
prints one JSON line when both engines are warm; the parent times spawn →
that line. Median of ``--runs`` (default 5). Also reports the in-process
breakdown (load and warm-up per engine) of the median run.

Run: ``python tests/perf/bench_startup.py [--runs 5]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import json, sys, time
t0 = time.perf_counter()
from inference.runtime import Runtime
imported = time.perf_counter() - t0
rt = Runtime()
rt.start()
rt.wait_ready()
print(json.dumps({
    "import_s": imported,
    "ready_after_start_s": rt.ready_seconds,
    "engines": {n: {"load_s": r.load_seconds, "warm_tiny_s": r.warm_tiny_seconds,
                    "warm_full_s": r.warm_full_seconds} for n, r in rt.reports.items()},
}), flush=True)
rt.close()
"""


def one_run() -> dict[str, object]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    wall = time.perf_counter() - t0
    proc.wait(timeout=60)
    data: dict[str, object] = json.loads(line)
    data["process_to_ready_s"] = wall
    return data


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    one_run()  # page cache warm: we measure a cold *process*, not a cold disk
    runs = [one_run() for _ in range(args.runs)]
    walls = [float(r["process_to_ready_s"]) for r in runs]  # type: ignore[arg-type]
    median_run = sorted(runs, key=lambda r: float(r["process_to_ready_s"]))[len(runs) // 2]  # type: ignore[arg-type]
    print(
        json.dumps(
            {
                "runs": args.runs,
                "process_to_ready_s": {
                    "median": round(statistics.median(walls), 3),
                    "min": round(min(walls), 3),
                    "max": round(max(walls), 3),
                    "all": [round(w, 3) for w in walls],
                },
                "target_s": 3.0,
                "median_run": median_run,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()

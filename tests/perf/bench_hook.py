"""How long the hook client takes to fail open, against its budget (what tests/test_hook.py
no longer times: those tests flaked on a loaded machine).

A fresh interpreter per call, as the agent starts it (``python -S .../hook.py``, the
installed form), in each failure the tests check — no token, endpoint stopped, endpoint
too slow (default budget 300 ms, and ``--budget-ms 150``) — and, side by side at the same
moments, a call that asks nothing (the interpreter's start alone). Prints JSON: wall time
p50/p99/max per case, the budget, how many calls ended later than budget + 50 ms, and
the load average.

Run: ``python tests/perf/bench_hook.py [--runs 40]`` (under a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "hooks"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def run(prefix: list[str], args: list[str], payload: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([*prefix, *args], input=payload, capture_output=True, text=True)
    return (time.perf_counter() - t0) * 1000, proc.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=40)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="antinomy-bench-hook-"))
    os.environ["ANTINOMY_HOME"] = str(home)
    from desktop.service.hook import config_dir
    from desktop.service.hook_install import hook_executable
    from desktop.service.server import start_endpoint
    from inference.runtime import Runtime

    installed = hook_executable()
    contradicts = (DATA / "claude_bash_contradicts.json").read_text()
    short = (DATA / "claude_bash_short.json").read_text()
    token = "bench-token-" + "x" * 32
    handle = start_endpoint(runtime=Runtime(), port=0, token=token, publish=False, guard=False)
    release = threading.Event()

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        release.wait(30)
        return {}

    handle.register_route("/v1/guard/check", slow)
    port = str(handle.port)
    cases: dict[str, tuple[list[str], float, str, bool]] = {
        "no_token": (["pretooluse", "--port", "9"], 300, "no endpoint token", False),
        "endpoint_stopped": (["pretooluse", "--port", "9"], 300, "endpoint not running", True),
        "endpoint_slow": (["pretooluse", "--port", port], 300, "no answer within 300", True),
        "endpoint_slow_budget_150": (
            ["pretooluse", "--port", port, "--budget-ms", "150"],
            150,
            "no answer within 150",
            True,
        ),
    }
    token_file = Path(config_dir()) / "endpoint-token"
    result: dict[str, Any] = {"python": sys.version.split()[0], "load_start": os.getloadavg()[0]}
    try:
        for name, (hook_args, budget, expect, with_token) in cases.items():
            if with_token:
                token_file.parent.mkdir(parents=True, exist_ok=True)
                token_file.write_text(token + "\n")
            else:
                token_file.unlink(missing_ok=True)
            wall: list[float] = []
            alone: list[float] = []
            wrong = 0
            for _ in range(args.runs):
                ms, err = run(installed, hook_args, contradicts)
                wall.append(ms)
                wrong += expect not in err
                alone.append(run(installed, ["pretooluse"], short)[0])
            result[name] = {
                "budget_ms": budget,
                "wall_ms": {
                    "p50": pct(wall, 0.5),
                    "p99": pct(wall, 0.99),
                    "max": round(max(wall), 1),
                },
                "over_budget_plus_50_ms": sum(1 for w in wall if w > budget + 50),
                "start_alone_ms": {"p50": pct(alone, 0.5), "p99": pct(alone, 0.99)},
                "unexpected_message": wrong,
                "load": round(os.getloadavg()[0], 2),
            }
    finally:
        release.set()
        handle.stop()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()

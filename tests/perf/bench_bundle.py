"""Cold start of the bundle vs the venv, side by side in one run.

For each of ``--rounds`` rounds, alternately (bundle, venv): ``antinomy --version``
(process start and import of the CLI) and ``antinomy doctor --quick --json`` (all
three models loaded, verified and warmed; its own ``ready_s`` and the wall time
of the whole process). Each run gets a fresh ``ANTINOMY_HOME``, so the model-hash
cache is cold every time, as on first start. Prints one JSON object with the
medians and their ratios.

Run: ``python tests/perf/bench_bundle.py --bundle build/bundle/dist/antinomy [--rounds 3]``.
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


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{cmd} failed: {done.stderr[-2000:]}")
    return wall, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--bundle", type=Path, default=ROOT / "build" / "bundle" / "dist" / "antinomy"
    )
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    commands = {
        "bundle": [str(args.bundle / "antinomy")],
        "venv": [str(Path(sys.executable).parent / "antinomy")],
    }
    samples: dict[str, dict[str, list[float]]] = {
        name: {"version_s": [], "doctor_wall_s": [], "doctor_ready_s": []} for name in commands
    }
    with tempfile.TemporaryDirectory(prefix="bench-bundle-") as tmp:
        work = Path(tmp)
        for round_ in range(args.rounds):
            for name, cmd in commands.items():
                home = work / f"{name}-{round_}"
                env = {
                    "PATH": "/usr/bin:/bin",
                    "HOME": str(work),
                    "LANG": "C.UTF-8",
                    "ANTINOMY_HOME": str(home),
                    "OMP_WAIT_POLICY": "PASSIVE",
                }
                wall, _ = timed([*cmd, "--version"], env, work)
                samples[name]["version_s"].append(wall)
                wall, out = timed([*cmd, "doctor", "--quick", "--json"], env, work)
                samples[name]["doctor_wall_s"].append(wall)
                samples[name]["doctor_ready_s"].append(float(json.loads(out)["ready_s"]))
    medians = {
        name: {k: round(statistics.median(v), 3) for k, v in runs.items()}
        for name, runs in samples.items()
    }
    ratios = {k: round(medians["bundle"][k] / medians["venv"][k], 3) for k in medians["bundle"]}
    size = sum(
        p.stat().st_size for p in args.bundle.rglob("*") if p.is_file() and not p.is_symlink()
    )
    print(
        json.dumps(
            {
                "rounds": args.rounds,
                "bundle_size_mib": round(size / 2**20, 1),
                "median": medians,
                "ratio_bundle_over_venv": ratios,
                "samples": {
                    n: {k: [round(x, 3) for x in v] for k, v in r.items()}
                    for n, r in samples.items()
                },
                "loadavg": [round(x, 1) for x in os.getloadavg()],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

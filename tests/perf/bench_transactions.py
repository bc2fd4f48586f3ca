"""Transaction latency: 1-file and 50-file plans, with fsync (as shipped) and without.

Each run replaces N notes of ~2 KB (expected hashes taken from the files as they
are) and times ``apply_plan`` alone; ``inspect_plan`` is timed separately.
"no fsync" replaces ``os.fsync`` with a no-op for that run only — it is here to
show what durability costs, the engine always syncs. The two modes alternate
run by run, because this machine is noisy. Also measured: a 1-file apply with
1000 operations already in the history (apply must not slow down as history
grows) and the undo of a 50-file operation.

Prints one JSON object. Run: ``python tests/perf/bench_transactions.py``
(``--runs 20``; ``--dir DIR`` to measure on another filesystem — a tmpfs /tmp
makes fsync free and the comparison meaningless).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.vault.transactions import (
    Plan,
    Write,
    apply_plan,
    inspect_plan,
    undo_operation,
)

NOTE_BYTES = 2000
SIZES = (1, 50)


def _no_fsync(fd: object) -> None:
    pass


@contextmanager
def fsync_disabled(disabled: bool) -> Iterator[None]:
    real = os.fsync
    if disabled:
        os.fsync = _no_fsync
    try:
        yield
    finally:
        os.fsync = real


def make_vault(base: Path, name: str, notes: int) -> Path:
    root = base / name
    (root / "Notes").mkdir(parents=True)
    for i in range(notes):
        (root / "Notes" / f"note-{i:03}.md").write_text(body(i, 0))
    return root


def body(i: int, version: int) -> str:
    line = f"Note {i}, version {version}: a sentence of ordinary length for a note.\n"
    return "---\ntype: subject\n---\n" + line * (NOTE_BYTES // len(line))


def replace_plan(root: Path, n: int, version: int, op: str) -> Plan:
    writes = []
    for i in range(n):
        path = f"Notes/note-{i:03}.md"
        current = (root / path).read_bytes()
        writes.append(
            Write.replace(
                path, body(i, version), expected_sha256=hashlib.sha256(current).hexdigest()
            )
        )
    return Plan(op, "edit", f"Bench {n} files, version {version}", tuple(writes))


def timed(fn: Callable[..., object], *args: Any, **kwargs: Any) -> float:
    t0 = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - t0) * 1000


def stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "median_ms": round(statistics.median(ordered), 2),
        "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))], 2),
        "min_ms": round(ordered[0], 2),
    }


def filesystem(path: Path) -> str:
    best, kind = "", "unknown"
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return kind
    for line in mounts:
        _, point, fstype, *_ = line.split()
        if str(path).startswith(point) and len(point) > len(best):
            best, kind = point, fstype
    return kind


def bench_sizes(base: Path, runs: int) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for n in SIZES:
        root = make_vault(base, f"size{n}", max(SIZES))
        times: dict[str, list[float]] = {"fsync": [], "no_fsync": []}
        inspect_ms: list[float] = []
        version = 0
        for run in range(runs + 2):  # the first two warm the page cache
            for mode in ("fsync", "no_fsync"):
                version += 1
                plan = replace_plan(root, n, version, f"bench-{n}-{version}")
                t0 = time.perf_counter()
                approval = inspect_plan(root, plan).approval
                inspected = (time.perf_counter() - t0) * 1000
                with fsync_disabled(mode == "no_fsync"):
                    ms = timed(apply_plan, root, plan, approval=approval)
                if run >= 2:
                    times[mode].append(ms)
                    if mode == "fsync":
                        inspect_ms.append(inspected)
        on, off = stats(times["fsync"]), stats(times["no_fsync"])
        result[f"{n}_file"] = {
            "apply_fsync": on,
            "apply_no_fsync": off,
            "fsync_cost_ratio": round(on["median_ms"] / off["median_ms"], 2),
            "fsync_cost_ms": round(on["median_ms"] - off["median_ms"], 2),
            "apply_fsync_per_file_ms": round(on["median_ms"] / n, 2),
            "inspect": stats(inspect_ms),
        }
    return result


def bench_long_history(base: Path, runs: int) -> dict[str, Any]:
    """1-file apply on a vault whose journal already holds 1000 operations."""
    root = make_vault(base, "history", 1)
    fresh = make_vault(base, "fresh", 1)
    with fsync_disabled(True):  # building the history is not what is measured
        for k in range(1000):
            plan = replace_plan(root, 1, 10_000 + k, f"old-{k}")
            apply_plan(root, plan, approval=inspect_plan(root, plan).approval)
    times: dict[str, list[float]] = {"empty_history": [], "history_1000": []}
    for run in range(runs + 2):
        for name, vault in (("empty_history", fresh), ("history_1000", root)):
            plan = replace_plan(vault, 1, 20_000 + run, f"h-{run}")
            approval = inspect_plan(vault, plan).approval
            ms = timed(apply_plan, vault, plan, approval=approval)
            if run >= 2:
                times[name].append(ms)
    empty, long = stats(times["empty_history"]), stats(times["history_1000"])
    return {
        "apply_1_file_empty_history": empty,
        "apply_1_file_history_1000": long,
        "ratio": round(long["median_ms"] / empty["median_ms"], 2),
    }


def bench_undo(base: Path, runs: int) -> dict[str, Any]:
    root = make_vault(base, "undo", 50)
    ms = []
    for run in range(runs):
        plan = replace_plan(root, 50, 30_000 + run, f"u-{run}")
        apply_plan(root, plan, approval=inspect_plan(root, plan).approval)
        ms.append(timed(undo_operation, root, plan.operation_id))
    return {"undo_50_files": stats(ms)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--dir", help="where to make the test vaults (default: the temp folder)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="antinomy-tx-bench-", dir=args.dir)).resolve()
    try:
        report: dict[str, Any] = {
            "runs": args.runs,
            "note_bytes": NOTE_BYTES,
            "filesystem": filesystem(base),
            "cpus": os.cpu_count(),
        }
        report.update(bench_sizes(base, args.runs))
        report["history"] = bench_long_history(base, args.runs)
        report.update(bench_undo(base, args.runs))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

"""Two writers of one index, side by side: which connection setup lets the window's write
through after another writer's commit; prints JSON.

    python tests/perf/bench_index_writers.py [--rounds 20]

The window's read worker is in the middle of reading the notes (an open cursor), a second
process commits (``antinomy index`` in a shell), then the window's watcher writes. Each
setup runs the same scenario ``rounds`` times on raw SQLite connections to a WAL database:

* ``shared_connection`` — one connection for every thread, busy_timeout 5 s;
* ``shared_connection_busy_30s`` — the same with a 30 s busy_timeout: the wait does not
  apply to this refusal, so a longer one changes nothing;
* ``connection_per_thread`` — what the index does now: the watcher's write runs on its own
  connection, which holds no snapshot.

A fourth figure, ``wait_for_a_writer_ms``, is how long the per-thread write waits for a
writer that holds the lock for 200 ms (it waits, then succeeds).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path


def _connect(path: Path, busy_ms: int) -> sqlite3.Connection:
    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA busy_timeout = {busy_ms}")
    return conn


def _setup(folder: Path) -> Path:
    path = folder / "index.db"
    conn = _connect(path, 5000)
    conn.execute("CREATE TABLE notes (path TEXT PRIMARY KEY, body TEXT)")
    conn.executemany("INSERT INTO notes VALUES (?, ?)", [(f"n{i}.md", "x") for i in range(50)])
    conn.close()
    return path


def _one_round(path: Path, n: int, *, per_thread: bool, busy_ms: int) -> tuple[bool, float]:
    window = _connect(path, busy_ms)
    reading = window.execute("SELECT path FROM notes")  # the read worker, mid-read
    reading.fetchone()
    shell = _connect(path, busy_ms)
    shell.execute("BEGIN IMMEDIATE")
    shell.execute("UPDATE notes SET body = ? WHERE path = 'n1.md'", [f"shell {n}"])
    shell.execute("COMMIT")
    shell.close()
    writer = _connect(path, busy_ms) if per_thread else window
    t0 = time.perf_counter()
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("UPDATE notes SET body = ? WHERE path = 'n2.md'", [f"watcher {n}"])
        writer.execute("COMMIT")
        ok = True
    except sqlite3.OperationalError:
        ok = False
    seconds = time.perf_counter() - t0
    reading.fetchall()
    if writer is not window:
        writer.close()
    window.close()
    return ok, seconds


def _wait_for_writer(path: Path) -> float:
    holder = _connect(path, 5000)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Timer(0.2, lambda: holder.execute("COMMIT"))
    released.start()
    writer = _connect(path, 5000)
    t0 = time.perf_counter()
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("COMMIT")
    waited = time.perf_counter() - t0
    released.join()
    holder.close()
    writer.close()
    return waited


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    rounds = parser.parse_args().rounds
    out: dict[str, object] = {"rounds": rounds}
    with tempfile.TemporaryDirectory() as tmp:
        path = _setup(Path(tmp))
        for name, per_thread, busy_ms in (
            ("shared_connection", False, 5000),
            ("shared_connection_busy_30s", False, 30000),
            ("connection_per_thread", True, 5000),
        ):
            results = [
                _one_round(path, n, per_thread=per_thread, busy_ms=busy_ms) for n in range(rounds)
            ]
            out[name] = {
                "writes_that_failed": sum(not ok for ok, _ in results),
                "median_ms": round(statistics.median(s for _, s in results) * 1000, 3),
            }
        out["wait_for_a_writer_ms"] = round(_wait_for_writer(path) * 1000, 1)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

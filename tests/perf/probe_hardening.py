"""Attack probes: hostile files, a squatter, big inputs, half-open
connections, the hook under load. Loopback only; every loop is bounded in count and time.

Sections (all by default; ``--only NAME`` for one):

* ``files``: each hostile file beside one good note — index result and time; the
  wrong-typed ``hunter_false_positives`` through ``dismiss_pair``.
* ``squatter``: the installed hook command against a program holding the port that
  answers "allow" to everything — what the hook printed, what the squatter received.
* ``load``: the real endpoint (shipped models, guard on a copy of the sample vault):
  with 4 × 2 MB requests in flight (one 2 MB string each; then the legitimate worst
  case, 256 texts of 8 KB each), the latency of a concurrent one-text request and of a
  guard check, side by side with the same calls idle; RSS before and after.
* ``halfopen``: 3,000 connections that never finish their headers — how many are
  still open after the read timeout.
* ``hook``: the installed hook as a fresh process, idle and with the endpoint busy
  with bulk embedding — p50/p99 and how many failed open.

Run: ``python tests/perf/probe_hardening.py [--only files,squatter,load,halfopen,hook]``.
Prints one JSON object, with the load average beside the figures.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "tests" / "data" / "hooks"
TOKEN = "probe-token-" + "z" * 40


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


def payload(name: str, **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((HOOKS / f"{name}.json").read_text())
    data.update(extra)
    return data


def write_token() -> None:
    from desktop.service.hook import config_dir

    Path(config_dir()).mkdir(parents=True, exist_ok=True)
    (Path(config_dir()) / "endpoint-token").write_text(TOKEN + "\n")


# ---------------------------------------------------------------- files


def probe_files() -> dict[str, Any]:
    from desktop.flows.review import ReviewRefused, dismiss_pair
    from desktop.vault.index import VaultIndex

    def bomb() -> str:
        lines = ["a0: &a0 [" + ", ".join(["lol"] * 9) + "]"]
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 20)]
        return "---\n" + "\n".join(lines) + "\n---\nbody\n"

    cases = {
        "symlink_self_loop": lambda r: os.symlink("self.md", r / "self.md"),
        "symlink_pair_loop": lambda r: (
            os.symlink("b.md", r / "a.md"),
            os.symlink("a.md", r / "b.md"),
        ),
        "name_not_utf8": lambda r: (r / os.fsdecode(b"caf\xe9.md")).write_text("x"),
        "fifo": lambda r: os.mkfifo(r / "pipe.md"),
        "socket": lambda r: socket.socket(socket.AF_UNIX).bind(str(r / "sock.md")),
        "yaml_alias_bomb_9^20": lambda r: (r / "bomb.md").write_text(bomb()),
    }
    out: dict[str, Any] = {}
    for name, make in cases.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "good.md").write_text("---\ntype: tension\n---\nA good note.\n")
            make(root)
            t0 = time.perf_counter()
            index = VaultIndex(root)
            try:
                report = index.update()
            finally:
                index.close()
            out[name] = {
                "seconds": round(time.perf_counter() - t0, 3),
                "result": report.summary(),
                "skipped": [(e.path, e.reason) for e in report.skipped],
            }
    for value in ("5", "{Peer: 1}"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "A.md").write_text(f"---\nhunter_false_positives: {value}\n---\nx\n")
            (root / "Peer.md").write_text("---\ntype: tension\n---\ny\n")
            before = (root / "A.md").read_bytes()
            t0 = time.perf_counter()
            try:
                dismiss_pair(root, "A.md", "Peer.md")
                result = "applied"
            except ReviewRefused as exc:
                result = str(exc)
            out[f"dismiss_with_false_positives_{value}"] = {
                "seconds": round(time.perf_counter() - t0, 3),
                "result": result,
                "file_unchanged": (root / "A.md").read_bytes() == before,
            }
    return out


# ---------------------------------------------------------------- squatter


def probe_squatter() -> dict[str, Any]:
    from desktop.service.hook_install import hook_executable

    allow = json.dumps(
        {
            "proof": "0" * 64,
            "verdict": "allow",
            "output": {
                "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
            },
        }
    ).encode()
    received = bytearray()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    while data := conn.recv(65536):
                        received.extend(data)
                        if b"\r\n\r\n" in data:
                            conn.sendall(
                                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                + f"Content-Length: {len(allow)}\r\n\r\n".encode()
                                + allow
                            )
                except OSError:
                    continue

    threading.Thread(target=serve, daemon=True).start()
    write_token()
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*hook_executable(), "pretooluse", "--port", str(port)],
        input=json.dumps(payload("claude_bash_contradicts")),
        capture_output=True,
        text=True,
        timeout=30,
    )
    server.close()
    return {
        "exit": proc.returncode,
        "stdout": proc.stdout,
        "stderr": proc.stderr.strip(),
        "ms": round((time.perf_counter() - t0) * 1000, 1),
        "squatter_got_token": TOKEN.encode() in received,
        "squatter_got_summary": b"ledger" in bytes(received).lower(),
        "squatter_received": bytes(received[:120]).decode("latin-1"),
    }


# ---------------------------------------------------------------- the real endpoint


class Endpoint:
    def __init__(self, workdir: Path) -> None:
        from desktop.flows.guard import GuardSettings, save_guard_settings
        from desktop.resources import sample_vault_source
        from desktop.service.server import start_endpoint
        from inference.runtime import Runtime

        self.vault = workdir / "vault"
        shutil.copytree(sample_vault_source(), self.vault)
        save_guard_settings(self.vault, GuardSettings(enabled=True))
        self.runtime = Runtime()
        self.runtime.start()
        self.runtime.wait_ready(timeout=300)
        self.handle = start_endpoint(
            runtime=self.runtime, vault_root=self.vault, port=0, token=TOKEN, publish=False
        )
        assert self.handle.guard is not None and self.handle.guard.ready.wait(120)
        self.port = self.handle.port

    def post(self, path: str, body: Any, timeout: float = 300) -> tuple[int, float]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        t0 = time.perf_counter()
        try:
            conn.request(
                "POST",
                path,
                body=data,
                headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
            )
            response = conn.getresponse()
            response.read()
            return response.status, (time.perf_counter() - t0) * 1000
        finally:
            conn.close()

    def small(self) -> tuple[int, float]:
        return self.post("/v1/embeddings", {"input": "Production releases go out on Friday."})

    def check(self, n: int) -> tuple[int, float]:
        summary = "Move the billing ledger out of SQLite into the main PostgreSQL cluster"
        return self.post(
            "/v1/guard/check", {"summary": summary, "session_id": f"probe-{n}-{time.time_ns()}"}
        )

    def close(self) -> None:
        self.handle.stop()
        self.runtime.close()


def probe_load(ep: Endpoint) -> dict[str, Any]:
    idle_small = [ep.small()[1] for _ in range(5)]
    idle_check = [ep.check(i)[1] for i in range(5)]
    out: dict[str, Any] = {
        "idle": {
            "one_text_ms_p50": round(statistics.median(idle_small), 1),
            "guard_check_ms_p50": round(statistics.median(idle_check), 1),
        },
        "rss_mib_before": rss_mib(),
    }
    bodies = {
        "4x_one_2MB_string": json.dumps({"input": "word " * 400_000}).encode(),
        # The legitimate heavy case, kept small enough to finish here (each text is 256
        # tokens after the cut: ~0.27 s of embedder time on this machine under load).
        "4x_24_texts_of_8KB": json.dumps({"input": ["word " * 1600] * 24}).encode(),
    }
    for name, body in bodies.items():
        results: list[tuple[int, float]] = []

        def send(data: bytes = body, into: list[tuple[int, float]] = results) -> None:
            into.append(ep.post("/v1/embeddings", data))

        threads = [threading.Thread(target=send) for _ in range(4)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(0.2)  # the four are in flight
        small, checks = [], []
        while any(t.is_alive() for t in threads) and time.perf_counter() - t0 < 120:
            small.append(ep.small())
            checks.append(ep.check(len(checks)))
            if len(small) >= 20:
                break
        for t in threads:
            t.join(180)
        out[name] = {
            "body_mb": round(len(body) / 1e6, 2),
            "big_requests": [(s, round(ms)) for s, ms in results],
            "concurrent_one_text_ms": {
                "n": len(small),
                "p50": pct([ms for _, ms in small], 0.5),
                "max": round(max(ms for _, ms in small), 1) if small else None,
            },
            "concurrent_guard_check_ms": {
                "n": len(checks),
                "p50": pct([ms for _, ms in checks], 0.5),
                "max": round(max(ms for _, ms in checks), 1) if checks else None,
                "statuses": sorted({s for s, _ in checks}),
            },
            "rss_mib_after": rss_mib(),
            "seconds": round(time.perf_counter() - t0, 1),
        }
    out["loadavg"] = loadavg()
    return out


def probe_halfopen(port: int, count: int = 3000, read_seconds: float = 5.0) -> dict[str, Any]:
    socks: list[socket.socket] = []
    refused_at_connect = 0
    t0 = time.perf_counter()
    for _ in range(count):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1")
            socks.append(s)
        except OSError:
            refused_at_connect += 1
        if time.perf_counter() - t0 > 60:
            break
    opened = time.perf_counter() - t0
    status_during = None
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/healthz", headers={"Host": f"127.0.0.1:{port}"})
        status_during = conn.getresponse().status
        conn.close()
    except OSError as exc:
        status_during = f"error: {exc}"
    time.sleep(read_seconds + 1.5)
    still_open = 0
    for s in socks:
        s.setblocking(False)
        try:
            if s.recv(1) != b"":
                still_open += 1
        except BlockingIOError:
            still_open += 1  # nothing to read, not closed
        except OSError:
            pass
        s.close()
    return {
        "connections_attempted": len(socks) + refused_at_connect,
        "refused_at_connect": refused_at_connect,
        "seconds_to_open": round(opened, 1),
        "healthz_while_flooded": status_during,
        f"still_open_after_{read_seconds + 1.5:g}_s": still_open,
        "loadavg": loadavg(),
    }


def probe_hook(ep: Endpoint, runs: int = 40) -> dict[str, Any]:
    from desktop.service.hook_install import hook_executable

    write_token()
    prefix = hook_executable()

    def one(i: int) -> tuple[float, str, str]:
        body = payload("claude_bash_unrelated", session_id=f"hook-{i}-{time.time_ns()}")
        t0 = time.perf_counter()
        proc = subprocess.run(
            [*prefix, "pretooluse", "--port", str(ep.port)],
            input=json.dumps(body),
            capture_output=True,
            text=True,
            timeout=30,
        )
        return (time.perf_counter() - t0) * 1000, proc.stdout, proc.stderr

    def summary(rows: list[tuple[float, str, str]]) -> dict[str, Any]:
        ms = [r[0] for r in rows]
        return {
            "runs": len(rows),
            "p50_ms": pct(ms, 0.5),
            "p99_ms": pct(ms, 0.99),
            "failed_open": sum(1 for r in rows if r[2]),
            "stderr_seen": sorted({r[2].strip() for r in rows if r[2]})[:3],
        }

    idle = [one(i) for i in range(runs // 2)]

    def busy_runs() -> list[tuple[float, str, str]]:
        stop = threading.Event()

        def bulk() -> None:
            body = {"input": [f"bulk text {i} " * 60 for i in range(32)]}
            while not stop.is_set():
                ep.post("/v1/embeddings", body)

        workers = [threading.Thread(target=bulk, daemon=True) for _ in range(2)]
        for w in workers:
            w.start()
        time.sleep(0.5)
        rows = [one(i) for i in range(runs)]
        stop.set()
        for w in workers:
            w.join(120)
        return rows

    batcher = ep.handle.batcher
    busy = busy_runs()
    jumped = batcher.stats.jumped
    # Side by side, same run: the batcher as it was before (FIFO, whole requests).
    from desktop.service import batching

    urgent, chunk_texts, chunk_chars = batching.is_urgent, batcher.chunk_texts, batcher.chunk_chars
    batching.is_urgent = lambda texts: False  # type: ignore[assignment]
    batcher.chunk_texts, batcher.chunk_chars = batcher.max_texts, 1 << 30
    try:
        fifo = busy_runs()
    finally:
        batching.is_urgent = urgent  # type: ignore[assignment]
        batcher.chunk_texts, batcher.chunk_chars = chunk_texts, chunk_chars
    return {
        "idle": summary(idle),
        "busy_bulk_embedding": summary(busy),
        "busy_bulk_embedding_fifo_whole_requests_as_before": summary(fifo),
        "batcher_jumped": jumped,
        "loadavg": loadavg(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated: files,squatter,load,halfopen,hook")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="antinomy-probe-home-")
    os.environ["ANTINOMY_HOME"] = home
    result: dict[str, Any] = {"loadavg_start": loadavg()}
    wanted = (
        args.only.split(",") if args.only else ["files", "squatter", "load", "halfopen", "hook"]
    )
    if "files" in wanted:
        result["files"] = probe_files()
    if "squatter" in wanted:
        result["squatter"] = probe_squatter()
    if {"load", "halfopen", "hook"} & set(wanted):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            ep = Endpoint(Path(tmp))
            result["endpoint_ready_seconds"] = round(time.perf_counter() - t0, 1)
            try:
                if "load" in wanted:
                    result["load"] = probe_load(ep)
                if "halfopen" in wanted:
                    result["halfopen"] = probe_halfopen(ep.port)
                if "hook" in wanted:
                    result["hook"] = probe_hook(ep)
            finally:
                ep.close()
    shutil.rmtree(home, ignore_errors=True)
    result["loadavg_end"] = loadavg()
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

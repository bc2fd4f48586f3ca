"""A local process without the token floods the endpoint: does the guard still answer?

The flood (a separate process, as an attacker would be:
``tests.service_util.PipeliningFlood``) holds ``--connections`` connections (256 by
default) and on each pipelines ``GET /healthz`` — an open route — as fast as the socket
takes them, never reading an answer; a connection the server closes is opened again at
once. After ``--settle`` seconds (past the 5 s read deadline, so the server has closed
the first wave and the flood has come back) and while it lasts, with the real endpoint
(shipped models, guard on a copy of the sample vault):

* the installed hook client, a fresh process with its default 300 ms budget, runs the
  recorded tool calls that go against a decision — how many warn (the rest failed open);
* one-text ``/v1/embeddings`` from an authenticated client, a fresh connection each —
  p50/p99 and failures;
* the server thread's CPU share, the responses it wrote per second, the connections held.

The same measurements without the flood come first, in the same run.

Run: ``python tests/perf/bench_flood.py [--connections 256] [--embeds 40]``. Prints JSON.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.service_util import PipeliningFlood

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ROOT / "tests" / "data" / "hooks"
TOKEN = "flood-token-" + "f" * 40
#: Recorded tool calls that go against a standing decision of the sample vault.
AGAINST = [
    "claude_bash_contradicts",
    "claude_edit_against_release_window",
    "claude_write_against_release_window",
    "claude_write_against_ci_runners",
    "claude_multiedit_against_oncall",
    "codex_apply_patch_against_release_window",
]


def loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


# ---------------------------------------------------------------- measurements


class Endpoint:
    def __init__(self, workdir: Path) -> None:
        from desktop.flows.guard import GuardSettings, save_guard_settings
        from desktop.resources import sample_vault_source
        from desktop.service.server import start_endpoint
        from inference.runtime import Runtime

        vault = workdir / "vault"
        shutil.copytree(sample_vault_source(), vault)
        save_guard_settings(vault, GuardSettings(enabled=True))
        self.runtime = Runtime()
        self.runtime.start()
        self.runtime.wait_ready(timeout=300)
        self.handle = start_endpoint(
            runtime=self.runtime, vault_root=vault, port=0, token=TOKEN, publish=False
        )
        assert self.handle.guard is not None and self.handle.guard.ready.wait(120)
        self.port = self.handle.port
        self.thread = next(t for t in threading.enumerate() if t.name == "antinomy-endpoint")

    def server_cpu_seconds(self) -> float:
        with open(f"/proc/self/task/{self.thread.native_id}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def responses(self) -> int:
        return int(self.handle._server.server_state.total_requests)

    def close(self) -> None:
        self.handle.stop()
        self.runtime.close()


def embed_once(port: int) -> tuple[int, float]:
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST",
            "/v1/embeddings",
            body=json.dumps({"input": "Production releases go out on Friday."}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        response = conn.getresponse()
        response.read()
        status = response.status
    except OSError:
        status = 0
    finally:
        conn.close()
    return status, (time.perf_counter() - t0) * 1000


def hook_once(port: int, name: str, n: int) -> tuple[bool, str, float]:
    from desktop.service.hook_install import hook_executable

    body = json.loads((HOOKS / f"{name}.json").read_text())
    body["session_id"] = f"flood-{n}-{time.time_ns()}"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*hook_executable(), "pretooluse", "--port", str(port)],
        input=json.dumps(body),
        capture_output=True,
        text=True,
        timeout=30,
    )
    ms = (time.perf_counter() - t0) * 1000
    return "additionalContext" in proc.stdout, proc.stderr.strip(), ms


def measure(ep: Endpoint, embeds: int, round_no: int) -> dict[str, Any]:
    cpu0, resp0, t0 = ep.server_cpu_seconds(), ep.responses(), time.perf_counter()
    hooks = [hook_once(ep.port, name, round_no * 100 + i) for i, name in enumerate(AGAINST)]
    runs = [embed_once(ep.port) for _ in range(embeds)]
    elapsed = time.perf_counter() - t0
    ok = [ms for status, ms in runs if status == 200]
    return {
        "hook_warned": f"{sum(w for w, _, _ in hooks)} of {len(hooks)}",
        "hook_ms": [round(ms) for _, _, ms in hooks],
        "hook_stderr": sorted({err for _, err, _ in hooks if err})[:3],
        "embed_ok": f"{len(ok)} of {len(runs)}",
        "embed_p50_ms": pct(ok, 0.5),
        "embed_p99_ms": pct(ok, 0.99),
        "server_thread_cpu_pct": round(100 * (ep.server_cpu_seconds() - cpu0) / elapsed),
        "responses_per_s": round((ep.responses() - resp0) / elapsed),
        "connections_open": ep.handle.connections.open_count,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=256)
    parser.add_argument("--settle", type=float, default=6.0, help="flood time before measuring")
    parser.add_argument("--embeds", type=int, default=40)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="antinomy-flood-home-")
    os.environ["ANTINOMY_HOME"] = home
    from desktop.service.hook import config_dir

    Path(config_dir()).mkdir(parents=True, exist_ok=True)
    (Path(config_dir()) / "endpoint-token").write_text(TOKEN + "\n")
    result: dict[str, Any] = {"loadavg_start": loadavg(), "connections": args.connections}
    with tempfile.TemporaryDirectory() as tmp:
        ep = Endpoint(Path(tmp))
        try:
            hook_once(ep.port, AGAINST[0], 0)  # warm the judge and the page cache
            result["idle"] = measure(ep, args.embeds, 1)
            with PipeliningFlood(ep.port, args.connections) as flood:
                time.sleep(args.settle)  # past the read deadline: the flood reconnects
                result["flood"] = measure(ep, args.embeds, 2)
            result["flood"]["flooder"] = flood.report
            time.sleep(1.0)
            result["after"] = measure(ep, args.embeds // 4, 3)
        finally:
            ep.close()
    shutil.rmtree(home, ignore_errors=True)
    result["loadavg_end"] = loadavg()
    print(json.dumps(result, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()

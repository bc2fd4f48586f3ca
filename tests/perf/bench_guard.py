"""The guard end to end: a fresh hook process per tool call, against the warm endpoint.

For vaults with 1k and 10k synthetic decision notes (plus the sample vault's
own): 200 runs of the hook client as the agent starts it (a new interpreter
running the client as ``antinomy hooks install`` writes it, ``python -S
.../hook.py``; PreToolUse JSON on stdin; exit) — wall time p50/p99 including
interpreter start-up — and the server-side check time p50/p99 from the guard
log. Side by side, in the same run: the same check done the cold way (a fresh
process that loads the embedder, embeds the summary once and scores the
decisions), and a hook process that asks nothing (start-up alone), both as
installed and through the ``antinomy-hook`` console script. Prints JSON.

Run: ``python tests/perf/bench_guard.py [--runs 200] [--sizes 1000 10000]``.
The 10k vault embeds 10k decision statements once (a minute or two here).
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from desktop.flows.guard import GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service.hook import config_dir, summarize
from desktop.service.hook_install import hook_executable
from desktop.service.server import start_endpoint
from inference.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]
SUBJECTS = [
    ("the billing service", "its ledger", "SQLite on its own host"),
    ("the search team", "the query cache", "Redis with a one-hour expiry"),
    ("the mobile app", "release builds", "the hosted build farm"),
    ("the data platform", "nightly exports", "Parquet files in object storage"),
    ("the web frontend", "state management", "plain React context, no Redux"),
    ("the payments API", "idempotency keys", "a column in the payments table"),
    ("the support desk", "ticket routing", "a round-robin rule per region"),
    ("the infrastructure team", "secrets", "the cloud provider's secret manager"),
    ("the reporting service", "dashboards", "Grafana on the shared cluster"),
    ("the onboarding flow", "email verification", "a six-digit code valid ten minutes"),
]
VERBS = ["keeps", "stores", "runs", "manages", "handles"]

HOOK_SCRIPT = textwrap.dedent(
    """\
    import sys
    from desktop.service.hook import main
    if __name__ == '__main__':
        sys.exit(main())
    """
)

COLD = textwrap.dedent(
    """\
    import sys, numpy as np
    from desktop.flows.embedding import load_embedding_model
    data = np.load(sys.argv[1])
    model = load_embedding_model()
    vector = model.embed([sys.argv[2]])[0]
    scores = data["vectors"] @ vector
    print(float(scores.max()))
    """
)


def make_vault(parent: Path, n: int) -> Path:
    root = parent / f"vault-{n}"
    if (root / "Decisions" / "Synthetic").is_dir():  # --workdir: reuse (and its vector cache)
        return root
    shutil.copytree(sample_vault_source(), root)
    folder = root / "Decisions" / "Synthetic"
    folder.mkdir(parents=True)
    rng = random.Random(n)
    for i in range(n):
        team, thing, how = rng.choice(SUBJECTS)
        verb = rng.choice(VERBS)
        ident = f"ADR-{1000 + i}"
        title = f"{thing.capitalize()} for {team} #{i}"
        (folder / f"{ident}.md").write_text(
            f"---\nkind: decision\nid: {ident}\ntitle: {title}\nstatus: accepted\n---\n"
            f"# {ident} {title}\n\n## Context\n\nDecision record {i}, for the benchmark.\n\n"
            f"## Decision\n\n{team.capitalize()} {verb} {thing} in {how} (variant {i % 97}).\n\n"
            "## Consequences\n\n- One more thing to maintain.\n",
            encoding="utf-8",
        )
    save_guard_settings(root, GuardSettings(enabled=True))
    return root


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def payloads() -> list[dict[str, Any]]:
    data = ROOT / "tests" / "data" / "hooks"
    names = ["claude_bash_contradicts", "claude_bash_unrelated", "claude_write", "claude_edit"]
    return [json.loads((data / f"{n}.json").read_text()) for n in names]


def run_hook(prefix: list[str], port: int, payload: dict[str, Any]) -> tuple[float, str, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*prefix, "pretooluse", "--port", str(port)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return (time.perf_counter() - t0) * 1000, proc.stdout, proc.stderr


def bench_size(runtime: Runtime, parent: Path, n: int, runs: int, script: Path) -> dict[str, Any]:
    installed = hook_executable()  # what `antinomy hooks install` writes: python -S hook.py
    console = [sys.executable, str(script)]  # the antinomy-hook console script's way
    t0 = time.perf_counter()
    root = make_vault(parent, n)
    handle = start_endpoint(runtime=runtime, vault_root=root, port=0)
    try:
        assert handle.guard is not None
        if not handle.guard.ready.wait(3600):
            raise SystemExit(f"guard not ready: {handle.guard.error}")
        build = time.perf_counter() - t0
        decisions = len(handle.guard.guard.decisions.decisions) if handle.guard.guard else 0
        samples = payloads()
        wall: list[float] = []
        startup: list[float] = []
        startup_console: list[float] = []
        failed_open = 0
        warned = 0
        short = dict(samples[0], tool_input={"command": "ls"})
        first_log = len(handle.guard_log.records())
        for i in range(runs):
            payload = dict(samples[i % len(samples)], session_id=f"bench-{n}-{i}")
            ms, out, err = run_hook(installed, handle.port, payload)
            wall.append(ms)
            failed_open += bool(err)
            warned += bool(out)
            if i % 4 == 0:  # interleaved: start-up alone, both ways, at the same moment
                startup.append(run_hook(installed, handle.port, short)[0])
                startup_console.append(run_hook(console, handle.port, short)[0])
        server = [r.latency_ms for r in handle.guard_log.records()[first_log:]]
        # The same checks from one keep-alive client in this process (no process spawns
        # competing for the CPU): server-side time and the round trip.
        first_direct = len(handle.guard_log.records())
        conn = http.client.HTTPConnection("127.0.0.1", handle.port)
        token = (Path(config_dir()) / "endpoint-token").read_text().strip()
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
        round_trip: list[float] = []
        for i in range(runs):
            sample = samples[i % len(samples)]
            body = {
                "summary": summarize(sample["tool_name"], sample["tool_input"], sample["cwd"]),
                "session_id": f"direct-{n}-{i}",
                "tool_name": sample["tool_name"],
            }
            t = time.perf_counter()
            conn.request("POST", "/v1/guard/check", body=json.dumps(body), headers=headers)
            conn.getresponse().read()
            round_trip.append((time.perf_counter() - t) * 1000)
        conn.close()
        direct = [r.latency_ms for r in handle.guard_log.records()[first_direct:]]
        # The embedding alone, in this process, at the same moment: the check's floor.
        embed_alone: list[float] = []
        for i in range(runs // 2):
            sample = samples[i % len(samples)]
            text = summarize(sample["tool_name"], sample["tool_input"], sample["cwd"])
            t = time.perf_counter()
            runtime.submit_embed([text]).result()
            embed_alone.append((time.perf_counter() - t) * 1000)
        # What the background refresh costs each cycle when nothing changed.
        guard = handle.guard.guard
        assert guard is not None
        cycle: list[float] = []
        for _ in range(5):
            t = time.perf_counter()
            guard.index.update()
            guard.refresh()
            cycle.append((time.perf_counter() - t) * 1000)
        summary = "Move the billing ledger out of SQLite into the main PostgreSQL cluster"
        cache = root / ".antinomy" / "guard" / "vectors.npz"
        cold: list[float] = []
        for _ in range(5):
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", COLD, str(cache), summary],
                check=True,
                capture_output=True,
                cwd=ROOT,
            )
            cold.append((time.perf_counter() - t) * 1000)
        hot_p50 = pct(wall, 0.5)
        return {
            "decision_notes": decisions,
            "setup_seconds": round(build, 1),
            "hook_process_ms": {"p50": hot_p50, "p99": pct(wall, 0.99), "max": round(max(wall), 1)},
            "hook_that_asks_nothing_ms": {"p50": pct(startup, 0.5), "p99": pct(startup, 0.99)},
            "same_via_console_script_ms": {
                "p50": pct(startup_console, 0.5),
                "p99": pct(startup_console, 0.99),
            },
            "server_check_ms": {"p50": pct(server, 0.5), "p99": pct(server, 0.99)},
            "server_check_ms_one_client": {"p50": pct(direct, 0.5), "p99": pct(direct, 0.99)},
            "embed_alone_in_process_ms": {
                "p50": pct(embed_alone, 0.5),
                "p99": pct(embed_alone, 0.99),
            },
            "check_round_trip_ms_one_client": {
                "p50": pct(round_trip, 0.5),
                "p99": pct(round_trip, 0.99),
            },
            "refresh_cycle_unchanged_ms": round(statistics.median(cycle), 1),
            "runs": runs,
            "warned": warned,
            "failed_open": failed_open,
            "cold_process_ms": {"p50": round(statistics.median(cold), 1), "runs": len(cold)},
            "cold_over_hot_p50": round(statistics.median(cold) / hot_p50, 1),
        }
    finally:
        handle.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--workdir", help="keep the vaults here and reuse them (and their cache)")
    args = parser.parse_args()
    keep = args.workdir is not None
    tmp = Path(args.workdir) if keep else Path(tempfile.mkdtemp(prefix="antinomy-bench-guard-"))
    tmp.mkdir(parents=True, exist_ok=True)
    import os

    os.environ["ANTINOMY_HOME"] = str(tmp / "home")
    try:
        script = tmp / "antinomy-hook"
        script.write_text(HOOK_SCRIPT)
        runtime = Runtime()
        runtime.start()
        runtime.wait_ready()
        Path(config_dir()).mkdir(parents=True, exist_ok=True)
        report: dict[str, Any] = {"python": sys.version.split()[0], "sizes": {}}
        for n in args.sizes:
            report["sizes"][str(n)] = bench_size(runtime, tmp, n, args.runs, script)
            print(json.dumps({str(n): report["sizes"][str(n)]}), file=sys.stderr)
        runtime.close()
        print(json.dumps(report, indent=1))
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

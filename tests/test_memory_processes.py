"""Real child processes: the consolidation lock, and crashes in the middle of a write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from desktop.flows.memory import consolidate, pending_batches
from desktop.vault.transactions import list_history, recover_vault
from tests.memory_helpers import RoutingGenerator, page_fact_lines, route

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, signal, sys, time
from pathlib import Path
from desktop.flows.memory import consolidate
from desktop.vault.transactions import faults
from tests.memory_helpers import RoutingGenerator

mode, vault, step, routes = sys.argv[1:5]

class Holding(RoutingGenerator):
    def complete(self, messages, **kw):
        Path(vault, "holding").write_text(str(os.getpid()))
        while not Path(vault, "release").exists():
            time.sleep(0.01)
        return super().complete(messages, **kw)

if mode == "kill":
    def hook(name):
        if name == step:
            os.kill(os.getpid(), signal.SIGKILL)
    faults.set_hook(hook)
gen = (Holding if mode == "hold" else RoutingGenerator)(routes=json.loads(routes))
started = time.perf_counter()
report = consolidate(vault, gen)
print(json.dumps({"status": report.status, "seconds": time.perf_counter() - started}))
"""

#: The Helios line gets a subject no word of it supports: a rejected fragment.
ROUTES = {
    "Lisbon": route("new", new_subject="Lisbon trip"),
    "window": route("Flights"),
    "sold": route("new", new_subject="it"),
}
ANSWER = json.dumps(ROUTES)


def _no_name_for_helios(vault: Path) -> None:
    # "The Helios report is due next Friday." would fall back to the offered "Helios";
    # a statement with no name in it is rejected instead.
    from desktop.flows.memory import capture_turn, close_open_batch
    from tests.memory_helpers import T0

    for role, text in [
        ("user", "We decided to fly to Lisbon on 12 December with Ana."),
        ("assistant", "Great, Lisbon on December 12 it is. I suggest a hotel in Alfama."),
        ("user", "I prefer window seats on long flights."),
        ("user", "we sold four for cash"),
    ]:
        capture_turn(vault, role=role, text=text, session_id="s1", ts=T0)
    close_open_batch(vault)


def _child(*args: str) -> subprocess.Popen[str]:
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_second_consolidation_reports_already_running_at_once(tmp_path: Path) -> None:
    _no_name_for_helios(tmp_path)
    holder = _child("hold", str(tmp_path), "", ANSWER)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "holding").exists():
            assert holder.poll() is None, holder.stderr.read() if holder.stderr else ""
            assert time.monotonic() < deadline
            time.sleep(0.02)
        second = _child("run", str(tmp_path), "", "{}")
        out, err = second.communicate(timeout=60)
        result = json.loads(out)
        assert result["status"] == "already_running", err
        assert result["seconds"] < 1.0
        # In-process too: the lock is per vault, across processes and threads.
        assert consolidate(tmp_path, RoutingGenerator()).status == "already_running"
    finally:
        (tmp_path / "release").write_text("go")
        out, err = holder.communicate(timeout=60)
    assert json.loads(out)["status"] == "ok", err
    assert len(page_fact_lines(tmp_path)) == 2


def _steps() -> list[str]:
    # Steps of the transaction engine's apply: before the journal, between file
    # renames, after verification, after the completion mark.
    return ["checked", "journal-pending", "file:0:done", "file:1:done", "verified", "complete"]


@pytest.mark.parametrize("step", _steps())
def test_crash_mid_consolidation_then_rerun_consolidates_once(tmp_path: Path, step: str) -> None:
    _no_name_for_helios(tmp_path)
    child = _child("kill", str(tmp_path), step, ANSWER)
    out, err = child.communicate(timeout=120)
    assert child.returncode == -9, (out, err)
    recover_vault(tmp_path)
    rerun = consolidate(tmp_path, RoutingGenerator(routes=dict(ROUTES)))
    facts = page_fact_lines(tmp_path)
    assert len(facts) == 2, facts
    assert sum("fly to Lisbon" in f for f in facts) == 1
    assert sum("window seats" in f for f in facts) == 1
    if step == "complete":
        # The transaction had completed: its input was consumed with it.
        assert rerun.status == "nothing"
    else:
        assert rerun.status == "ok" and len(rerun.accepted) == 2
    assert pending_batches(tmp_path) == []
    assert consolidate(tmp_path, RoutingGenerator()).status == "nothing"
    memory_ops = [h for h in list_history(tmp_path) if h.operation_type == "memory"]
    assert len(memory_ops) == 1  # history lists completed operations only
    # The rejected fragment is listed once, whichever run recorded it.
    lines = (tmp_path / ".antinomy/memory/rejected.jsonl").read_text().splitlines()
    assert len({json.loads(line)["fragment_id"] for line in lines}) == 1

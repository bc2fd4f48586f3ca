"""Crash injection and concurrent writers, in real child processes.

A child applies a 5-file plan (2 replaces, 1 delete, 2 creates, one of them in
two new folders) and SIGKILLs itself at one named step (``faults.checkpoint``).
The step names are not hard-coded: a first child records every step of a full
apply, and each is then tried. After ``recover`` every file must be as before
(or, past the completion mark, as planned — never a mix) and no temp file may
remain. Recovery itself is then killed at each of its own steps and run again.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from desktop.vault.errors import VaultBusy, VaultChanged
from desktop.vault.layout import approval_identity
from desktop.vault.transactions import (
    Plan,
    Write,
    apply_plan,
    approval_hash,
    inspect_plan,
    list_history,
    plan_to_json,
    recover_vault,
)
from tests.vault_files import leftovers, snapshot

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, signal, sys, time, traceback
from pathlib import Path
from desktop.vault.transactions import apply_plan, faults, read_plan_file, recover_vault

def run(mode, vault, plan_file, approval, step, out):
    def hook(name):
        if mode.startswith("record"):
            out.write(name + "\n")
            out.flush()
        elif mode == "hold" and name == step:
            Path(vault, "holding").write_text(str(os.getpid()))
            while not Path(vault, "release").exists():
                time.sleep(0.01)
        elif mode == "sleep" and name == step:
            time.sleep(1.5)
        elif name == step:
            os.kill(os.getpid(), signal.SIGKILL)

    faults.set_hook(hook)
    if mode in ("record-recover", "kill-recover"):
        recover_vault(vault)
    else:
        apply_plan(vault, read_plan_file(plan_file), approval=approval)

def serve():
    # Imports happen once, here; each request runs in a fresh forked process,
    # which is what gets SIGKILLed.
    for line in sys.stdin:
        args = json.loads(line)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            code = 0
            with os.fdopen(w, "w") as out:
                try:
                    run(*args, out)
                except BaseException:
                    traceback.print_exc()
                    code = 1
            os._exit(code)
        os.close(w)
        with os.fdopen(r) as steps:
            names = steps.read().split()
        status = os.waitpid(pid, 0)[1]
        print(json.dumps({"code": os.waitstatus_to_exitcode(status), "steps": names}), flush=True)

if sys.argv[1] == "serve":
    serve()
else:
    run(*sys.argv[1:6], sys.stdout)
"""

CLI_CHILD = r"""
import argparse, sys
from desktop.cli import tx_cmd
parser = argparse.ArgumentParser(prog="antinomy")
tx_cmd.register(parser.add_subparsers())
args = parser.parse_args(sys.argv[1:])
sys.exit(args.handler(args))
"""


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Children:
    """A Python process with the engine imported once, forking a fresh child per run."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", CHILD, "serve"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.runs = 0

    def run(
        self, mode: str, vault: Path, plan_file: Path, approval: str, step: str = ""
    ) -> list[str]:
        """One child run; returns the steps it recorded. Killed children must die by SIGKILL."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([mode, str(vault), str(plan_file), approval, step]) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        expected = -signal.SIGKILL if mode.startswith("kill") else 0
        assert reply["code"] == expected, f"{mode} {step} in {vault}: exit {reply['code']}"
        self.runs += 1
        steps: list[str] = reply["steps"]
        return steps

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture
def children() -> Iterator[Children]:
    pool = Children()
    yield pool
    pool.close()


class Scenario:
    """A template vault, a 5-file plan saved as PLAN.json, its approval, both end states."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.template = base / "template"
        t = self.template
        (t / "Notes").mkdir(parents=True)
        files = {"Notes/a.md": "Alpha\n", "Notes/b.md": "Beta\n", "c.md": "Gamma\n"}
        for rel, text in files.items():
            (t / rel).write_text(text)
        (t / "untouched.md").write_text("not in the plan\n")
        self.plan = Plan(
            "five",
            "edit",
            "Five files",
            (
                Write.replace("Notes/a.md", "Alpha 2\n", expected_sha256=sha(b"Alpha\n")),
                Write.create("d.md", "Delta\n"),
                Write.delete("c.md", expected_sha256=sha(b"Gamma\n")),
                Write.create("New/Deep/e.md", "Epsilon\n"),
                Write.replace("Notes/b.md", "Beta 2\n", expected_sha256=sha(b"Beta\n")),
            ),
        )
        inspect_plan(t, self.plan)  # fixes the vault id, which every copy then carries
        self.plan_file = base / "PLAN.json"
        self.plan_file.write_text(plan_to_json(self.plan))
        self.before = snapshot(t)
        after = {k: v for k, v in self.before.items() if k != "c.md"}
        for w in self.plan.writes:
            if w.content is not None:
                after[w.path] = w.content
        self.after = dict(sorted(after.items()))

    def approval_for(self, vault: Path) -> str:
        """The plan's approval in that copy (approvals are bound to a vault's location)."""
        return approval_hash(self.plan, approval_identity(vault))

    def fresh(self, name: str) -> Path:
        copy = self.base / name
        shutil.copytree(self.template, copy, symlinks=True)
        return copy.resolve()

    def check_recovered(self, vault: Path, *, complete: bool) -> None:
        state = snapshot(vault)
        assert state == (self.after if complete else self.before)
        assert leftovers(vault) == []
        assert complete or not (vault / "New").exists()
        assert not list((vault / ".antinomy/journal/pending").iterdir())


@pytest.fixture
def scenario(tmp_path: Path) -> Scenario:
    return Scenario(tmp_path)


def test_a_kill_at_any_step_of_apply_or_recover_leaves_before_or_after(
    scenario: Scenario, children: Children
) -> None:
    plan_file = scenario.plan_file
    record = scenario.fresh("record")
    steps = children.run("record", record, plan_file, scenario.approval_for(record))
    # every step boundary, and around every file write of the 5-file plan
    assert steps[:3] == ["locked", "recovered", "checked"]
    assert steps[-3:] == ["verified", "record-complete-written", "complete"]
    for i in range(5):
        assert f"file:{i}:done" in steps
    assert sum(s.startswith("before-image:") for s in steps) == 3
    assert len(steps) == len(set(steps))

    crashed: dict[str, Path] = {}
    for step in steps:
        vault = scenario.fresh(f"apply-{step}".replace(":", "_"))
        children.run("kill", vault, plan_file, scenario.approval_for(vault), step)
        crashed[step] = scenario.base / f"crashed-{step}".replace(":", "_")
        shutil.copytree(vault, crashed[step], symlinks=True)
        reports = recover_vault(vault)
        complete = step in ("record-complete-written", "complete")
        scenario.check_recovered(vault, complete=complete)
        journaled = steps.index(step) >= steps.index("journal-pending")
        assert [r.operation_id for r in reports] == (["five"] if journaled and not complete else [])
        assert all(r.conflicts == () for r in reports)
        # Recovery is idempotent, and the interrupted plan can simply be applied again.
        assert recover_vault(vault) == ()
        approval = scenario.approval_for(vault)
        assert apply_plan(vault, scenario.plan, approval=approval).replayed == complete
        scenario.check_recovered(vault, complete=True)

    # Kill recovery itself at each of its steps, after applies killed midway.
    assert children.run("record-recover", scenario.fresh("rec"), plan_file, "") == []
    recovery_kills = 0
    for apply_step in ("file:1:replaced", "file:3:done", "verified"):
        probe = scenario.base / f"probe-{apply_step}".replace(":", "_")
        shutil.copytree(crashed[apply_step], probe, symlinks=True)
        recover_steps = children.run("record-recover", probe, plan_file, "")
        assert recover_steps[-3:] == [
            "recover:folders-removed",
            "record-rolled_back-written",
            "recover:marked",
        ]
        for recover_step in recover_steps:
            vault = scenario.base / f"rec-{apply_step}-{recover_step}".replace(":", "_")
            shutil.copytree(crashed[apply_step], vault, symlinks=True)
            children.run("kill-recover", vault, plan_file, "", recover_step)
            recover_vault(vault)
            scenario.check_recovered(vault, complete=False)
            recovery_kills += 1
    print(f"\ncrash points tried: {len(steps)} in apply + {recovery_kills} in recovery")
    assert len(steps) + recovery_kills >= 50


def test_recover_leaves_a_file_someone_changed_after_the_crash(
    scenario: Scenario, children: Children
) -> None:
    vault = scenario.fresh("v")
    children.run("kill", vault, scenario.plan_file, scenario.approval_for(vault), "file:4:done")
    (vault / "d.md").write_text(
        "Delta, typed after the crash\n"
    )  # written by the plan, then edited
    restored: list[tuple[str, ...]] = []
    (report,) = recover_vault(vault, on_change=lambda p: restored.append(tuple(p)))
    assert report.restored == ("Notes/a.md", "c.md", "New/Deep/e.md", "Notes/b.md")
    assert restored == [report.restored]
    (conflict,) = report.conflicts
    assert conflict.path == "d.md" and conflict.before_image is None
    assert "d.md was left as it is: it was changed by someone else after the interruption." in (
        report.message
    )
    assert snapshot(vault) == {**scenario.before, "d.md": b"Delta, typed after the crash\n"}
    assert recover_vault(vault) == ()
    with pytest.raises(VaultChanged) as info:
        apply_plan(vault, scenario.plan, approval=scenario.approval_for(vault))
    assert info.value.paths == ("d.md",)


def test_a_second_interruption_of_the_same_operation_is_rolled_back_too(
    scenario: Scenario, children: Children
) -> None:
    """Regression: the first attempt's rolled-back record must not hide the second attempt."""
    vault = scenario.fresh("v")
    children.run("kill", vault, scenario.plan_file, scenario.approval_for(vault), "file:2:done")
    recover_vault(vault)
    children.run("kill", vault, scenario.plan_file, scenario.approval_for(vault), "file:3:done")
    (report,) = recover_vault(vault)
    assert report.restored == ("Notes/a.md", "d.md", "c.md", "New/Deep/e.md")
    scenario.check_recovered(vault, complete=False)


def test_the_next_apply_recovers_first_and_tells_the_index_both(
    scenario: Scenario, children: Children
) -> None:
    vault = scenario.fresh("v")
    children.run("kill", vault, scenario.plan_file, scenario.approval_for(vault), "file:3:done")
    other = Plan("next", "edit", "Next", (Write.create("x.md", "x\n"),))
    seen: list[tuple[str, ...]] = []
    result = apply_plan(
        vault,
        other,
        approval=inspect_plan(vault, other).approval,
        on_change=lambda p: seen.append(tuple(p)),
    )
    (report,) = result.recovered
    assert report.operation_id == "five" and report.conflicts == ()
    assert seen == [("Notes/a.md", "d.md", "c.md", "New/Deep/e.md", "x.md")]
    assert snapshot(vault) == {**scenario.before, "x.md": b"x\n"}


def test_a_conflicting_file_keeps_its_before_image_for_the_user(
    scenario: Scenario, children: Children
) -> None:
    vault = scenario.fresh("v")
    children.run("kill", vault, scenario.plan_file, scenario.approval_for(vault), "file:0:done")
    (vault / "Notes/a.md").write_text("my edit\n")
    (report,) = recover_vault(vault)
    (conflict,) = report.conflicts
    assert conflict.before_image == ".antinomy/journal/images/five/0"
    assert (vault / conflict.before_image).read_text() == "Alpha\n"
    assert f"Its earlier version is kept at {conflict.before_image}." in report.message


def test_two_writers_one_gets_busy_at_once(scenario: Scenario) -> None:
    vault = scenario.fresh("v")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CHILD,
            "hold",
            str(vault),
            str(scenario.plan_file),
            scenario.approval_for(vault),
            "file:2:done",
        ],
        cwd=ROOT,
    )
    try:
        deadline = time.monotonic() + 30
        while not (vault / "holding").exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        # In this process: refused at once, naming the holder.
        other = Plan("other", "edit", "Other", (Write.create("x.md", "x\n"),))
        approval = inspect_plan(vault, other).approval
        t0 = time.monotonic()
        with pytest.raises(VaultBusy) as info:
            apply_plan(vault, other, approval=approval)
        assert time.monotonic() - t0 < 0.5
        assert str(info.value) == (
            f"Another Antinomy process is writing to this vault (pid {holder.pid}) — try again"
            " when it finishes."
        )
        # Through the command line of another process: exit 75 and the same message.
        plan_file = scenario.base / "other.json"
        plan_file.write_text(plan_to_json(other))
        cli = subprocess.run(
            [
                sys.executable,
                "-c",
                CLI_CHILD,
                "tx",
                "apply",
                str(plan_file),
                "--vault",
                str(vault),
                "--approval",
                approval,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert cli.returncode == 75
        assert f"Another Antinomy process is writing to this vault (pid {holder.pid})" in cli.stderr
    finally:
        (vault / "release").write_text("")
        assert holder.wait(timeout=30) == 0
    for marker in ("holding", "release"):
        (vault / marker).unlink()
    assert snapshot(vault) == scenario.after
    assert [h.operation_id for h in list_history(vault)] == ["five"]
    assert not (vault / "x.md").exists() and leftovers(vault) == []


def test_two_processes_started_together_one_wins(scenario: Scenario) -> None:
    """Both apply at the same moment; each holds the lock 1.5 s once it has it."""
    vault = scenario.fresh("v")
    rival = Plan(
        "rival",
        "edit",
        "Rival",
        (Write.replace("Notes/a.md", "Alpha by the rival\n", expected_sha256=sha(b"Alpha\n")),),
    )
    rival_file = scenario.base / "rival.json"
    rival_file.write_text(plan_to_json(rival))
    rival_approval = inspect_plan(vault, rival).approval
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, "sleep", str(vault), str(f), a, "locked"],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for f, a in (
            (scenario.plan_file, scenario.approval_for(vault)),
            (rival_file, rival_approval),
        )
    ]
    outcomes = [(p.wait(timeout=60), p.stderr.read() if p.stderr else "") for p in procs]
    codes = sorted(code for code, _ in outcomes)
    assert codes == [0, 1], outcomes
    loser = next(err for code, err in outcomes if code)
    assert "VaultBusy: Another Antinomy process is writing to this vault" in loser
    winner = list_history(vault)[0].operation_id
    expected = (
        scenario.after
        if winner == "five"
        else {
            **scenario.before,
            "Notes/a.md": b"Alpha by the rival\n",
        }
    )
    assert snapshot(vault) == expected and leftovers(vault) == []

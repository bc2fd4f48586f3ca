"""A dismissal killed at every step of its transaction: after recover, both notes or neither.

The child is a fork of the test process running ``dismiss_pair`` with a
``faults`` hook that SIGKILLs it at one named step. The steps are not
hard-coded: a first child records every step of a full dismissal.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from desktop.flows.review import dismiss_pair
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.transactions import faults, list_history, recover_vault
from tests.vault_files import leftovers, snapshot

A = b"---\r\ntype: tension   # kept\r\nhunter_false_positives: [Older]\r\n---\r\nAlpha\r\n"
B = b"---\ntype: substrate\ntags:\n  - x\n---\nBeta\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")


def make_vault(root: Path) -> Path:
    (root / "T").mkdir(parents=True)
    (root / "T" / "A.md").write_bytes(A)
    (root / "B.md").write_bytes(B)
    return root.resolve()


def in_child(action: Callable[[int], None]) -> tuple[int, list[str]]:
    """Run ``action(write_fd)`` in a forked child; returns (wait status, lines it wrote)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        code = 0
        try:
            action(w)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(w)
    with os.fdopen(r) as out:
        lines = out.read().split()
    _, status = os.waitpid(pid, 0)
    return status, lines


def dismiss_killed_at(root: Path, step: str | None) -> tuple[int, list[str]]:
    def action(fd: int) -> None:
        def hook(name: str) -> None:
            os.write(fd, (name + "\n").encode())
            if name == step:
                os.kill(os.getpid(), signal.SIGKILL)

        faults.set_hook(hook)
        dismiss_pair(root, "T/A.md", "B.md")

    return in_child(action)


def entries(root: Path) -> tuple[bool, bool]:
    """Does A list B, does B list A?"""
    a = parse_frontmatter((root / "T" / "A.md").read_bytes().decode())
    b = parse_frontmatter((root / "B.md").read_bytes().decode())
    return "B" in (a.get("hunter_false_positives") or []), "A" in (
        b.get("hunter_false_positives") or []
    )


def test_dismissal_killed_at_every_step_is_all_or_nothing(tmp_path: Path) -> None:
    reference = make_vault(tmp_path / "reference")
    status, steps = dismiss_killed_at(reference, None)
    assert os.waitstatus_to_exitcode(status) == 0
    assert entries(reference) == (True, True)
    done = snapshot(reference)
    assert "file:0:done" in steps and "file:1:done" in steps and "complete" in steps

    mixed = []  # steps after which, before recovery, one note had the entry and not the other
    for n, step in enumerate(dict.fromkeys(steps)):
        root = make_vault(tmp_path / f"v{n}")
        before = snapshot(root)
        status, _ = dismiss_killed_at(root, step)
        assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL, step
        if len(set(entries(root))) == 2:
            mixed.append(step)
        recover_vault(root)
        after = snapshot(root)
        both_or_neither = entries(root)
        assert both_or_neither in ((True, True), (False, False)), step
        if both_or_neither == (True, True):
            assert after == done, step
            assert [h.operation_type for h in list_history(root)] == ["dismiss"], step
        else:
            assert after == before, step
            assert list_history(root) == (), step
        assert leftovers(root) == [], step
    assert "file:0:done" in mixed  # the kill really interrupted the two-note write
    assert len(dict.fromkeys(steps)) >= 10

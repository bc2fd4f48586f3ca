"""An ingest killed (SIGKILL) at every step of its apply: after recover, all of it or none."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from desktop.flows.ingest import IngestReport, apply_ingest, plan_ingest
from desktop.vault.transactions import faults, list_history, recover_vault
from tests.fakes import ScriptedGenerator
from tests.ingest_helpers import answer, make_vault, write_source
from tests.test_review_crash import in_child
from tests.vault_files import leftovers, snapshot

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

ROUTE = answer(pages=[{"page": "Rust toolchain", "claims": [1, 2]}])


def planned(root: Path, source: Path) -> IngestReport:
    report = plan_ingest(root, source, engine=ScriptedGenerator([ROUTE]), judge=None)
    assert report.status == "planned", report.errors_first
    return report


def apply_killed_at(root: Path, report: IngestReport, step: str | None) -> tuple[int, list[str]]:
    assert report.preview is not None
    approval = report.preview.approval

    def action(fd: int) -> None:
        def hook(name: str) -> None:
            os.write(fd, (name + "\n").encode())
            if name == step:
                os.kill(os.getpid(), signal.SIGKILL)

        faults.set_hook(hook)
        apply_ingest(root, report, approval=approval)

    return in_child(action)


def test_ingest_killed_at_every_step_is_all_or_nothing(tmp_path: Path) -> None:
    source = write_source(tmp_path / "downloads")
    reference = make_vault(tmp_path / "reference")
    status, steps = apply_killed_at(reference, planned(reference, source), None)
    assert os.waitstatus_to_exitcode(status) == 0
    done = snapshot(reference)
    pristine = snapshot(make_vault(tmp_path / "pristine"))
    changed = {p for p in done if pristine.get(p) != done[p]}
    assert len(changed) == 3 and "complete" in steps  # source note, new page, updated page

    for n, step in enumerate(dict.fromkeys(steps)):
        root = make_vault(tmp_path / f"v{n}")
        report = planned(root, source)
        before = snapshot(root)
        status, _ = apply_killed_at(root, report, step)
        assert os.waitstatus_to_exitcode(status) == -signal.SIGKILL, step
        recover_vault(root)
        after = snapshot(root)
        assert after in (before, done), step
        assert [h.operation_type for h in list_history(root)] == (
            ["ingest"] if after == done else []
        ), step
        assert leftovers(root) == [], step
    assert len(dict.fromkeys(steps)) >= 10

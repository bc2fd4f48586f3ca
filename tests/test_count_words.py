"""Counts printed in reports agree with their number: "1 secret masked", "2 secrets
masked" — the memory import report (CLI and window) and the scan's summary line."""

from __future__ import annotations

from pathlib import Path

from desktop.flows.hunter.records import ScanRun
from desktop.flows.memory.transcript import ImportReport
from desktop.ui.panels.memory_import import ImportOutcome


def report(n: int) -> ImportReport:
    return ImportReport(
        path="t.jsonl",
        turns_captured=n,
        turns_skipped=n,
        lines_written=n,
        secrets_masked=n,
        withdrawn_turns=n,
        bad_records=n,
    )


def test_an_import_of_one_of_each_says_each_in_the_singular() -> None:
    line = ImportOutcome(Path("t.jsonl"), report(1)).line()
    assert "imported 1 turn (1 line) from t.jsonl" in line
    assert "1 secret masked" in line
    assert "1 withdrawal" in line and "withdrawals" not in line
    assert "(1 unreadable line ignored)" in line


def test_an_import_of_two_of_each_says_each_in_the_plural() -> None:
    line = ImportOutcome(Path("t.jsonl"), report(2)).line()
    assert "imported 2 turns (2 lines) from t.jsonl" in line
    assert "2 secrets masked" in line
    assert "2 withdrawals" in line
    assert "(2 unreadable lines ignored)" in line


def test_a_whole_vault_run_of_one_pair_considered_says_pair() -> None:
    one = ScanRun(started_at="", mode="whole-vault", status="ok", pairs_considered=1)
    assert "1 pair considered" in one.summary()
    two = ScanRun(started_at="", mode="whole-vault", status="ok", pairs_considered=2)
    assert "2 pairs considered" in two.summary()

"""``antinomy ingest`` in-process, with a scripted model: exit codes and what is printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import ingest_cmd
from desktop.cli.main import main
from foundation.errors import ModelUnavailable
from tests.fakes import ScriptedGenerator
from tests.ingest_helpers import (
    JUNK_NAME_ERROR,
    answer,
    junk_name_answer,
    make_pdf,
    make_vault,
    write_source,
)
from tests.vault_files import snapshot


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return make_vault(tmp_path / "vault")


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_source(tmp_path / "downloads")


def script(monkeypatch: pytest.MonkeyPatch, *answers: str | BaseException) -> ScriptedGenerator:
    engine = ScriptedGenerator(list(answers))
    monkeypatch.setattr(ingest_cmd, "LazyGenerator", lambda settings=None: engine)
    monkeypatch.setattr(ingest_cmd, "load_judge", lambda runtime: None)
    return engine


def test_exit_codes_are_distinct() -> None:
    assert ingest_cmd.STATUS_EXITS == {
        "planned": 0,
        "already_ingested": 0,
        "rejected": 65,
        "stopped": 130,
    }


def test_preview_then_approve_by_hash(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script(monkeypatch, answer())
    before = snapshot(vault)
    assert main(["ingest", str(source), "--vault", str(vault)]) == 0
    captured = capsys.readouterr()
    assert snapshot(vault) == before
    for phase in ("reading:", "planning:", "validating:", "checking:", "previewing:"):
        assert phase in captured.err
    assert "+++ b/Antinomy/Subjects/Installing Rust.md" in captured.out
    assert "judge: not available" in captured.out
    # the preview says which claim was dropped and why: without the judge, no words of the
    # model's own are written
    assert (
        "  dropped claim (no_judge) for Antinomy/Subjects/Installing Rust.md: 'Rust is installed "
        "and updated with rustup.' — the judge is not available to check words the model wrote"
    ) in captured.out
    approval = captured.out.split("Approval: ")[1].split()[0]
    assert f"--approve {approval}" in captured.out
    script(monkeypatch)  # approving asks the model nothing
    assert main(["ingest", str(source), "--vault", str(vault), "--approve", approval]) == 0
    out = capsys.readouterr().out
    assert out.startswith("applied ingest-") and "undo with: antinomy tx undo ingest-" in out
    assert (vault / "Antinomy/Subjects/Installing Rust.md").exists()
    # the same file again: nothing new, exit 0
    assert main(["ingest", str(source), "--vault", str(vault)]) == 0
    assert "status: already_ingested" in capsys.readouterr().out


def test_yes_applies_at_once_and_json_reports_it(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script(monkeypatch, answer())
    assert main(["ingest", str(source), "--vault", str(vault), "--yes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["applied"] is True and data["status"] == "planned"
    assert {c["path"] for c in data["result"]["changes"]} == {
        "Antinomy/Sources/Installing Rust.md",
        "Antinomy/Subjects/Installing Rust.md",
    }


def test_a_rejected_plan_exits_65_and_prints_its_path(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = junk_name_answer()
    script(monkeypatch, bad, bad)
    assert main(["ingest", str(source), "--vault", str(vault)]) == 65
    out = capsys.readouterr().out
    saved = out.split("rejected plan saved: ")[1].split("\n")[0]
    assert Path(saved).is_file() and Path(saved).parent.name == "rejected-plans"
    assert f"  - {JUNK_NAME_ERROR}" in out


def test_a_refused_source_exits_65_with_its_reason(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    engine = script(monkeypatch)
    scan = tmp_path / "scan.pdf"
    scan.write_bytes(make_pdf([""]))
    assert main(["ingest", str(scan), "--vault", str(vault), "--json"]) == 65
    data = json.loads(capsys.readouterr().out)
    assert data["reason"] == "pdf_no_text" and data["exit_code"] == 65
    assert engine.calls == []


def test_model_unavailable_exits_69(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script(monkeypatch, ModelUnavailable("Model file not found at X — run `antinomy doctor`."))
    assert main(["ingest", str(source), "--vault", str(vault)]) == 69
    assert "Model file not found at X" in capsys.readouterr().err


def test_a_note_changed_before_approval_exits_75_and_writes_nothing(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script(monkeypatch, answer(pages=[{"page": "Rust toolchain", "claims": [1]}]))
    assert main(["ingest", str(source), "--vault", str(vault)]) == 0
    approval = capsys.readouterr().out.split("Approval: ")[1].split()[0]
    page = vault / "Antinomy/Subjects/Rust toolchain.md"
    page.write_text(page.read_text() + "\nEdited by hand.\n")
    before = snapshot(vault)
    assert main(["ingest", str(source), "--vault", str(vault), "--approve", approval]) == 75
    assert "changed" in capsys.readouterr().err
    assert snapshot(vault) == before


def test_approve_without_a_preview_says_what_to_do(
    vault: Path, source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", str(source), "--vault", str(vault), "--approve", "0" * 64]) == 1
    assert capsys.readouterr().err == (
        "antinomy: No previewed plan is waiting for this file — run `antinomy ingest FILE` "
        "first to see the plan and its approval hash.\n"
    )


def test_ctrl_c_exits_130(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script(monkeypatch, KeyboardInterrupt())
    assert main(["ingest", str(source), "--vault", str(vault)]) == 130
    assert not (vault / "Antinomy" / "Sources").exists()


def test_the_configured_folders_are_used(
    vault: Path, source: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop.flows.settings import FolderSettings, Settings, save_settings

    save_settings(Settings(folders=FolderSettings(sources="Refs", subjects="Wiki")))
    script(monkeypatch, answer())
    assert main(["ingest", str(source), "--vault", str(vault), "--yes"]) == 0
    assert (vault / "Refs" / "Installing Rust.md").is_file()
    assert (vault / "Wiki" / "Installing Rust.md").is_file()

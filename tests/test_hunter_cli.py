"""``antinomy scan`` with a scripted engine in place of the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import exits, scan_cmd
from desktop.cli.main import main
from tests.fakes import ScriptedGenerator, confirming_judge
from tests.test_hunter import GOOD, NOTES, answer


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def use_answers(monkeypatch: pytest.MonkeyPatch, *answers: str) -> ScriptedGenerator:
    gen = ScriptedGenerator(list(answers))
    monkeypatch.setattr(scan_cmd, "_load_generator", lambda runtime: gen)
    monkeypatch.setattr(scan_cmd, "_load_judge", lambda runtime: confirming_judge())
    return gen


def test_scan_prints_pairs_with_quotes_and_the_disclaimer(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_answers(monkeypatch, answer(GOOD))
    assert main(["scan", "--vault", str(vault)]) == exits.OK
    out = capsys.readouterr().out
    assert "classic · 4/4 notes" in out
    assert "[HIGH 0.90]  Friday releases  ↔  Quiet weekends" in out
    assert "A: “Production releases go out every Friday afternoon.”" in out
    assert "Reflective prompts, not truths" in out


def test_scan_json(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_answers(monkeypatch, answer(GOOD))
    assert main(["scan", "--vault", str(vault), "--json"]) == exits.OK
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "ok" and data["pairs"][0]["note_b"] == "Quiet weekends"
    assert data["debug_note"] is None


def test_format_failure_writes_the_debug_note_and_exits_65(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_answers(monkeypatch, "no idea", "still no idea")
    assert main(["scan", "--vault", str(vault)]) == exits.DATA_ERROR
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("raw answers kept in the debug note"))
    path = line.split(": ", 1)[1]
    assert (vault / path).read_text(encoding="utf-8").count("no idea") == 2


def test_focus_needs_a_known_note(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_answers(monkeypatch)
    monkeypatch.setattr("desktop.cli.common.load_embedding_model", lambda **_: None)
    assert main(["scan", "--vault", str(vault), "--focus", "Nope"]) == exits.USAGE
    assert "No note 'Nope' in the vault" in capsys.readouterr().err


def test_bad_cap_is_refused(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scan", "--vault", str(vault), "--cap", "0"]) == exits.USAGE
    assert "--cap must be at least 1" in capsys.readouterr().err


def test_cap_outside_classic_mode_is_refused_not_ignored(
    vault: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["scan", "--vault", str(vault), "--focus", "Nope", "--cap", "5"]) == exits.USAGE
    err = capsys.readouterr().err
    assert "--cap sets how many of the newest notes a classic scan compares; a focus scan" in err
    assert "nearest neighbours" in err
    assert main(["scan", "--vault", str(vault), "--whole-vault", "--cap", "5"]) == exits.USAGE
    assert "--max-pairs bounds a whole-vault scan" in capsys.readouterr().err
    assert main(["scan", "--vault", str(vault), "--max-pairs", "5"]) == exits.USAGE
    assert "a classic scan does not use it" in capsys.readouterr().err


def test_scan_uses_the_saved_scan_caps_and_debug_folder(
    vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dataclasses import replace

    from desktop.flows.settings import FolderSettings, ScanCaps, Settings, save_settings

    save_settings(
        replace(
            Settings(),
            scan=replace(ScanCaps(), cap=2),
            folders=replace(FolderSettings(), debug="Meta/Raw"),
        )
    )
    use_answers(monkeypatch, "no idea", "still no idea")
    assert main(["scan", "--vault", str(vault), "--json"]) == exits.DATA_ERROR
    data = json.loads(capsys.readouterr().out)
    assert data["notes_examined"] == 2 and data["debug_note"].startswith("Meta/Raw/HUNTER-RAW ")
    # A flag still wins over the saved value.
    use_answers(monkeypatch, answer())
    assert main(["scan", "--vault", str(vault), "--cap", "3", "--json"]) == exits.OK
    assert json.loads(capsys.readouterr().out)["notes_examined"] == 3


def test_a_missing_judge_file_is_one_line_and_exit_69(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "judge.onnx"
    assert main(["scan", "--vault", str(vault), "--judge", str(missing)]) == exits.UNAVAILABLE
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"antinomy: The ONNX judge model file {missing} does not exist — check the path, or "
        "remove it from the settings to use the bundled default."
    ]


def test_a_corrupted_judge_file_names_the_fix(
    vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "judge.onnx"
    broken.write_bytes(b"not an onnx model")
    assert main(["scan", "--vault", str(vault), "--judge", str(broken)]) == exits.UNAVAILABLE
    err = capsys.readouterr().err
    assert "cannot be loaded as an ONNX model" in err and "the judge file is damaged" in err

"""``antinomy tx``: inspect, apply, recover, history, undo — output and exit codes."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import pytest

from desktop.cli import exits, tx_cmd
from desktop.vault.transactions import Plan, Write, plan_to_json


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="antinomy")
    tx_cmd.register(parser.add_subparsers(dest="command"))
    return parser


def tx(*argv: str) -> int:
    args = build_parser().parse_args(["tx", *argv])
    code: int = args.handler(args)
    return code


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "a.md").write_text("Alpha\n")
    return root


@pytest.fixture
def plan_file(tmp_path: Path) -> Path:
    plan = Plan(
        "cli-1",
        "edit",
        "Revise a, add b",
        (
            Write.replace("a.md", "Alpha, revised\n", expected_sha256=sha("Alpha\n")),
            Write.create("b.md", "Beta\n"),
        ),
    )
    path = tmp_path / "PLAN.json"
    path.write_text(plan_to_json(plan))
    return path


def approval_of(vault: Path, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert tx("inspect", str(plan_file), "--vault", str(vault), "--json") == exits.OK
    approval: str = json.loads(capsys.readouterr().out)["approval"]
    return approval


def test_inspect_shows_diffs_and_how_to_apply(
    vault: Path, plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tx("inspect", str(plan_file), "--vault", str(vault)) == exits.OK
    out = capsys.readouterr().out
    assert out.startswith("Operation cli-1 (edit): Revise a, add b\n")
    assert "  1 create, 1 replace, 0 delete; +2 −1 lines\n" in out
    assert "-Alpha\n+Alpha, revised\n" in out and "+++ b/b.md\n" in out
    approval = out.split("Approval: ")[1].split()[0]
    assert f"Apply with: antinomy tx apply {plan_file} --vault {vault} --approval {approval}" in out
    assert not (vault / "b.md").exists()


def test_inspect_json(vault: Path, plan_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tx("inspect", str(plan_file), "--vault", str(vault), "--json") == exits.OK
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["stale"] == [] and len(data["approval"]) == 64
    assert data["counts"] == {
        "create": 1,
        "replace": 1,
        "delete": 0,
        "lines_added": 2,
        "lines_removed": 1,
    }
    assert [f["path"] for f in data["files"]] == ["a.md", "b.md"]
    assert data["files"][0]["current_sha256"] == sha("Alpha\n")


def test_apply_then_replay_then_history_then_undo(
    vault: Path, plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    approval = approval_of(vault, plan_file, capsys)
    assert tx("apply", str(plan_file), "--vault", str(vault), "--approval", approval) == 0
    out = capsys.readouterr().out
    assert out.startswith("Applied cli-1 (edit): Revise a, add b\n")
    assert f"Undo with: antinomy tx undo cli-1 --vault {vault}" in out
    assert (vault / "b.md").read_text() == "Beta\n"

    assert tx("apply", str(plan_file), "--vault", str(vault), "--approval", approval) == 0
    assert "nothing written (stored result)" in capsys.readouterr().out

    assert tx("history", "--vault", str(vault), "--json") == exits.OK
    (op,) = json.loads(capsys.readouterr().out)["operations"]
    assert op["operation_id"] == "cli-1" and op["paths"] == ["a.md", "b.md"]

    assert tx("undo", "cli-1", "--vault", str(vault), "--dry-run") == exits.OK
    assert "+++ /dev/null" in capsys.readouterr().out
    assert (vault / "b.md").exists()

    assert tx("undo", "cli-1", "--vault", str(vault), "--json") == exits.OK
    result = json.loads(capsys.readouterr().out)
    assert result["undoes"] == "cli-1" and result["paths"] == ["a.md", "b.md"]
    assert (vault / "a.md").read_text() == "Alpha\n" and not (vault / "b.md").exists()

    assert tx("history", "--vault", str(vault)) == exits.OK
    out = capsys.readouterr().out
    assert "undo-cli-1  undo\n" in out and "cli-1  edit  (undone by undo-cli-1)" in out

    # Same plan again: the stored result, and how to bring it back.
    assert tx("apply", str(plan_file), "--vault", str(vault), "--approval", approval) == 0
    out = capsys.readouterr().out
    assert out.startswith("Already applied at ")
    assert (
        "It was undone since by undo-cli-1; to bring it back:\n"
        f"  antinomy tx undo undo-cli-1 --vault {vault}\n" in out
    )


def test_drift_exits_75_and_names_the_file(
    vault: Path, plan_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    approval = approval_of(vault, plan_file, capsys)
    (vault / "a.md").write_text("edited meanwhile\n")
    assert tx("apply", str(plan_file), "--vault", str(vault), "--approval", approval) == 75
    err = capsys.readouterr().err
    assert err == (
        "antinomy: The vault changed since this plan was made: a.md. Nothing was written —"
        " re-read the notes, make a new plan and inspect it again.\n"
    )
    assert not (vault / "b.md").exists()
    assert tx("inspect", str(plan_file), "--vault", str(vault), "--json") == 75
    captured = capsys.readouterr()
    assert json.loads(captured.out)["stale"] == ["a.md"]
    assert "apply would refuse it" in captured.err


def test_bad_plans_exit_2_with_one_clear_line(
    vault: Path, plan_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tx("apply", str(plan_file), "--vault", str(vault), "--approval", "f" * 64) == 2
    assert "The approval hash does not match" in capsys.readouterr().err

    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"operation_id": "x", "operation_type": "edit", "summary": "s", "writes": ['
        '{"action": "create", "path": "../escape.md", "expected_sha256": null,'
        ' "content": "x"}]}'
    )
    assert tx("inspect", str(bad), "--vault", str(vault), "--json") == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {
        "ok": False,
        "error": "Refused write path '../escape.md': it is not a normalised path inside the vault"
        " (no '.', '..', '//', trailing '/').",
        "error_type": "PlanInvalid",
        "paths": [],
        "candidates": [],
        "exit_code": 2,
    }
    assert captured.err.count("\n") == 1

    assert tx("inspect", str(tmp_path / "missing.json"), "--vault", str(vault)) == 2
    assert "No plan file at" in capsys.readouterr().err
    assert tx("history", "--vault", str(tmp_path / "nowhere")) == 2
    assert "does not exist — check the path" in capsys.readouterr().err
    assert tx("undo", "nope", "--vault", str(vault)) == 2


def test_recover_with_nothing_to_do(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert tx("recover", "--vault", str(vault)) == exits.OK
    assert capsys.readouterr().out == "Nothing to recover: no operation was interrupted.\n"
    assert tx("recover", "--vault", str(vault), "--json") == exits.OK
    assert json.loads(capsys.readouterr().out) == {"ok": True, "recovered": []}


def test_help_documents_exit_codes_and_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["tx", "--help"], ["tx", "apply", "--help"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args(argv)
        out = capsys.readouterr().out
        assert "exit codes:\n  0   done" in out
        assert "75  the vault changed" in out and "2   bad plan or arguments" in out
        assert '"expected_sha256": null' in out
    assert tx() == exits.USAGE

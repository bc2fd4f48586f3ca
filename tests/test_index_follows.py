"""After apply, undo and recover, the index follows the touched notes (issue: transactions §6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli.main import main
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import inspect_plan, plan_from_json


def _plan(vault: Path, body: str) -> Path:
    plan = {
        "operation_id": "edit-follow-1",
        "operation_type": "edit",
        "summary": "add a principle",
        "writes": [
            {
                "action": "create",
                "path": "Principles/Ship small.md",
                "expected_sha256": None,
                "content": f"---\ntype: principle\n---\n{body} See [[Deploys]].\n",
            }
        ],
    }
    path = vault.parent / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def test_apply_and_undo_update_the_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Deploys.md").write_text("We deploy on Fridays.\n")
    VaultIndex(vault).update()
    plan_file = _plan(vault, "Ship the smallest useful thing.")
    approval = inspect_plan(vault, plan_from_json(plan_file.read_text())).approval
    assert main(["tx", "apply", str(plan_file), "--approval", approval, "--vault", str(vault)]) == 0
    index = VaultIndex(vault)
    assert index.note("Principles/Ship small.md") is not None
    assert index.backlinks("Deploys.md") == ["Principles/Ship small.md"]
    index.close()
    assert main(["tx", "undo", "edit-follow-1", "--vault", str(vault)]) == 0
    index = VaultIndex(vault)
    assert index.note("Principles/Ship small.md") is None
    assert index.backlinks("Deploys.md") == []


def test_no_index_is_created_for_a_vault_that_has_none(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    plan_file = _plan(vault, "x")
    approval = inspect_plan(vault, plan_from_json(plan_file.read_text())).approval
    assert main(["tx", "apply", str(plan_file), "--approval", approval, "--vault", str(vault)]) == 0
    assert not (vault / ".antinomy" / "index.db").exists()

"""Vault folder checks and the vault identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.vault.errors import VaultNotFound
from desktop.vault.layout import state_dir, vault_id, vault_root


def test_vault_root_resolves_and_refuses_bad_paths(tmp_path: Path) -> None:
    assert vault_root(tmp_path) == tmp_path.resolve()
    with pytest.raises(VaultNotFound, match="does not exist — check the path"):
        vault_root(tmp_path / "missing")
    f = tmp_path / "note.md"
    f.write_text("x")
    with pytest.raises(VaultNotFound, match="is a file, not a vault folder"):
        vault_root(f)


def test_vault_id_is_stable_and_distinct(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    first = vault_id(a)
    assert vault_id(a) == first and len(first) == 32
    assert vault_id(b) != first
    assert (state_dir(a) / "vault-id").read_text().strip() == first
    assert not list(state_dir(a).glob("*.tmp"))

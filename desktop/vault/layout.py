"""Where a vault keeps Antinomy's state, and which folders are never touched.

``<vault>/.antinomy/`` holds derived data and history (index, journal, locks,
raw batches, guard markers, rejected plans). Deleting it loses no note.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from desktop.vault.errors import VaultNotFound

STATE_DIR = ".antinomy"
#: Folders Antinomy never writes into (and the index never reads).
PROTECTED_DIRS = frozenset({".obsidian", ".git", ".trash", STATE_DIR})


def vault_root(path: str | os.PathLike[str]) -> Path:
    """The vault folder, resolved; raises VaultNotFound with the fix named."""
    root = Path(path).expanduser()
    if not root.exists():
        raise VaultNotFound(f"The vault folder {root} does not exist — check the path.")
    if not root.is_dir():
        raise VaultNotFound(f"{root} is a file, not a vault folder — give the folder of notes.")
    return root.resolve()


def state_dir(root: Path, *parts: str) -> Path:
    """``<vault>/.antinomy/<parts…>``, created on first use."""
    path = root.joinpath(STATE_DIR, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path


def vault_id(root: Path) -> str:
    """A stable identity for this vault, kept in ``.antinomy/vault-id``.

    A copy of the vault folder carries the same id; :func:`approval_identity`
    adds the location.
    """
    marker = state_dir(root) / "vault-id"
    try:
        value = marker.read_text(encoding="utf-8").strip()
        if value:
            return value
    except FileNotFoundError:
        pass
    value = uuid.uuid4().hex
    tmp = marker.with_name(f".vault-id.{os.getpid()}.tmp")
    tmp.write_text(value + "\n", encoding="utf-8")
    try:
        os.link(tmp, marker)  # first writer wins if two processes race
    except FileExistsError:
        value = marker.read_text(encoding="utf-8").strip()
    finally:
        tmp.unlink(missing_ok=True)
    return value


def approval_identity(root: Path) -> str:
    """What an approval hash is bound to: this vault's id *and* where it is.

    A plan approved for one vault cannot be applied to another, nor to a copy
    of the same vault in another folder (it would carry the same id).
    """
    return f"{vault_id(root)}@{root.resolve()}"

"""No write of Antinomy's goes through a symbolic link it did not make.

A cloned repository or a copied vault can carry links where Antinomy keeps its
files (a hooks backup, ``.antinomy/lock``, ``.antinomy/journal``); each is
refused by name, or replaced without being followed, and the file it points
to is never changed.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from desktop.cli import exits
from desktop.cli.main import main
from desktop.service.security import TokenFileUnsafe, load_or_create_token, token_path
from desktop.vault.errors import StateUnsafe
from desktop.vault.layout import vault_id
from desktop.vault.transactions import (
    Plan,
    Write,
    apply_plan,
    inspect_plan,
    recover_vault,
    sha256_hex,
)
from foundation import atomic

THEIR_HOOK = {"type": "command", "command": "id"}
THEIR_HOOKS = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [THEIR_HOOK]}]}}
VICTIM = "the user's own file\n"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the user's outside every folder Antinomy writes."""
    path = tmp_path / "victim"
    path.write_text(VICTIM)
    path.chmod(0o644)
    return path


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cloned repository that ships its own Claude Code hooks."""
    folder = tmp_path / "repo"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(THEIR_HOOKS))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return folder


def _install(repo: Path, *extra: str) -> int:
    return main(["hooks", "install", "--project", str(repo), *extra])


# -- hooks files -------------------------------------------------------------------------------


def test_a_planted_backup_link_is_refused_and_its_target_kept(
    repo: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The attack: the repo's backup links to the user's global settings; copying the old
    settings "to the backup" wrote the repo's hooks there."""
    backup = repo / ".claude" / "settings.json.antinomy-backup"
    backup.symlink_to(victim)
    assert _install(repo) == exits.FAILURE
    assert victim.read_text() == VICTIM
    assert backup.is_symlink()
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == THEIR_HOOKS
    assert capsys.readouterr().err.strip() == (
        f"antinomy: {backup} is a symbolic link to {victim}. Antinomy does not write hooks"
        " through a link (a repository can point one at your own settings), so nothing was"
        " changed — it is where Antinomy keeps the previous file, so a link there was not made"
        " by Antinomy: remove it, then install again."
    )


def test_a_settings_file_that_is_a_link_is_refused_naming_both(
    repo: Path, victim: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.unlink()
    victim.write_text(json.dumps(THEIR_HOOKS))
    settings.symlink_to(victim)
    assert _install(repo, "--agent", "claude") == exits.FAILURE
    assert victim.read_text() == json.dumps(THEIR_HOOKS)
    assert settings.is_symlink()
    assert not (repo / ".claude" / "settings.json.antinomy-backup").exists()
    err = capsys.readouterr().err
    assert f"{settings} is a symbolic link to {victim}." in err
    assert (
        f"replace the link with a real file (a copy of what it points to), or edit {victim}" in err
    )


def test_a_hooks_folder_that_is_a_link_is_refused(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``.codex`` linking to the user's own Codex folder would put the hooks there."""
    own = tmp_path / "home" / ".codex"
    own.mkdir(parents=True)
    (own / "hooks.json").write_text("{}")
    (repo / ".codex").symlink_to(own, target_is_directory=True)
    assert _install(repo) == exits.FAILURE
    assert (own / "hooks.json").read_text() == "{}"
    assert sorted(p.name for p in own.iterdir()) == ["hooks.json"]
    assert f"{repo / '.codex'} is a symbolic link to {own}." in capsys.readouterr().err
    # All files or none: the Claude file beside it was not written either.
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == THEIR_HOOKS


def test_uninstall_refuses_links_too(repo: Path, victim: Path) -> None:
    assert _install(repo, "--agent", "claude") == exits.OK
    backup = repo / ".claude" / "settings.json.antinomy-backup"
    backup.unlink()
    backup.symlink_to(victim)
    assert main(["hooks", "uninstall", "--project", str(repo)]) == exits.FAILURE
    assert victim.read_text() == VICTIM


def test_the_backup_is_as_private_as_the_file(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.chmod(0o600)  # it can hold API keys
    assert _install(repo, "--agent", "claude") == exits.OK
    backup = repo / ".claude" / "settings.json.antinomy-backup"
    assert json.loads(backup.read_text()) == THEIR_HOOKS
    assert stat.S_IMODE(backup.stat().st_mode) == 0o600


# -- the endpoint token ------------------------------------------------------------------------


def test_a_token_file_that_is_a_link_is_refused_not_followed(victim: Path) -> None:
    """Followed, the link's target would be tightened to 0600 and its text used as the token."""
    victim.write_text("x" * 40 + "\n")
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(victim)
    with pytest.raises(TokenFileUnsafe) as info:
        load_or_create_token()
    assert str(info.value) == (
        f"The endpoint token file {path} is a symbolic link to {victim}. Antinomy keeps its"
        " token in a file of its own and does not follow a link there; nothing was read or"
        " changed — remove the link, and a new token is made on the next start."
    )
    assert stat.S_IMODE(victim.stat().st_mode) == 0o644
    assert victim.read_text() == "x" * 40 + "\n"


def test_a_token_path_that_is_a_fifo_is_refused_without_waiting() -> None:
    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    with pytest.raises(TokenFileUnsafe, match="is not a regular file"):
        load_or_create_token()


# -- atomic writes -----------------------------------------------------------------------------


def test_an_atomic_write_replaces_a_link_and_never_writes_its_target(
    tmp_path: Path, victim: Path
) -> None:
    path = tmp_path / "state.json"
    path.symlink_to(victim)
    atomic.write_json(path, {"a": 1})
    assert not path.is_symlink() and json.loads(path.read_text()) == {"a": 1}
    assert victim.read_text() == VICTIM


def test_a_link_planted_at_the_temp_name_fails_the_write(
    tmp_path: Path, victim: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic.secrets, "token_hex", lambda n: "guessed")
    path = tmp_path / "state.json"
    path.write_text("old\n")
    planted = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.guessed.tmp")
    planted.symlink_to(victim)
    with pytest.raises(FileExistsError):
        atomic.write_text(path, "new\n")
    assert victim.read_text() == VICTIM and path.read_text() == "old\n"
    assert planted.is_symlink()  # not ours: left for the user to see


# -- the vault's state folder ------------------------------------------------------------------


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Note.md").write_text("hello\n")
    (root / ".antinomy").mkdir()
    return root.resolve()


def _create() -> Plan:
    return Plan("edit-1", "edit", "add a note", (Write.create("New.md", "new\n"),))


def test_a_lock_file_that_is_a_link_is_refused_and_its_target_kept(
    vault: Path, victim: Path
) -> None:
    """Followed, taking the lock would truncate the link's target and write a pid into it."""
    (vault / ".antinomy" / "lock").symlink_to(victim)
    with pytest.raises(StateUnsafe) as info:
        recover_vault(vault)
    assert str(info.value).startswith(
        f"{vault / '.antinomy' / 'lock'} is a symbolic link to {victim}. Antinomy keeps its"
        " state in real folders and files inside the vault and never follows a link there"
    )
    assert victim.read_text() == VICTIM


@pytest.mark.parametrize("linked", [".antinomy/journal", ".antinomy/journal/pending"])
def test_a_journal_folder_that_is_a_link_is_refused(
    vault: Path, tmp_path: Path, linked: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    plan = _create()
    approval = inspect_plan(vault, plan).approval
    link = vault / linked
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(StateUnsafe, match=f"{link} is a symbolic link to {elsewhere}"):
        apply_plan(vault, plan, approval=approval)
    assert list(elsewhere.iterdir()) == []
    assert not (vault / "New.md").exists()


def test_a_state_folder_that_is_a_link_is_refused(vault: Path, tmp_path: Path) -> None:
    (vault / ".antinomy").rmdir()
    (vault / ".antinomy").symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(StateUnsafe, match="is a symbolic link to"):
        vault_id(vault)
    assert not (tmp_path / "vault-id").exists()


def test_a_before_image_folder_that_is_a_link_is_replaced_not_written_through(
    vault: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    images = vault / ".antinomy" / "journal" / "images"
    images.mkdir(parents=True)
    (images / "edit-1").symlink_to(elsewhere, target_is_directory=True)
    note = vault / "Note.md"
    plan = Plan(
        "edit-1",
        "edit",
        "edit a note",
        (Write.replace("Note.md", "changed\n", expected_sha256=sha256_hex(note.read_bytes())),),
    )
    apply_plan(vault, plan, approval=inspect_plan(vault, plan).approval)
    assert note.read_text() == "changed\n"
    assert list(elsewhere.iterdir()) == []
    assert (images / "edit-1" / "0").read_text() == "hello\n"


def test_the_vault_id_is_never_written_through_a_planted_temp_name(
    vault: Path, victim: Path
) -> None:
    """A temp name made of the pid alone could be guessed and planted as a link."""
    (vault / ".antinomy" / f".vault-id.{os.getpid()}.tmp").symlink_to(victim)
    assert len(vault_id(vault)) == 32
    assert victim.read_text() == VICTIM


def test_the_window_installs_in_every_file_or_none(repo: Path, victim: Path) -> None:
    """The Guard panel's install checks every target first, as the command does: a link
    planted for the second agent leaves the first agent's file untouched too."""
    from desktop.flows.settings import DEFAULT_PORT
    from desktop.service.hook_install import HooksError
    from desktop.ui.panels.guard_hooks import install_hooks

    (repo / ".codex").mkdir()
    (repo / ".codex" / "hooks.json").write_text("{}")
    (repo / ".codex" / "hooks.json.antinomy-backup").symlink_to(victim)
    with pytest.raises(HooksError, match="is a symbolic link to"):
        install_hooks(repo, agent="both", vault=None, port=DEFAULT_PORT)
    assert json.loads((repo / ".claude" / "settings.json").read_text()) == THEIR_HOOKS
    assert not (repo / ".claude" / "settings.json.antinomy-backup").exists()
    assert victim.read_text() == VICTIM


def test_the_hook_reads_no_token_through_a_link(victim: Path) -> None:
    """The hook client runs on every tool call: it sends the token it reads to the endpoint,
    so a token file swapped for a link is not read (as the endpoint refuses it)."""
    from desktop.service.hook_wire import HookFailure, read_token

    path = token_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    victim.write_text("not-a-token-but-a-secret\n")
    path.symlink_to(victim)
    with pytest.raises(HookFailure, match="is a symbolic link, not used; tool allowed"):
        read_token()
    path.unlink()
    path.write_text("t0ken\n")
    assert read_token() == "t0ken"

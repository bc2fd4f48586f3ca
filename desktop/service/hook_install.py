"""Claude Code's and Codex's hooks files: merge Antinomy's entries in, take them out, list them.

``install`` reads the file as JSON, keeps a copy beside it first
(``*.antinomy-backup``), replaces Antinomy's earlier entries and leaves every
other key and hook as it was; ``uninstall`` removes only commands that run the
hook client. Used by ``antinomy hooks`` and by the desktop app's Guard panel.

Nothing is written through a symbolic link. A cloned repository can ship
``.claude/settings.json.antinomy-backup`` (or ``settings.json``, or the
``.claude`` folder itself) as a link to the user's own settings; following it
would put the repository's hooks there. So the folder, the file and its backup
must be real, or the install is refused naming the link and where it points
(:func:`refuse_links`); the backup is written atomically, never copied through.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.service import hook as hook_client
from foundation import atomic
from foundation.errors import AntinomyError

#: A command containing one of these is ours (console script, module, the client's file,
#: or the bundle running its own client).
HOOK_MARKERS = (
    "antinomy-hook",
    "antinomy hook ",
    "desktop.service.hook",
    "desktop/service/hook.py",
    "desktop\\service\\hook.py",
)
CLAUDE_TOOLS = "Write|Edit|MultiEdit|Bash"
CODEX_TOOLS = "Bash|apply_patch"
#: Outer safety net for the agent, in seconds; the client keeps its own 300 ms budget.
AGENT_TIMEOUT = 3
#: SessionStart waits up to 20 s for the endpoint to be ready (hook.SESSIONSTART_BUDGET_MS).
SESSIONSTART_TIMEOUT = 30


class HooksError(AntinomyError):
    """A hooks file that cannot be merged safely (not JSON, not an object)."""


#: Beside the hooks file: the file as it was before the last install or uninstall.
BACKUP_SUFFIX = ".antinomy-backup"


@dataclass(frozen=True)
class Target:
    agent: str  # "claude" | "codex"
    path: Path
    #: The folder the user named (the project, the home folder, ``CODEX_HOME``): every
    #: folder below it on the way to ``path`` must be a real one.
    base: Path | None = None

    @property
    def backup(self) -> Path:
        return self.path.with_name(self.path.name + BACKUP_SUFFIX)


def targets(*, project: Path | None, user: bool, agent: str) -> list[Target]:
    out: list[Target] = []
    if agent in ("claude", "both"):
        base = Path.home() if user else project
        assert base is not None
        out.append(Target("claude", base / ".claude" / "settings.json", base))
    if agent in ("codex", "both"):
        if user:
            codex_home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
            out.append(Target("codex", codex_home / "hooks.json", codex_home))
        else:
            assert project is not None
            out.append(Target("codex", project / ".codex" / "hooks.json", project))
    return out


def refuse_links(target: Target) -> None:
    """Raise :class:`HooksError` if a write to ``target`` would go through a symbolic link:
    a folder below ``target.base``, the hooks file or its backup. Nothing is written then."""
    folders: list[Path] = []
    if target.base is not None and target.path.is_relative_to(target.base):
        folder = target.path.parent
        while folder != target.base:
            folders.append(folder)
            folder = folder.parent
    for path, kind in [
        *((f, "folder") for f in reversed(folders)),
        (target.path, "file"),
        (target.backup, "backup"),
    ]:
        try:
            mode = os.lstat(path).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        if stat.S_ISLNK(mode):
            raise HooksError(_link_refusal(path, kind))
        if kind != "folder" and not stat.S_ISREG(mode):
            raise HooksError(
                f"{path} is not a regular file — move it away, then install again; nothing was"
                " changed."
            )


def check_targets(found: list[Target]) -> None:
    """Refuse before anything is written if any of ``found`` could not be written safely
    (a link on the way, a file that is not a JSON object): all files or none."""
    for target in found:
        refuse_links(target)
        read_hooks_file(target.path)


def _link_refusal(path: Path, kind: str) -> str:
    try:
        where = os.readlink(path)
    except OSError as exc:
        where = f"an unreadable place ({exc.strerror or exc})"
    if kind == "backup":
        fix = (
            "it is where Antinomy keeps the previous file, so a link there was not made by"
            " Antinomy: remove it, then install again"
        )
    else:
        fix = (
            f"replace the link with a real {kind} (a copy of what it points to), or edit"
            f" {where} by hand, then install again"
        )
    return (
        f"{path} is a symbolic link to {where}. Antinomy does not write hooks through a link"
        f" (a repository can point one at your own settings), so nothing was changed — {fix}."
    )


def hook_executable() -> list[str]:
    """How the agent starts the hook client: this interpreter with ``-S`` running the
    client's file. It imports only the standard library, so it needs no site-packages;
    skipping ``site`` (and the console script's wrapper) saves start-up on every tool call
    (tests/perf/bench_guard.py measures both ways). In the PyInstaller bundle there is
    no interpreter to give a file to: the bundle's own ``antinomy hook`` runs the client."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "hook"]
    return [sys.executable, "-S", hook_client.__file__]


def _command(sub: str, extra: list[str]) -> str:
    return shlex.join([*hook_executable(), sub, *extra])


def our_entries(
    agent: str, *, mode: str | None, vault: Path | None, port: int | None
) -> dict[str, dict[str, Any]]:
    """Event name → the matcher group we add.

    When the app's home is relocated (``ANTINOMY_HOME`` set while installing), every
    command carries ``--home`` with it: the agent starts hooks without our
    environment, and the client would otherwise look for the token and
    ``endpoint.json`` in the default folder.
    """
    home = os.environ.get("ANTINOMY_HOME", "").strip()
    common = ["--port", str(port)] if port else []
    if home:
        common += ["--home", str(Path(home).expanduser().resolve())]
    pre = common + (["--mode", mode] if mode else [])
    start = common + (["--vault", str(vault)] if vault else [])

    def group(command: str, matcher: str | None, timeout: int = AGENT_TIMEOUT) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if matcher:
            entry["matcher"] = matcher
        entry["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        return entry

    tools = CLAUDE_TOOLS if agent == "claude" else CODEX_TOOLS
    starts = None if agent == "claude" else "startup|resume"
    return {
        "PreToolUse": group(_command("pretooluse", pre), tools),
        "SessionStart": group(_command("sessionstart", start), starts, SESSIONSTART_TIMEOUT),
        "UserPromptSubmit": group(_command("userpromptsubmit", common), None),
    }


def is_ours(hook: Any) -> bool:
    command = hook.get("command") if isinstance(hook, dict) else None
    return isinstance(command, str) and any(m in command for m in HOOK_MARKERS)


def read_hooks_file(path: Path) -> dict[str, Any]:
    try:
        text = _read_file(path)[0].decode("utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        if os.path.islink(path):
            raise HooksError(_link_refusal(path, "file")) from None
        raise HooksError(
            f"Cannot read {path} ({exc.strerror or exc}) — check its permissions; nothing was"
            " changed."
        ) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise HooksError(
            f"{path} is not valid JSON ({exc}) — fix it by hand first; nothing was changed."
        ) from None
    if not isinstance(data, dict):
        raise HooksError(
            f"{path} holds a JSON {type(data).__name__}, not an object — fix it first."
        )
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise HooksError(f"'hooks' in {path} is not an object — fix it first; nothing was changed.")
    return data


def without_ours(data: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A copy of ``data`` without our hook commands; and how many were removed."""
    removed = 0
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return data, 0
    new_hooks: dict[str, Any] = {}
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            new_hooks[event] = groups
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not is_ours(h)]
            removed += len(inner) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
            elif not inner:
                kept_groups.append(group)
        if kept_groups:
            new_hooks[event] = kept_groups
    out = dict(data)
    if new_hooks:
        out["hooks"] = new_hooks
    else:
        out.pop("hooks", None)
    return out, removed


def _read_file(path: Path) -> tuple[bytes, int]:
    """The file's bytes and permission bits; a link is not followed (``O_NOFOLLOW``)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as f:
        return f.read(), stat.S_IMODE(os.fstat(f.fileno()).st_mode)


def write_hooks_file(target: Target, data: dict[str, Any]) -> Path | None:
    """Write ``data`` (2-space JSON); the old file is kept as ``*.antinomy-backup`` first.

    Both writes replace the file atomically (a new file renamed into place), so a link
    put there after :func:`refuse_links` is replaced, never written through.
    """
    refuse_links(target)
    backup = None
    try:
        old, mode = _read_file(target.path)
    except FileNotFoundError:
        old = None
    if old is not None:
        backup = target.backup
        with atomic.replacing(backup, mode=mode) as out:
            os.fchmod(out.fileno(), mode)  # as private as the file it copies, whatever the umask
            out.write(old)
    atomic.write_json(target.path, data)
    return backup


def install(
    target: Target, *, mode: str | None, vault: Path | None, port: int | None
) -> Path | None:
    data, _ = without_ours(read_hooks_file(target.path))
    hooks = dict(data.get("hooks") or {})
    for event, group in our_entries(target.agent, mode=mode, vault=vault, port=port).items():
        hooks[event] = [*hooks.get(event, []), group]
    return write_hooks_file(target, {**data, "hooks": hooks})


def uninstall(target: Target) -> int:
    if not target.path.exists():
        return 0
    data, removed = without_ours(read_hooks_file(target.path))
    if removed:
        write_hooks_file(target, data)
    return removed


def installed(target: Target) -> list[dict[str, str]]:
    try:
        data = read_hooks_file(target.path)
    except HooksError:
        return []
    found = []
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for h in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(h):
                    found.append(
                        {
                            "event": event,
                            "matcher": group.get("matcher", ""),
                            "command": h["command"],
                        }
                    )
    return found

"""Claude Code's and Codex's hooks files: merge Antinomy's entries in, take them out, list them.

``install`` reads the file as JSON, keeps a copy beside it first
(``*.antinomy-backup``), replaces Antinomy's earlier entries and leaves every
other key and hook as it was; ``uninstall`` removes only commands that run the
hook client. Used by ``antinomy hooks`` and by the desktop app's Guard panel.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.service import hook as hook_client
from inference import atomic
from inference.errors import AntinomyError

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


@dataclass(frozen=True)
class Target:
    agent: str  # "claude" | "codex"
    path: Path


def targets(*, project: Path | None, user: bool, agent: str) -> list[Target]:
    out: list[Target] = []
    if agent in ("claude", "both"):
        base = Path.home() if user else project
        assert base is not None
        out.append(Target("claude", base / ".claude" / "settings.json"))
    if agent in ("codex", "both"):
        if user:
            codex_home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
            out.append(Target("codex", codex_home / "hooks.json"))
        else:
            assert project is not None
            out.append(Target("codex", project / ".codex" / "hooks.json"))
    return out


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
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
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


def write_hooks_file(path: Path, data: dict[str, Any]) -> Path | None:
    """Write ``data`` (2-space JSON); the old file is copied to ``*.antinomy-backup`` first."""
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".antinomy-backup")
        shutil.copy2(path, backup)
    atomic.write_json(path, data)
    return backup


def install(
    target: Target, *, mode: str | None, vault: Path | None, port: int | None
) -> Path | None:
    data, _ = without_ours(read_hooks_file(target.path))
    hooks = dict(data.get("hooks") or {})
    for event, group in our_entries(target.agent, mode=mode, vault=vault, port=port).items():
        hooks[event] = [*hooks.get(event, []), group]
    return write_hooks_file(target.path, {**data, "hooks": hooks})


def uninstall(target: Target) -> int:
    if not target.path.exists():
        return 0
    data, removed = without_ours(read_hooks_file(target.path))
    if removed:
        write_hooks_file(target.path, data)
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

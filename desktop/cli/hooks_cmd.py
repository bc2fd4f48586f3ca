"""``antinomy hooks install|uninstall|status`` and ``antinomy guard enable|disable|status``.

``hooks install`` merges Antinomy's entries into Claude Code's
``.claude/settings.json`` and Codex's ``.codex/hooks.json`` (in a project, or
the user's own with ``--user``), leaving every other key and hook as it was:
the file is read as JSON, a copy is kept beside it first
(``settings.json.antinomy-backup``), our earlier entries are replaced, others
are untouched. ``hooks uninstall`` removes only entries whose command runs
``antinomy-hook``.

The guard itself is off until turned on, for a vault (``guard enable --vault``)
or a project folder (``guard enable --project``; ``hooks install --project``
does this for the folder it installs into).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.cli import exits
from desktop.cli.output import print_json
from desktop.cli.vault_cmd import add_vault_option, vault_path
from desktop.flows.guard import (
    DEFAULT_THRESHOLD,
    GuardSettings,
    load_projects,
    load_settings,
    projects_path,
    save_settings,
    set_project,
    settings_path,
)
from desktop.service import hook as hook_client
from desktop.vault.layout import vault_root
from inference.errors import AntinomyError

HOOK_MARKERS = ("antinomy-hook", "desktop.service.hook")
CLAUDE_TOOLS = "Write|Edit|MultiEdit|Bash"
CODEX_TOOLS = "Bash|apply_patch"
#: Outer safety net for the agent, in seconds; the client keeps its own 300 ms budget.
AGENT_TIMEOUT = 3


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
    """How the agent should start the hook client: the console script next to this
    interpreter, else this interpreter running the module."""
    here = Path(sys.executable).parent
    for name in ("antinomy-hook", "antinomy-hook.exe"):
        if (here / name).exists():
            return [str(here / name)]
    return [sys.executable, "-m", "desktop.service.hook"]


def _command(sub: str, extra: list[str]) -> str:
    return shlex.join([*hook_executable(), sub, *extra])


def our_entries(
    agent: str, *, mode: str | None, vault: Path | None, port: int | None
) -> dict[str, dict[str, Any]]:
    """Event name → the matcher group we add."""
    common = ["--port", str(port)] if port else []
    pre = common + (["--mode", mode] if mode else [])
    start = common + (["--vault", str(vault)] if vault else [])

    def group(command: str, matcher: str | None) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if matcher:
            entry["matcher"] = matcher
        entry["hooks"] = [{"type": "command", "command": command, "timeout": AGENT_TIMEOUT}]
        return entry

    tools = CLAUDE_TOOLS if agent == "claude" else CODEX_TOOLS
    starts = None if agent == "claude" else "startup|resume"
    return {
        "PreToolUse": group(_command("pretooluse", pre), tools),
        "SessionStart": group(_command("sessionstart", start), starts),
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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
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


# ---------------------------------------------------------------- argparse


def _scope_options(p: argparse.ArgumentParser) -> None:
    scope = p.add_mutually_exclusive_group()
    scope.add_argument(
        "--project", metavar="DIR", help="the project folder (default: the current folder)"
    )
    scope.add_argument("--user", action="store_true", help="the user's own settings (~/.claude …)")
    p.add_argument(
        "--agent",
        choices=["claude", "codex", "both"],
        default="both",
        help="which agent's hooks file (default both)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hooks = sub.add_parser("hooks", help="install the agent hooks (Claude Code, Codex)")
    hsub = hooks.add_subparsers(dest="hooks_command", metavar="ACTION", required=True)
    p = hsub.add_parser(
        "install",
        help="merge Antinomy's hooks into .claude/settings.json and .codex/hooks.json",
        description="Adds PreToolUse (the guard), SessionStart (starts `antinomy serve` if it "
        "is down) and UserPromptSubmit (recall) hooks; other entries are kept, a backup is "
        "written first. With --project, also turns the guard on for that folder.",
    )
    _scope_options(p)
    p.add_argument("--mode", choices=["warn", "ask"], help="warn (default) or ask the user")
    p.add_argument("--vault", metavar="DIR", help="the vault `antinomy serve` opens at start")
    p.add_argument("--port", type=int, help="a port other than the default")
    p.set_defaults(handler=run_install)
    p = hsub.add_parser("uninstall", help="remove only Antinomy's hooks")
    _scope_options(p)
    p.set_defaults(handler=run_uninstall)
    p = hsub.add_parser("status", help="which hooks are installed; is the endpoint up")
    _scope_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_hooks_status)

    guard = sub.add_parser("guard", help="turn the agent guard on or off (vault or project)")
    gsub = guard.add_subparsers(dest="guard_command", metavar="ACTION", required=True)
    p = gsub.add_parser("enable", help="turn the guard on for a vault, or for one project")
    add_vault_option(p)
    p.add_argument("--project", metavar="DIR", help="only for agent calls from this folder")
    p.add_argument("--mode", choices=["warn", "ask"], help="warn (default) or ask")
    p.add_argument(
        "--threshold", type=float, help=f"cosine needed to warn (default {DEFAULT_THRESHOLD})"
    )
    p.add_argument("--principles", action="store_true", help="compare with principles too")
    p.set_defaults(handler=run_guard_enable)
    p = gsub.add_parser("disable", help="turn the guard off for a vault, or for one project")
    add_vault_option(p)
    p.add_argument("--project", metavar="DIR", help="only for agent calls from this folder")
    p.set_defaults(handler=run_guard_disable)
    p = gsub.add_parser("status", help="where the guard is on, its mode and threshold")
    add_vault_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(handler=run_guard_status)


def _project(args: argparse.Namespace) -> Path | None:
    if getattr(args, "user", False):
        return None
    folder = Path(args.project or os.getcwd()).expanduser().resolve()
    if not folder.is_dir():
        raise HooksError(f"The project folder {folder} does not exist — check the path.")
    return folder


def run_install(args: argparse.Namespace) -> int:
    project = _project(args)
    vault = vault_root(args.vault) if args.vault else None
    for target in targets(project=project, user=args.user, agent=args.agent):
        backup = install(target, mode=args.mode, vault=vault, port=args.port)
        note = f" (previous file kept as {backup.name})" if backup else ""
        print(f"installed {target.agent} hooks in {target.path}{note}")
    if project is not None:
        set_project(project, enabled=True, mode=args.mode)
        print(f"guard on for agent calls from {project}")
    else:
        print("guard: turn it on with `antinomy guard enable --vault DIR` or `--project DIR`")
    return exits.OK


def run_uninstall(args: argparse.Namespace) -> int:
    project = _project(args)
    for target in targets(project=project, user=args.user, agent=args.agent):
        removed = uninstall(target)
        print(f"removed {removed} Antinomy hook(s) from {target.path}")
    if project is not None and str(project) in load_projects():
        set_project(project, enabled=None)
    return exits.OK


def _endpoint_state() -> dict[str, Any]:
    port = hook_client.endpoint_port()
    deadline = hook_client.process_start_deadline(0) + 10**6  # no process budget here
    try:
        status, body = hook_client.request(
            "GET", "/healthz", None, port=port, token=None, deadline=deadline
        )
        up = status == 200
    except (OSError, hook_client.HookFailure):
        up, body = False, {}
    return {"port": port, "up": up, "models": body.get("models") if up else None}


def run_hooks_status(args: argparse.Namespace) -> int:
    project = _project(args)
    files: list[dict[str, Any]] = [
        {"agent": t.agent, "path": str(t.path), "entries": installed(t)}
        for t in targets(project=project, user=args.user, agent=args.agent)
    ]
    token_file = hook_client.config_dir() / "endpoint-token"
    endpoint = _endpoint_state()
    report: dict[str, Any] = {
        "files": files,
        "endpoint": endpoint,
        "token_file": str(token_file),
        "token_exists": token_file.exists(),
    }
    if args.json:
        print_json(report)
        return exits.OK
    for f in files:
        entries = f["entries"]
        print(f"{f['agent']}: {f['path']}: {len(entries) or 'no'} Antinomy hook(s)")
        for e in entries:
            matcher = f" [{e['matcher']}]" if e["matcher"] else ""
            print(f"  {e['event']}{matcher}: {e['command']}")
    ep = endpoint
    state = f"up (models {ep['models']})" if ep["up"] else "down"
    print(f"endpoint 127.0.0.1:{ep['port']}: {state}; token {token_file}")
    return exits.OK


def run_guard_enable(args: argparse.Namespace) -> int:
    if args.project:
        folder = Path(args.project).expanduser().resolve()
        if not folder.is_dir():
            raise HooksError(f"The project folder {folder} does not exist — check the path.")
        set_project(folder, enabled=True, mode=args.mode)
        print(f"guard on for agent calls from {folder} ({projects_path()})")
        return exits.OK
    root = vault_root(vault_path(args))
    current = load_settings(root)
    settings = GuardSettings(
        enabled=True,
        mode=args.mode or current.mode,
        threshold=args.threshold if args.threshold is not None else current.threshold,
        include_principles=args.principles or current.include_principles,
    )
    save_settings(root, settings)
    print(
        f"guard on for {root}: mode {settings.mode}, threshold {settings.threshold}"
        f"{', principles too' if settings.include_principles else ''}"
    )
    return exits.OK


def run_guard_disable(args: argparse.Namespace) -> int:
    if args.project:
        folder = Path(args.project).expanduser().resolve()
        set_project(folder, enabled=False)
        print(f"guard off for agent calls from {folder}")
        return exits.OK
    root = vault_root(vault_path(args))
    current = load_settings(root)
    save_settings(
        root, GuardSettings(False, current.mode, current.threshold, current.include_principles)
    )
    print(f"guard off for {root}")
    return exits.OK


def run_guard_status(args: argparse.Namespace) -> int:
    root = vault_root(vault_path(args))
    settings = load_settings(root)
    projects = load_projects()
    report = {
        "vault": str(root),
        "settings_file": str(settings_path(root)),
        "enabled": settings.enabled,
        "mode": settings.mode,
        "threshold": settings.threshold,
        "include_principles": settings.include_principles,
        "projects": {k: {"enabled": p.enabled, "mode": p.mode} for k, p in projects.items()},
    }
    if args.json:
        print_json(report)
        return exits.OK
    print(
        f"vault {root}: guard {'on' if settings.enabled else 'off'}, mode {settings.mode}, "
        f"threshold {settings.threshold}{', principles too' if settings.include_principles else ''}"
    )
    for path, p in sorted(projects.items()):
        mode = f", mode {p.mode}" if p.mode else ""
        print(f"project {path}: guard {'on' if p.enabled else 'off'}{mode}")
    return exits.OK

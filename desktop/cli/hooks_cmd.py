"""``antinomy hooks install|uninstall|status`` and ``antinomy guard enable|disable|status``.

``hooks install`` merges Antinomy's entries into Claude Code's
``.claude/settings.json`` and Codex's ``.codex/hooks.json`` (in a project, or
the user's own with ``--user``), leaving every other key and hook as it was:
the file is read as JSON, a copy is kept beside it first
(``settings.json.antinomy-backup``), our earlier entries are replaced, others
are untouched. A folder, file or backup that is a symbolic link is refused,
naming the link and its target, before any file is written. ``hooks
uninstall`` removes only entries whose command runs ``antinomy-hook``.

The guard itself is off until turned on, for a vault (``guard enable --vault``)
or a project folder (``guard enable --project``; ``hooks install --project``
does this for the folder it installs into).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from desktop.cli import exits
from desktop.cli.common import add_vault_option, set_handler, vault_path
from desktop.cli.output import print_json
from desktop.flows.guard import (
    DEFAULT_THRESHOLD,
    GuardSettings,
    describe_thresholds,
    judge_threshold,
    load_guard_settings,
    load_projects,
    projects_path,
    save_guard_settings,
    set_project,
    settings_path,
)
from desktop.flows.settings import resolve
from desktop.service import hook_wire as hook_client
from desktop.service.hook_install import (
    HooksError,
    check_targets,
    install,
    installed,
    targets,
    uninstall,
)
from desktop.vault.layout import vault_root

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
    set_handler(p, run_install)
    p = hsub.add_parser("uninstall", help="remove only Antinomy's hooks")
    _scope_options(p)
    set_handler(p, run_uninstall)
    p = hsub.add_parser("status", help="which hooks are installed; is the endpoint up")
    _scope_options(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    set_handler(p, run_hooks_status)

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
    set_handler(p, run_guard_enable)
    p = gsub.add_parser("disable", help="turn the guard off for a vault, or for one project")
    add_vault_option(p)
    p.add_argument("--project", metavar="DIR", help="only for agent calls from this folder")
    set_handler(p, run_guard_disable)
    p = gsub.add_parser("status", help="where the guard is on, its mode and threshold")
    add_vault_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    set_handler(p, run_guard_status)


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
    found = targets(project=project, user=args.user, agent=args.agent)
    check_targets(found)
    for target in found:
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
    found = targets(project=project, user=args.user, agent=args.agent)
    check_targets([t for t in found if os.path.lexists(t.path)])
    for target in found:
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
    token_file = Path(hook_client.config_dir()) / "endpoint-token"
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
    root = vault_path(args)
    current = load_guard_settings(root)
    settings = GuardSettings(
        enabled=True,
        mode=args.mode or current.mode,
        threshold=args.threshold if args.threshold is not None else current.threshold,
        include_principles=args.principles or current.include_principles,
    )
    save_guard_settings(root, settings)
    print(
        f"guard on for {root}: mode {settings.mode}, "
        f"{describe_thresholds(settings, resolve().runtime)}"
        f"{', principles too' if settings.include_principles else ''}"
    )
    return exits.OK


def run_guard_disable(args: argparse.Namespace) -> int:
    if args.project:
        folder = Path(args.project).expanduser().resolve()
        set_project(folder, enabled=False)
        print(f"guard off for agent calls from {folder}")
        return exits.OK
    root = vault_path(args)
    current = load_guard_settings(root)
    save_guard_settings(
        root, GuardSettings(False, current.mode, current.threshold, current.include_principles)
    )
    print(f"guard off for {root}")
    return exits.OK


def run_guard_status(args: argparse.Namespace) -> int:
    root = vault_path(args)
    settings = load_guard_settings(root)
    runtime = resolve().runtime
    judged, whose = judge_threshold(settings, runtime)
    projects = load_projects()
    report = {
        "vault": str(root),
        "settings_file": str(settings_path(root)),
        "enabled": settings.enabled,
        "mode": settings.mode,
        "threshold": settings.threshold,
        "judge_threshold": judged,
        "judge_threshold_source": whose,
        "include_principles": settings.include_principles,
        "projects": {k: {"enabled": p.enabled, "mode": p.mode} for k, p in projects.items()},
    }
    if args.json:
        print_json(report)
        return exits.OK
    print(
        f"vault {root}: guard {'on' if settings.enabled else 'off'}, mode {settings.mode}, "
        f"{describe_thresholds(settings, runtime)}"
        f"{', principles too' if settings.include_principles else ''}"
    )
    for path, p in sorted(projects.items()):
        mode = f", mode {p.mode}" if p.mode else ""
        print(f"project {path}: guard {'on' if p.enabled else 'off'}{mode}")
    return exits.OK

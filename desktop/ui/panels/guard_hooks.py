"""The Guard panel's hook actions, Qt-free: what ``antinomy hooks install|uninstall|status``
does for one project folder, with the same code (desktop.service.hook_install).

Each function blocks on a few small file reads/writes: call it on a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.flows.guard import ProjectSetting, load_projects, set_project
from desktop.service import hook_install
from desktop.service.server import DEFAULT_PORT

AGENTS = ("both", "claude", "codex")


@dataclass(frozen=True)
class HookFile:
    agent: str
    path: Path
    #: Our entries in it: event, matcher, command.
    entries: tuple[tuple[str, str, str], ...]


@dataclass(frozen=True)
class HooksStatus:
    project: Path
    files: tuple[HookFile, ...]
    #: The guard's entry for this folder (None: the vault's setting applies).
    guard: ProjectSetting | None

    def summary(self) -> str:
        lines = []
        for f in self.files:
            n = len(f.entries)
            where = (
                f.path.relative_to(self.project) if f.path.is_relative_to(self.project) else f.path
            )
            lines.append(f"{f.agent}: {where} — {n or 'no'} Antinomy hook(s)")
            for event, matcher, _command in f.entries:
                lines.append(f"    {event}" + (f" [{matcher}]" if matcher else ""))
        if self.guard is None:
            lines.append("guard for this folder: as the vault says")
        else:
            mode = f", mode {self.guard.mode}" if self.guard.mode else ""
            lines.append(f"guard for this folder: {'on' if self.guard.enabled else 'off'}{mode}")
        return "\n".join(lines)


def _folder(project: Path) -> Path:
    folder = Path(project).expanduser().resolve()
    if not folder.is_dir():
        raise hook_install.HooksError(
            f"The project folder {folder} does not exist — choose an existing folder."
        )
    return folder


def hooks_status(project: Path, *, agent: str = "both") -> HooksStatus:
    folder = _folder(project)
    files = tuple(
        HookFile(
            t.agent,
            t.path,
            tuple((e["event"], e["matcher"], e["command"]) for e in hook_install.installed(t)),
        )
        for t in hook_install.targets(project=folder, user=False, agent=agent)
    )
    return HooksStatus(folder, files, load_projects().get(str(folder)))


def install_hooks(
    project: Path, *, agent: str = "both", vault: Path | None, port: int
) -> HooksStatus:
    """Merge our hooks into the folder's agent files and turn the guard on for it.

    The hook commands carry no ``--mode``, so the mode chosen in the panel (the
    vault's guard settings) keeps applying; ``--port`` only when not the default.
    """
    folder = _folder(project)
    found = hook_install.targets(project=folder, user=False, agent=agent)
    hook_install.check_targets(found)  # all files or none, as `antinomy hooks install` does
    for target in found:
        hook_install.install(
            target, mode=None, vault=vault, port=None if port == DEFAULT_PORT else port
        )
    set_project(folder, enabled=True, mode=None)
    return hooks_status(folder, agent=agent)


def uninstall_hooks(project: Path, *, agent: str = "both") -> HooksStatus:
    """Remove only our entries; forget the folder's guard entry."""
    folder = _folder(project)
    for target in hook_install.targets(project=folder, user=False, agent=agent):
        hook_install.uninstall(target)
    if str(folder) in load_projects():
        set_project(folder, enabled=None)
    return hooks_status(folder, agent=agent)

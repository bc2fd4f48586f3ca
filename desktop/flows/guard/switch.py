"""Whether the guard checks a call, and how it answers (re-read when the files change)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.flows.guard.settings import (
    GuardMode,
    GuardSettings,
    ProjectSetting,
    load_guard_settings,
    load_projects,
    project_for,
    projects_path,
    settings_path,
)


@dataclass(frozen=True)
class Activation:
    """Whether the guard checks a call from ``cwd``, and how it answers."""

    active: bool
    mode: GuardMode
    threshold: float


class GuardSwitch:
    """Where the guard is on, and how it answers: the vault's settings and the project
    entries, re-read when their files change. Cheap (two stats); any thread."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._settings_cache: tuple[int, GuardSettings] | None = None
        self._projects_cache: tuple[int, dict[str, ProjectSetting]] | None = None

    def settings(self) -> GuardSettings:
        path = settings_path(self.root)
        try:
            mtime = path.stat().st_mtime_ns
        except FileNotFoundError:
            return GuardSettings()
        cached = self._settings_cache
        if cached is None or cached[0] != mtime:
            cached = (mtime, load_guard_settings(self.root))
            self._settings_cache = cached
        return cached[1]

    def _projects(self) -> dict[str, ProjectSetting]:
        try:
            mtime = projects_path().stat().st_mtime_ns
        except FileNotFoundError:
            return {}
        cached = self._projects_cache
        if cached is None or cached[0] != mtime:
            cached = (mtime, load_projects())
            self._projects_cache = cached
        return cached[1]

    def activation(self, cwd: str, mode: str | None = None) -> Activation:
        """Is the guard on for a call from ``cwd``, in which mode, at which threshold?"""
        settings = self.settings()
        active = settings.enabled
        chosen: GuardMode = settings.mode
        project = project_for(cwd, self._projects())
        if project is not None:
            active = project.enabled
            chosen = project.mode or chosen
        if mode == "warn":  # the hook command's --mode wins (set by `hooks install --mode`)
            chosen = "warn"
        elif mode == "ask":
            chosen = "ask"
        return Activation(active, chosen, settings.threshold)

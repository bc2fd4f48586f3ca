"""Where the guard is on: the vault's settings and the per-project entries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from desktop.flows.guard.constants import DEFAULT_THRESHOLD, PROJECTS_FILE
from desktop.flows.settings.vault import (
    load_vault_settings,
    save_vault_settings,
    vault_settings_path,
)
from foundation import atomic
from foundation.errors import AntinomyError
from foundation.paths import config_dir
from inference.engines import RuntimeSettings, guard_judge_spec
from inference.judge import Thresholds
from inference.registry import default_spec

GuardMode = Literal["warn", "ask"]


class GuardError(AntinomyError):
    """Bad guard settings (a threshold out of range, an unknown mode)."""


@dataclass(frozen=True)
class GuardSettings:
    """A vault's guard settings, in ``<vault>/.antinomy/guard/settings.json``."""

    enabled: bool = False
    mode: GuardMode = "warn"
    threshold: float = DEFAULT_THRESHOLD
    include_principles: bool = False
    #: P(contradiction) the judge must give to warn; None: the judge's calibrated value.
    judge_threshold: float | None = None

    def validated(self) -> GuardSettings:
        if self.mode not in ("warn", "ask"):
            raise GuardError(f"Guard mode {self.mode!r} is unknown: use 'warn' or 'ask'.")
        if not 0.0 < self.threshold <= 1.0:
            raise GuardError(
                f"Guard threshold {self.threshold} is out of range: give a cosine in (0, 1], "
                f"e.g. the default {DEFAULT_THRESHOLD}."
            )
        if self.judge_threshold is not None and not 0.0 < self.judge_threshold < 1.0:
            raise GuardError(
                f"Guard judge_threshold {self.judge_threshold} is out of range: give a "
                "probability in (0, 1), or remove it to use the judge's calibrated value."
            )
        return self


#: The next step named by every error about the file.
_FIX = "Fix it or run `antinomy guard enable` again."


def settings_path(root: Path) -> Path:
    return vault_settings_path(root, "guard")


def load_guard_settings(root: Path) -> GuardSettings:
    settings = load_vault_settings(root, "guard", GuardSettings, error=GuardError, fix=_FIX)
    return settings.validated()


def save_guard_settings(root: Path, settings: GuardSettings) -> None:
    save_vault_settings(root, "guard", settings.validated())


@dataclass(frozen=True)
class ProjectSetting:
    path: str
    enabled: bool
    mode: GuardMode | None = None


def projects_path() -> Path:
    return config_dir() / PROJECTS_FILE


def load_projects() -> dict[str, ProjectSetting]:
    try:
        data = json.loads(projects_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise GuardError(f"{projects_path()} cannot be read ({exc}) — fix or delete it.") from exc
    out: dict[str, ProjectSetting] = {}
    for path, entry in (data.get("projects") or {}).items():
        mode = entry.get("mode")
        out[path] = ProjectSetting(
            path, bool(entry.get("enabled")), mode if mode in ("warn", "ask") else None
        )
    return out


def set_project(path: Path, *, enabled: bool | None, mode: GuardMode | None = None) -> None:
    """Turn the guard on/off for one project folder; ``enabled=None`` forgets the folder."""
    projects = load_projects()
    key = str(path.expanduser().resolve())
    if enabled is None:
        projects.pop(key, None)
    else:
        projects[key] = ProjectSetting(key, enabled, mode)
    payload = {
        "projects": {
            k: {"enabled": p.enabled, **({"mode": p.mode} if p.mode else {})}
            for k, p in sorted(projects.items())
        }
    }
    _write_json(projects_path(), payload)


def project_for(cwd: str, projects: dict[str, ProjectSetting]) -> ProjectSetting | None:
    """The most specific project folder containing ``cwd``, if any."""
    if not cwd or not projects:
        return None
    here = Path(cwd)
    best: ProjectSetting | None = None
    for key, setting in projects.items():
        inside = here == Path(key) or Path(key) in here.parents
        if inside and (best is None or len(key) > len(best.path)):
            best = setting
    return best


def _write_json(path: Path, data: Any) -> None:
    atomic.write_json(path, data)


def judge_threshold(settings: GuardSettings, runtime: RuntimeSettings) -> tuple[float | None, str]:
    """The judge probability the guard warns from, and whose it is: this vault's
    ``judge_threshold``, else the calibrated one of the judge the guard decides with (None
    for a judge file of the user's own: its manifest entry, if any, says)."""
    if settings.judge_threshold is not None:
        return settings.judge_threshold, "this vault's"
    if runtime.judge_path is not None:
        return None, "the judge file's own"
    try:
        spec = guard_judge_spec(runtime) or default_spec("judge")
    except AntinomyError:
        return None, "no judge"
    return Thresholds.from_mapping(spec.extra.get("thresholds")).guard, "calibrated"


def describe_thresholds(settings: GuardSettings, runtime: RuntimeSettings) -> str:
    """One phrase for the command line: the judge's threshold first, the cosine fallback
    after it (the Guard panel says the same)."""
    value, whose = judge_threshold(settings, runtime)
    judge = f"judge {value:.2f} ({whose})" if value is not None else f"judge: {whose}"
    return f"warns from {judge}; cosine {settings.threshold:.2f} without a judge"

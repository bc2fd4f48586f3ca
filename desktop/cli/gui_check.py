"""Can the Qt window open here? The platform plugin and the libraries it lacks.

When Qt's platform plugin (``libqxcb.so`` on X11) cannot load a library it
links against, Qt aborts the process with a guess ("maybe libxcb-cursor0 is
needed") that is often not the library that is missing. ``ldd`` on the
plugin names exactly what the dynamic linker cannot find; the launcher checks
this before creating the QApplication and ``antinomy doctor`` reports it.

No Qt import: the plugin is found from PySide6's package folder, so this runs
where Qt itself would abort.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

#: Library → the Debian/Ubuntu package that ships it (the common ones Qt's xcb needs).
DEBIAN_PACKAGES = {
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xinerama.so.0": "libxcb-xinerama0",
    "libxcb-xinput.so.0": "libxcb-xinput0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libOpenGL.so.0": "libopengl0",
    "libfontconfig.so.1": "libfontconfig1",
    "libfreetype.so.6": "libfreetype6",
    "libdbus-1.so.3": "libdbus-1-3",
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
}

_NOT_FOUND = re.compile(r"^\s*(\S+)\s+=>\s+not found", re.MULTILINE)

Runner = Callable[[list[str]], str]


@dataclass(frozen=True)
class GuiCheck:
    """What was found about the platform plugin Qt will load."""

    platform: str | None
    plugin: Path | None = None
    missing: tuple[str, ...] = ()
    #: Why nothing could be checked (no ldd, plugin not found), or "".
    unchecked: str = ""
    #: The plugin Qt will ask for is not in this PySide6 install.
    absent: bool = False

    @property
    def ok(self) -> bool:
        return self.problem() is None

    def problem(self) -> str | None:
        """The one message to show when the window cannot open, else None."""
        if self.missing:
            packages = [DEBIAN_PACKAGES[m] for m in self.missing if m in DEBIAN_PACKAGES]
            hint = (
                f" On Debian/Ubuntu: sudo apt install {' '.join(dict.fromkeys(packages))}."
                if packages
                else ""
            )
            return (
                f"The Qt platform plugin {self.platform!r} cannot load: the system lacks "
                f"{', '.join(self.missing)} (found with ldd on {self.plugin}).{hint} Meanwhile "
                "the command line works: `antinomy scan`, `antinomy doctor`."
            )
        if self.absent:
            return (
                f"The Qt platform plugin {self.platform!r} is not in this PySide6 install "
                f"({self.unchecked}) — choose another with QT_QPA_PLATFORM (e.g. xcb, wayland)."
            )
        return None


def wanted_platform(env: Mapping[str, str], platform: str = sys.platform) -> str | None:
    """The platform plugin Qt will try first, or None when it is not a Linux plugin file."""
    chosen = env.get("QT_QPA_PLATFORM", "").split(";")[0].split(":")[0].strip()
    if chosen:
        return chosen
    if not platform.startswith("linux"):
        return None
    if env.get("WAYLAND_DISPLAY") and env.get("XDG_SESSION_TYPE") == "wayland":
        return "wayland"
    if env.get("DISPLAY"):
        return "xcb"
    if env.get("WAYLAND_DISPLAY"):
        return "wayland"
    return None


def plugin_folder() -> Path | None:
    """PySide6's ``Qt/plugins/platforms`` folder, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "Qt" / "plugins" / "platforms"
    return folder if folder.is_dir() else None


def _ldd(args: list[str]) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=20, check=False)
    return done.stdout + done.stderr


def missing_libraries(plugin: Path, run: Runner = _ldd) -> tuple[str, ...]:
    """Libraries ``ldd`` reports as "not found" for ``plugin`` (each once, in order)."""
    return tuple(dict.fromkeys(_NOT_FOUND.findall(run(["ldd", str(plugin)]))))


def check_gui(
    env: Mapping[str, str] | None = None,
    *,
    folder: Path | None = None,
    run: Runner = _ldd,
    platform: str = sys.platform,
) -> GuiCheck:
    """Check the plugin Qt will load here. Never raises; cheap (one ``ldd``)."""
    env = os.environ if env is None else env
    name = wanted_platform(env, platform)
    if name is None or not platform.startswith("linux"):
        return GuiCheck(name, unchecked="not a Linux desktop session: nothing to check")
    if name in ("offscreen", "minimal"):
        return GuiCheck(name, unchecked=f"{name}: no display libraries needed")
    folder = folder or plugin_folder()
    if folder is None:
        return GuiCheck(name, unchecked="PySide6's plugin folder was not found")
    plugin = folder / f"libq{name}.so"
    if not plugin.is_file():
        return GuiCheck(name, None, unchecked=f"no {plugin.name} in {folder}", absent=True)
    if run is _ldd and shutil.which("ldd") is None:
        return GuiCheck(name, plugin, unchecked="ldd is not installed: libraries not checked")
    try:
        missing = missing_libraries(plugin, run)
    except (OSError, subprocess.SubprocessError) as exc:
        return GuiCheck(name, plugin, unchecked=f"ldd failed: {exc}")
    return GuiCheck(name, plugin, missing)


def gui_record(check: GuiCheck) -> dict[str, object]:
    """The check as ``antinomy doctor --json`` reports it."""
    return {
        "platform": check.platform,
        "plugin": str(check.plugin) if check.plugin else None,
        "missing": list(check.missing),
        "ok": check.ok,
        "problem": check.problem(),
        "unchecked": check.unchecked or None,
    }


def gui_line(check: GuiCheck) -> str:
    """One line for ``antinomy doctor``."""
    problem = check.problem()
    if problem:
        return f"✗ window: {problem}"
    if check.unchecked:
        return f"  window: {check.unchecked}"
    return (
        f"  window: Qt platform plugin {check.platform!r} finds all its libraries ({check.plugin})"
    )

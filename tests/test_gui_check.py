"""Why the window cannot open: the platform plugin's missing libraries, named by ldd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.cli import exits, gui_check
from desktop.cli.gui_check import GuiCheck, check_gui, missing_libraries, wanted_platform
from desktop.cli.main import main
from desktop.ui import launcher

LDD = """\tlinux-vdso.so.1 (0x00007ffd)
\tlibQt6XcbQpa.so.6 => /x/PySide6/Qt/lib/libQt6XcbQpa.so.6 (0x00007f)
\tlibxcb-icccm.so.4 => not found
\tlibxcb-keysyms.so.1 => not found
\tlibxcb-icccm.so.4 => not found
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
"""


def plugins(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "platforms"
    folder.mkdir()
    for name in names:
        (folder / f"libq{name}.so").write_bytes(b"\x7fELF")
    return folder


def test_the_platform_qt_will_try() -> None:
    assert wanted_platform({"DISPLAY": ":0"}, "linux") == "xcb"
    assert wanted_platform({"QT_QPA_PLATFORM": "wayland;xcb", "DISPLAY": ":0"}, "linux") == (
        "wayland"
    )
    assert wanted_platform({"WAYLAND_DISPLAY": "w", "XDG_SESSION_TYPE": "wayland",
                            "DISPLAY": ":0"}, "linux") == "wayland"  # fmt: skip
    assert (
        wanted_platform({}, "linux") is None
        and wanted_platform({"DISPLAY": ":0"}, "darwin") is None
    )


def test_missing_libraries_are_named_from_ldd_once_each(tmp_path: Path) -> None:
    folder = plugins(tmp_path, "xcb")
    calls: list[list[str]] = []

    def ldd(args: list[str]) -> str:
        calls.append(args)
        return LDD

    assert missing_libraries(folder / "libqxcb.so", ldd) == (
        "libxcb-icccm.so.4",
        "libxcb-keysyms.so.1",
    )
    check = check_gui({"DISPLAY": ":0"}, folder=folder, run=ldd, platform="linux")
    assert calls[-1] == ["ldd", str(folder / "libqxcb.so")]
    assert not check.ok and check.platform == "xcb"
    assert check.problem() == (
        "The Qt platform plugin 'xcb' cannot load: the system lacks libxcb-icccm.so.4, "
        f"libxcb-keysyms.so.1 (found with ldd on {folder / 'libqxcb.so'}). On Debian/Ubuntu: "
        "sudo apt install libxcb-icccm4 libxcb-keysyms1. Meanwhile the command line works: "
        "`antinomy scan`, `antinomy doctor`."
    )


def test_nothing_missing_or_nothing_to_check(tmp_path: Path) -> None:
    folder = plugins(tmp_path, "xcb")
    fine = check_gui({"DISPLAY": ":0"}, folder=folder, run=lambda a: "", platform="linux")
    assert fine.ok and fine.problem() is None and fine.plugin == folder / "libqxcb.so"
    off = check_gui({"QT_QPA_PLATFORM": "offscreen"}, folder=folder, platform="linux")
    assert off.ok and "no display libraries" in off.unchecked
    absent = check_gui({"QT_QPA_PLATFORM": "wayland"}, folder=folder, platform="linux")
    assert not absent.ok and "'wayland' is not in this PySide6 install" in (absent.problem() or "")
    assert check_gui({"DISPLAY": ":0"}, platform="win32").ok


def test_the_launcher_says_why_the_window_cannot_open(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DISPLAY", ":0")
    broken = GuiCheck("xcb", Path("/p/libqxcb.so"), ("libxcb-icccm.so.4",))
    monkeypatch.setattr(gui_check, "check_gui", lambda: broken)
    from desktop.ui import app

    opened: list[bool] = []
    monkeypatch.setattr(app, "run_app", lambda: opened.append(True) or 0)
    assert launcher.main([]) == exits.UNAVAILABLE and not opened
    err = capsys.readouterr().err
    assert err.startswith("antinomy: the window cannot open. The Qt platform plugin 'xcb'")
    assert "libxcb-icccm.so.4" in err and "apt install libxcb-icccm4" in err


def test_doctor_reports_the_window_check(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from desktop.cli import models_cmd

    broken = GuiCheck("xcb", Path("/p/libqxcb.so"), ("libxcb-keysyms.so.1",))
    monkeypatch.setattr(models_cmd, "check_gui", lambda: broken)
    # A model that does not resolve stops doctor before loading: the window line is still there.
    assert main(["doctor", "--llm", "/nonexistent.gguf"]) == exits.UNAVAILABLE
    out = capsys.readouterr().out
    assert "✗ window: The Qt platform plugin 'xcb' cannot load" in out
    assert main(["doctor", "--json", "--llm", "/nonexistent.gguf"]) == exits.UNAVAILABLE
    gui = json.loads(capsys.readouterr().out)["gui"]
    assert gui["missing"] == ["libxcb-keysyms.so.1"] and gui["ok"] is False
    assert gui["plugin"] == "/p/libqxcb.so" and "apt install libxcb-keysyms1" in gui["problem"]

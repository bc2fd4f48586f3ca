"""``antinomy``: no arguments opens the desktop app; any argument runs the command line.

Qt is imported only when the window is opened, so CLI commands start fast.
On a machine with no display the app cannot open: it says so in one line and
runs the headless scan on the sample vault instead. When Qt's platform plugin
lacks system libraries, it names them (``ldd`` on the plugin) and exits 69.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

NO_DISPLAY = (
    "antinomy: no display found (DISPLAY/WAYLAND_DISPLAY unset), so the window cannot open — "
    "running the headless whole-vault scan on the sample vault instead."
)


def has_display() -> bool:
    """True when a Qt window can be shown here."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True  # the user chose a platform plugin (offscreen, wayland, xcb…)
    if sys.platform == "darwin" or sys.platform.startswith("win"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def headless_command() -> list[str]:
    """The CLI command run instead of the window: a whole-vault scan if the CLI has it, else
    an index. Whole vault, not classic: it judges every note against its neighbours, where
    classic reads only the 20 newest notes and asks the model for pairs too (slower)."""
    from desktop.cli.main import build_parser

    parser = build_parser()
    choices = next((a.choices for a in parser._actions if a.dest == "command" and a.choices), {})
    return ["scan", "--whole-vault"] if "scan" in (choices or {}) else ["index"]


def window_vault(args: Sequence[str]) -> tuple[bool, str | None]:
    """Whether ``args`` ask for the window (none, or only ``--vault DIR``), and the vault it
    opens: ``--vault``, else ``$ANTINOMY_VAULT``, else None (the last one, or the sample)."""
    if not args:
        return True, os.environ.get("ANTINOMY_VAULT") or None
    if len(args) == 2 and args[0] == "--vault":
        return True, args[1]
    if len(args) == 1 and args[0].startswith("--vault="):
        return True, args[0].split("=", 1)[1]
    return False, None


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    window, vault = window_vault(args)
    if not window:
        from desktop.cli.main import main as cli_main

        return cli_main(args)
    if not has_display():
        print(NO_DISPLAY, file=sys.stderr)
        from desktop.cli.main import main as cli_main

        return cli_main(headless_command() + (["--vault", vault] if vault else []))
    if vault is not None and not Path(vault).expanduser().is_dir():
        print(f"antinomy: no vault folder at {vault}.", file=sys.stderr)
        return 2
    started = time.perf_counter()
    from desktop.cli.exits import UNAVAILABLE
    from desktop.cli.gui_check import check_gui

    # Before Qt: a platform plugin that cannot load aborts the process with a guess.
    problem = check_gui().problem()
    if problem:
        print(f"antinomy: the window cannot open. {problem}", file=sys.stderr)
        return UNAVAILABLE
    from desktop.ui import app

    app.LAUNCHED_AT = started
    return app.run_app(vault=Path(vault).expanduser().resolve() if vault else None)


if __name__ == "__main__":
    sys.exit(main())

"""Open the app on a fresh copy of the sample vault (offscreen), run a scan, save a PNG per panel.

    python scripts/screenshots.py [--out /tmp/antinomy-shots] [--mode classic]

Uses the real shipped models. Writes into a temporary ANTINOMY_HOME, never
the user's own settings or vault.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


async def _wait(predicate, timeout: float) -> None:  # type: ignore[no-untyped-def]
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise TimeoutError("timed out")
        await asyncio.sleep(0.05)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="/tmp/antinomy-shots")
    parser.add_argument("--mode", default="classic", choices=["classic", "whole-vault"])
    parser.add_argument("--cap", type=int, default=20, help="classic-mode note cap")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-shots-home-")

    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop.resources import ensure_sample_vault
    from desktop.ui.app import build_window
    from desktop.ui.logview import install_log_handler
    from inference.paths import data_dir
    from inference.runtime import State

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = build_window(loop=loop, log_handler=install_log_handler(), use_tray=False)
    window.resize(1400, 860)
    window.show()
    vault = ensure_sample_vault(data_dir())

    async def run() -> None:
        c = window.controller
        from dataclasses import replace

        from desktop.flows.settings import ScanCaps

        c.update_settings(replace(c.settings, scan=ScanCaps(cap=args.cap)))
        c.start(vault)
        await _wait(lambda: c.runtime.state in (State.READY, State.FAILED), 120)
        await _wait(lambda: c.index is not None and c.index.embedding is not None, 120)
        notes = window.panel("notes")
        await _wait(lambda: notes.list.count() > 0, 30)  # type: ignore[attr-defined]
        notes.list.setCurrentRow(3)  # type: ignore[attr-defined]
        tensions = window.panel("tensions")
        tensions.mode.setCurrentIndex(0 if args.mode == "classic" else 2)  # type: ignore[attr-defined]
        window.show_panel("tensions")
        tensions.run_scan()  # type: ignore[attr-defined]
        await asyncio.sleep(0.3)
        window.grab().save(str(out / "00-scanning.png"))
        await _wait(lambda: not tensions.runner.running, 600)  # type: ignore[attr-defined]
        await asyncio.sleep(0.5)
        models = window.panel("models")
        models.measure()  # type: ignore[attr-defined]
        await _wait(lambda: models.speeds is not None, 120)  # type: ignore[attr-defined]
        for i in range(window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            await asyncio.sleep(0.3)
            name = window.tabs.tabText(i).lower().replace(" ", "-")
            window.grab().save(str(out / f"{i + 1:02d}-{name}.png"))
        window.errors.show_error("Example", "How a background failure is shown (non-modal).")
        await asyncio.sleep(0.2)
        window.errors.grab().save(str(out / "90-problems.png"))
        print("saved", sorted(p.name for p in out.glob("*.png")))

    try:
        with loop:
            loop.run_until_complete(run())
    finally:
        window.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())

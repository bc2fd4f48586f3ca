"""Open the app on a fresh copy of the sample vault (offscreen), run scans, save PNGs.

The Notes tree, the preview with its Related notes, a search, a scan in progress,
a second scan with the first one's results greyed, every tab, the stronger-model
dialog and the Problems window.

    python scripts/screenshots.py [--out /tmp/antinomy-shots] [--mode classic] [--size 1920x1080]

With ``--review N``: review at scale instead, at 1280×800 — a saved scan of N
pairs of the sample vault's own notes (no scan is run), a dismissal with its
Undo bar, a filter with every shown pair checked, the dismissal of them all,
and History in words. ``--dark`` takes them on a dark palette.

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


def dark_palette(app) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QColor, QPalette

    app.setStyle("Fusion")
    palette = QPalette()
    role = QPalette.ColorRole
    for which, color in (
        (role.Window, "#2b2b2b"), (role.WindowText, "#e0e0e0"), (role.Base, "#1e1e1e"),
        (role.AlternateBase, "#2b2b2b"), (role.Text, "#e0e0e0"), (role.Button, "#3a3a3a"),
        (role.ButtonText, "#e0e0e0"), (role.Highlight, "#3d7bd9"),
        (role.HighlightedText, "#ffffff"), (role.ToolTipBase, "#404040"),
        (role.ToolTipText, "#f0f0f0"), (role.Link, "#7fb0ff"), (role.Mid, "#555555"),
    ):  # fmt: skip
        palette.setColor(which, QColor(color))
    for which in (role.WindowText, role.Text, role.ButtonText):
        palette.setColor(QPalette.ColorGroup.Disabled, which, QColor("#7a7a7a"))
    app.setPalette(palette)


async def review_shots(window, vault: Path, out: Path, args) -> None:  # type: ignore[no-untyped-def]
    """Review at scale, at 1280×800: see the module docstring."""
    from inference.runtime import State
    from tests.ui.runs import save_run

    save_run(vault, args.review, first="Decisions/ADR-0011 Friday release window.md")
    window.resize(1280, 800)
    c = window.controller
    c.start(vault)
    await _wait(lambda: c.runtime.state in (State.READY, State.FAILED), 300)
    tensions = window.panel("tensions")
    window.show_panel("tensions")
    await _wait(lambda: len(tensions.cards) == args.review, 60)
    await asyncio.sleep(0.5)
    shade = "dark" if args.dark else "light"
    window.grab().save(str(out / f"r1-tensions-{shade}.png"))
    tensions.cards[0].dismiss_button.click()
    await _wait(lambda: window.undo_bar.isVisible(), 30)
    await asyncio.sleep(0.3)
    window.grab().save(str(out / f"r2-undo-bar-{shade}.png"))
    tensions.pairs.filter.setText("Decisions/")
    tensions.pairs.select_all.click()
    await asyncio.sleep(0.3)
    window.grab().save(str(out / f"r3-filter-checked-{shade}.png"))
    tensions.pairs.dismiss_checked.click()
    await _wait(lambda: not tensions.cards, 60)
    await asyncio.sleep(0.3)
    window.grab().save(str(out / f"r4-bulk-dismissed-{shade}.png"))
    window.show_panel("history")
    await asyncio.sleep(0.5)
    window.grab().save(str(out / f"r5-history-{shade}.png"))
    print("saved", sorted(p.name for p in out.glob("r*.png")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="/tmp/antinomy-shots")
    parser.add_argument("--mode", default="classic", choices=["classic", "whole-vault"])
    parser.add_argument("--cap", type=int, default=20, help="classic-mode note cap")
    parser.add_argument("--review", type=int, default=0, metavar="N", help="review N pairs")
    parser.add_argument("--dark", action="store_true", help="a dark palette")
    parser.add_argument("--size", default="1400x860", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.lower().split("x"))
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ["ANTINOMY_HOME"] = tempfile.mkdtemp(prefix="antinomy-shots-home-")

    import qasync
    from PySide6.QtWidgets import QApplication

    from desktop.resources import ensure_sample_vault
    from desktop.ui.app import build_window
    from desktop.ui.logview import install_log_handler
    from foundation.paths import data_dir
    from inference.runtime import State

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication([])
    if args.dark:
        dark_palette(app)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    window = build_window(loop=loop, log_handler=install_log_handler(), use_tray=False)
    window.resize(width, height)
    window.show()
    if args.review:
        vault = ensure_sample_vault(Path(tempfile.mkdtemp(prefix="antinomy-shots-vault-")))
        try:
            with loop:
                loop.run_until_complete(review_shots(window, vault, out, args))
        finally:
            window.shutdown()
        return 0
    vault = ensure_sample_vault(data_dir())

    async def run() -> None:
        c = window.controller
        from dataclasses import replace

        c.update_settings(replace(c.settings, scan=replace(c.settings.scan, cap=args.cap)))
        c.start(vault)
        await _wait(lambda: c.runtime.state in (State.READY, State.FAILED), 120)
        await _wait(lambda: c.index is not None and c.index.embedding is not None, 120)
        notes = window.panel("notes")
        await _wait(lambda: notes.list.count() > 0, 30)  # type: ignore[attr-defined]
        await asyncio.sleep(0.5)
        window.grab().save(str(out / "a1-notes-tree.png"))
        # The note in the preview, its related notes beside it.
        focus = "Tensions/Shipping speed vs weekend calm.md"
        if not (vault / focus).exists():
            focus = next(str(p.relative_to(vault)) for p in sorted(vault.glob("Tensions/*.md")))
        related = window.panel("related")
        c.sig_preview_requested.emit(focus)
        await _wait(lambda: related.list.count() > 0, 30)  # type: ignore[attr-defined]
        await asyncio.sleep(0.3)
        window.grab().save(str(out / "a2-preview-related.png"))
        # Search: ranked results with why each matched and the snippet.
        notes.search_box.setText("the friday release window")  # type: ignore[attr-defined]
        await _wait(lambda: "match" in notes.count.text(), 60)  # type: ignore[attr-defined]
        await asyncio.sleep(0.3)
        window.grab().save(str(out / "a3-search.png"))
        notes.search_box.clear()  # type: ignore[attr-defined]
        tensions = window.panel("tensions")
        tensions.mode.setCurrentIndex(tensions.mode.findData(args.mode))  # type: ignore[attr-defined]
        window.show_panel("tensions")
        tensions.run_scan()  # type: ignore[attr-defined]
        await asyncio.sleep(2.0)
        window.grab().save(str(out / "00-scanning.png"))
        await _wait(lambda: not tensions.runner.running, 900)  # type: ignore[attr-defined]
        await asyncio.sleep(0.5)
        # A second run: the first one's results stay, greyed and labelled as the previous run.
        tensions.run_scan()  # type: ignore[attr-defined]
        await asyncio.sleep(4.0)
        window.grab().save(str(out / "00b-rescanning-previous-greyed.png"))
        tensions.runner.stop()  # type: ignore[attr-defined]
        await asyncio.sleep(0.5)
        models = window.panel("models")
        models.measure()  # type: ignore[attr-defined]
        await _wait(lambda: models.speeds is not None, 120)  # type: ignore[attr-defined]
        for i in range(window.tabs.count()):
            window.tabs.setCurrentIndex(i)
            await asyncio.sleep(0.3)
            name = window.tabs.tabText(i).lower().replace(" ", "-")
            window.grab().save(str(out / f"{i + 1:02d}-{name}.png"))
        # Memory after a transcript import (the tab above shows it empty, with its hint).
        memory = window.panel("memory")
        window.show_panel("memory")
        transcript = (
            Path(__file__).resolve().parents[1] / "tests/data/memory/claude_transcript.jsonl"
        )
        memory.import_files([transcript])  # type: ignore[attr-defined]
        await _wait(lambda: memory.transcripts.report.isVisible(), 60)  # type: ignore[attr-defined]
        await asyncio.sleep(1.0)
        window.grab().save(str(out / "70-memory-imported.png"))
        from desktop.ui.dialogs.stronger_model import QtStrongerModelDialog

        dialog = QtStrongerModelDialog(c.settings, loop=c.loop, parent=window)
        dialog.show()
        await asyncio.sleep(0.3)
        dialog.grab().save(str(out / "80-stronger-model.png"))
        dialog.reject()
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

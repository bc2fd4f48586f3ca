"""How honest the progress's time left is during a whole-vault scan.

Runs a whole-vault scan of a copy of ``VAULT`` on the shipped models, feeds its
progress through :class:`~desktop.flows.progress.ProgressClock` exactly as the
window and the CLI do, and records at each update the time left shown and, once
the scan is over, the time that was really left (to the end of that phase, and
to the end of the scan). The judging phase is also fed to a second clock in note
pairs, as it was counted before it counted sentence pairs, so both estimates come from
the same run. Prints one JSON object: per phase, the shown estimates against the real
time left at several points.

Run: ``python tests/perf/measure_scan_eta.py /work/vaults/fastapi [--max-pairs 300]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from desktop.flows.embedding import load_embedding_model  # noqa: E402
from desktop.flows.hunter import scan  # noqa: E402
from desktop.flows.progress import ProgressClock  # noqa: E402
from desktop.flows.settings import resolve  # noqa: E402
from desktop.flows.settings.app import Settings  # noqa: E402
from desktop.vault.index import VaultIndex  # noqa: E402
from inference.engines import open_generator, open_judge  # noqa: E402

NOTE_PAIRS = re.compile(r"judging (\d+) of (\d+) note pairs")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("vault")
    ap.add_argument("--max-pairs", type=int, default=400)
    args = ap.parse_args()
    run_settings = resolve(saved=Settings())
    settings = replace(run_settings.scan, max_pairs=args.max_pairs)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(args.vault, root, ignore=shutil.ignore_patterns(".antinomy", ".git"))
        index = VaultIndex(root, embedding=load_embedding_model(run_settings.runtime))
        t0 = time.monotonic()
        index.update()
        index_s = time.monotonic() - t0
        judge = open_judge(run_settings.runtime)
        engine = open_generator(run_settings.runtime)
        clock = ProgressClock()
        # The same run counted in note pairs, as the judging phase counted before.
        by_notes = ProgressClock()
        samples: list[tuple[float, int, int, str, float | None, float | None]] = []

        def progress(done: int, total: int, what: str) -> None:
            counted = NOTE_PAIRS.search(what)
            old = None
            if counted:
                old = by_notes.eta(int(counted.group(1)), int(counted.group(2)))
            samples.append((time.monotonic(), done, total, what, clock.eta(done, total), old))

        start = time.monotonic()
        try:
            run = scan(
                index, engine, judge=judge, mode="whole-vault", settings=settings, progress=progress
            )
        finally:
            engine.close()
            judge.close()
            index.close()
        end = time.monotonic()
    # A phase as the clock sees it: consecutive updates with the same total.
    phases: list[list[tuple[float, int, int, str, float | None, float | None]]] = []
    for s in samples:
        if not phases or phases[-1][-1][2] != s[2] or s[1] < phases[-1][-1][1]:
            phases.append([])
        phases[-1].append(s)
    out = []
    for phase in phases:
        phase_end = phase[-1][0]
        with_eta = [s for s in phase if s[4] is not None]
        points = []
        if with_eta:
            step = max(1, len(with_eta) // 6)
            for s in with_eta[::step]:
                points.append(
                    {
                        "done": s[1],
                        "total": s[2],
                        "shown_s": round(s[4] or 0, 1),
                        "by_note_pairs_s": None if s[5] is None else round(s[5], 1),
                        "phase_left_s": round(phase_end - s[0], 1),
                        "scan_left_s": round(end - s[0], 1),
                    }
                )
        out.append(
            {
                "phase": re.sub(r"\d+", "#", phase[0][3])[:70],
                "total": phase[0][2],
                "updates": len(phase),
                "seconds": round(phase_end - phase[0][0], 1),
                "points": points,
            }
        )
    print(
        json.dumps(
            {
                "vault": args.vault,
                "max_pairs": args.max_pairs,
                "index_s": round(index_s, 1),
                "scan_s": round(end - start, 1),
                "note_pairs_judged": run.note_pairs_judged,
                "status": run.status,
                "phases": [p for p in out if p["total"] > 1],
                # Phases of one step (no fraction, so no time left is shown): where the rest
                # of the scan went.
                "single_steps": [
                    {"phase": p["phase"], "seconds": p["seconds"]}
                    for p in out
                    if p["total"] <= 1 and p["seconds"] >= 1
                ],
                "before_first_update_s": round(samples[0][0] - start, 1) if samples else None,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()

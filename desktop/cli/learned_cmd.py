"""``antinomy learned``: what the scan learned from your review decisions in this vault."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import asdict
from pathlib import Path

from desktop.cli import exits
from desktop.cli.common import UsageError, add_vault_option, set_handler, vault_path
from desktop.cli.output import print_json
from desktop.flows.hunter.labels import Label, LabelStore, Learned, summary_counts
from desktop.flows.review import reset_learning, unhide_frame

#: Decisions listed in the text output (``--json`` gives all).
SHOWN = 20

_WORDS = {
    "dismiss": "dismissed",
    "elevate": "elevated",
    "resolve": "resolved",
    "defeat": "defeated",
    "tension": "recorded as a tension",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "learned",
        help="what the scan learned from your decisions in this vault (and undo it)",
        description="Every dismissal is a pair the scan got wrong, every elevation, resolution "
        "or defeat one it got right: the scan fits this vault's own calibration to them (once "
        "there are enough) and hides frames you dismissed “all like this”. Kept in the vault's "
        ".antinomy/learned.json, never shared with another vault; rebuilt from the notes if "
        "that folder is deleted. Exit codes: 0 done, 2 no such vault or frame.",
    )
    add_vault_option(p)
    p.add_argument("--json", action="store_true", help="everything, as JSON")
    what = p.add_mutually_exclusive_group()
    what.add_argument(
        "--reset",
        action="store_true",
        help="back to the shipped calibration: your decisions so far are set aside (the notes "
        "keep them) and hidden frames are shown again",
    )
    what.add_argument(
        "--unhide-frame",
        metavar="N",
        help="show pairs like hidden frame N again (its number in this list)",
    )
    set_handler(p, run_learned)


def run_learned(args: argparse.Namespace) -> int:
    root = vault_path(args)
    if args.reset:
        decisions, frames = reset_learning(root)
        if args.json:
            print_json({"ok": True, "decisions_set_aside": decisions, "frames_shown": frames})
        else:
            print(
                f"Back to the shipped calibration: {decisions} decision(s) set aside, "
                f"{frames} hidden frame(s) shown again. The notes keep your dismissals."
            )
        return exits.OK
    if args.unhide_frame is not None:
        frame = unhide_frame(root, args.unhide_frame)
        if args.json:
            print_json({"ok": True, "frame": asdict(frame)})
        else:
            print(f"Pairs like “{frame.key}” are shown again (the pair's dismissal stays).")
        return exits.OK
    store = LabelStore(root)
    rebuilt = not store.exists()
    try:
        learned = store.read()
    except ValueError as exc:
        raise UsageError(
            f"{store.path} cannot be read ({exc}). The next scan keeps it aside and rebuilds "
            "the decisions from the notes; or start over with `antinomy learned --reset`."
        ) from None
    if args.json:
        print_json(
            learned.to_json()
            | {"vault": str(root), "rebuilt_from_notes": rebuilt, "active": len(learned.active())}
        )
        return exits.OK
    print_learned(root, learned, rebuilt=rebuilt)
    return exits.OK


def print_learned(root: Path, learned: Learned, *, rebuilt: bool) -> None:
    active = learned.active()
    vault = shlex.quote(str(root))
    if rebuilt:
        print(
            "Nothing kept in .antinomy/ yet: these decisions are read from the notes (the next "
            "scan keeps them, with the features it judges them on)."
        )
    if not active and not learned.frames:
        print("No decision to learn from yet: dismiss, elevate, resolve or defeat pairs a scan")
        print("shows, and the scan fits this vault's calibration to them.")
        return
    counts = summary_counts(active)
    parts = [f"{n} {_WORDS.get(a, a)}" for a, n in sorted(counts.items())]
    judged = sum(lab.features is not None for lab in active)
    print(f"{len(active)} decision(s) kept: {', '.join(parts) or 'none'}")
    print(
        f"  {judged} with the features a scan judged them on; {len(active) - judged} wait for one"
    )
    if learned.reset_at:
        print(f"  decisions before {learned.reset_at[:19]} were set aside by a reset")
    for judge, cal in learned.calibration.items():
        print(f"calibration for {judge} ({str(cal.get('at', ''))[:19]}): {_calibration(cal)}")
    if learned.frames:
        print(f"hidden frames ({len(learned.frames)}):")
        for i, f in enumerate(learned.frames, 1):
            print(f"  {i}. {f.key}")
            print(f"     from “{f.quote_a}” / “{f.quote_b}”")
        print(f"  show one again: antinomy learned --unhide-frame N --vault {vault}")
    print("decisions (newest first):")
    for lab in sorted(active, key=lambda lab: lab.at, reverse=True)[:SHOWN]:
        print(f"  {_line(lab)}")
    if len(active) > SHOWN:
        print(f"  … and {len(active) - SHOWN} more (--json lists all)")
    print(f"start over: antinomy learned --reset --vault {vault}")


def _calibration(cal: dict[str, object]) -> str:
    status = str(cal.get("status", ""))
    used = cal.get("used", 0)
    if status in ("vault", "held"):
        moved = cal.get("weights_moved") or {}
        weights = ", ".join(f"{k} {v:+.2f}" for k, v in dict(moved).items())  # type: ignore[call-overload]
        text = (
            f"this vault's, from {used} decisions — threshold {cal.get('threshold_shipped', 0):.2f}"
            f" → {cal.get('threshold_vault', 0):.2f}"
        )
        if weights:
            text += f"; weights moved: {weights}"
        if status == "held":
            text += f" ({cal.get('reason')})"
        return text
    if status == "too few":
        return f"the shipped one ({used} judged decisions; too few yet)"
    if status == "refused":
        return f"the shipped one (update refused: {cal.get('reason')})"
    return "the shipped one"


def _line(lab: Label) -> str:
    a = lab.a.rsplit("/", 1)[-1].removesuffix(".md")
    b = lab.b.rsplit("/", 1)[-1].removesuffix(".md")
    line = f"{_WORDS.get(lab.action, lab.action):<10} {a} ↔ {b}"
    if lab.features is None:
        line += "  (not judged yet)"
    if lab.source == "notes":
        line += "  (read from the notes)"
    if lab.overrode:
        line += f"  (replaces your earlier “{lab.overrode}”: the latest decision counts)"
    return line

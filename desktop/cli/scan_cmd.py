"""``antinomy scan``: the tension scan from the terminal."""

from __future__ import annotations

import argparse
import shlex
import sys
import textwrap
from pathlib import Path
from typing import TextIO
from urllib.parse import urlsplit

from desktop.cli import exits
from desktop.cli.common import (
    UsageError,
    add_embedder_backend_options,
    add_vault_option,
    open_index,
    require_positive,
    resolved,
    set_handler,
    vault_path,
)
from desktop.cli.output import ProgressLine, print_json, progress
from desktop.flows.hunter import DISCLAIMER, Mode, Pair, ScanRun, dropped_phrase, scan
from desktop.flows.hunter import write_debug_note as write_hunter_debug_note
from desktop.flows.hunter.opinion import OFF_MACHINE
from desktop.flows.hunter.records import HIDDEN_REASONS, load_last_run
from desktop.flows.judging import NOT_EVIDENCE_WORDS
from inference.base import Generator
from inference.engines import RuntimeSettings, open_generator, open_judge
from inference.http_backend import is_loopback_host
from inference.judge import Judge

_BADGE = {"high": "HIGH", "medium": "MED ", "low": "LOW "}

OPINION_OFF_MACHINE = "antinomy: note: " + OFF_MACHINE


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "scan",
        help="find pairs of notes that disagree (Hunter)",
        description="Find notes that disagree: the contradiction judge compares their "
        "sentences, each pair found gets a one-line description (from the local model, or from "
        "the quotes when the model is one that fails at it), and code verifies every pair "
        "(names, quotes, dismissals) before it is shown. Modes: classic (the newest open "
        "tensions and substrates, every pair of them; the model also proposes pairs, which the "
        "judge re-checks), --focus NOTE (that note and its nearest neighbours), --whole-vault "
        "(candidate pairs from the embedding index). Exit codes: 0 done (with or without "
        "pairs), 2 no such vault, or no --focus note of that name (or several), "
        "65 the model's answer was unusable twice (a debug note is written), 69 a "
        "model (LLM, embedder or judge) unavailable, 130 interrupted.",
    )
    add_vault_option(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--focus",
        metavar="NOTE",
        help="compare this note with its neighbours (a path, a basename, [[link]] or alias)",
    )
    mode.add_argument("--whole-vault", action="store_true", help="scan the whole vault")
    p.add_argument("--cap", type=int, help="classic mode: newest notes sent (default 20)")
    p.add_argument("--body-chars", type=int, help="characters of each body sent (default 800)")
    p.add_argument("--max-pairs", type=int, help="whole vault: candidate pairs judged (400)")
    p.add_argument(
        "--llm",
        "--model",
        dest="llm",
        metavar="GGUF",
        help="a GGUF language model of your own for the descriptions (default: as saved)",
    )
    p.add_argument("--judge", metavar="ONNX", help="another judge file instead of the shipped one")
    p.add_argument("--json", action="store_true", help="the run as JSON")
    p.add_argument(
        "--second-opinion",
        action="store_true",
        help="also ask your own OpenAI-compatible server (the saved backend http) whether each "
        "pair about to be shown contradicts, both ways round: one more input of the decision "
        "(off by default; the two quotes go to that server)",
    )
    p.add_argument(
        "--show-hidden",
        action="store_true",
        help="no new scan: show the last scan of this vault with the pairs your decisions "
        "hide (its calibration, or frames dismissed “all like this”) and why",
    )
    add_embedder_backend_options(p)
    set_handler(p, run_scan)


def _scan_flags(args: argparse.Namespace) -> dict[str, int | None]:
    """This command's scan flags, checked (None: the saved value)."""
    flags = {"cap": args.cap, "body_chars": args.body_chars, "max_pairs": args.max_pairs}
    for name, value in flags.items():
        require_positive(value, f"--{name.replace('_', '-')}")
    return flags


def _load_generator(runtime: RuntimeSettings) -> Generator:
    return open_generator(runtime)


def _load_judge(runtime: RuntimeSettings) -> Judge:
    return open_judge(runtime)


def run_scan(args: argparse.Namespace) -> int:
    if args.show_hidden:
        return show_hidden(args)
    mode: Mode = "whole-vault" if args.whole_vault else "focus" if args.focus else "classic"
    if args.cap is not None and mode != "classic":
        # Refused rather than silently ignored: the cap only picks a classic scan's notes.
        raise UsageError(
            f"--cap sets how many of the newest notes a classic scan compares; a {mode} scan "
            "does not use it"
            + (
                " (it compares the note with its nearest neighbours: set how many in the app's "
                "Settings ▸ Scan)."
                if mode == "focus"
                else " (--max-pairs bounds a whole-vault scan)."
            )
        )
    if args.max_pairs is not None and mode != "whole-vault":
        raise UsageError(f"--max-pairs bounds a whole-vault scan; a {mode} scan does not use it.")
    flags = {**_scan_flags(args), "second_opinion": True if args.second_opinion else None}
    run_settings = resolved(args, llm_path=args.llm, judge_path=args.judge, scan=flags)
    settings = run_settings.scan
    server = run_settings.runtime.http
    if settings.second_opinion:  # asked here, or saved in Settings
        if args.second_opinion and (run_settings.runtime.backend != "http" or server is None):
            raise UsageError(
                "--second-opinion asks your own OpenAI-compatible server, and the language "
                'model is the embedded one: save a server as the backend (`"backend": {"kind": '
                '"http", "base_url": "http://127.0.0.1:8080/v1"}` in settings.json, or the '
                "app's Settings), then scan again."
            )
        if server is not None and not is_loopback_host(urlsplit(server.base_url).hostname or ""):
            progress(OPINION_OFF_MACHINE.format(url=server.base_url))
    vault_path(args)  # a missing vault is exit 2 before any model loads
    judge = _load_judge(run_settings.runtime)  # then a missing judge stops here, exit 69
    index = open_index(args, embed=True, runtime=run_settings.runtime)
    bar = ProgressLine()
    try:
        index.update(progress=bar.update)
        focus = index.locate(args.focus) if args.focus else None
        progress("loading the language model…")
        engine = _load_generator(run_settings.runtime)
        try:
            run = scan(
                index,
                engine,
                judge=judge,
                mode=mode,
                focus=focus,
                settings=settings,
                progress=bar.update,
            )
        finally:
            bar.close()
            engine.close()
            judge.close()
        debug_note = None
        if run.status == "format_failure" or run.failed_batches:
            folder = run_settings.folders.debug
            debug_note = write_hunter_debug_note(index.root, run, folder=folder)
    finally:
        index.close()
    if args.json:
        print_json(run.to_json() | {"debug_note": debug_note, "vault": str(index.root)})
    else:
        print_run(run, debug_note=debug_note, vault=index.root)
    if run.status == "format_failure":
        return exits.DATA_ERROR
    if run.status == "stopped":
        return exits.INTERRUPTED
    if run.status == "error":
        return exits.FAILURE
    return exits.OK


def show_hidden(args: argparse.Namespace) -> int:
    """The last scan with its hidden pairs (no models loaded)."""
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("focus", "whole_vault", "cap", "body_chars", "max_pairs", "llm", "judge")
        if getattr(args, name)
    ]
    if given:
        raise UsageError(
            f"--show-hidden shows the last scan as it was and runs none: drop {', '.join(given)}."
        )
    root = vault_path(args)
    run = load_last_run(root)
    if run is None:
        raise UsageError(
            f"No completed scan of {root} is kept yet — run `antinomy scan` first (the hidden "
            "pairs are those a scan's learning hid)."
        )
    if args.json:
        print_json(run.to_json() | {"vault": str(root)})
    else:
        print_run(run, vault=root, hidden=True)
    return exits.OK


def print_learning(run: ScanRun, vault: Path | None, *, hidden: bool) -> None:
    """What the user's decisions changed, in one line (and where the hidden pairs are)."""
    report = run.learning
    if report.error:
        print(f"⚠ learning: {report.error}", file=sys.stdout)
    if not report.message:
        return
    line = f"learned from your decisions: {report.message}"
    if run.hidden and not hidden:
        command = ["antinomy", "scan", "--show-hidden"]
        if vault is not None:
            command += ["--vault", str(vault)]
        line += f" — show them: {shlex.join(command)}"
    print(line, file=sys.stdout)


def print_opinion(run: ScanRun) -> None:
    """What the user's server said, when it was asked (or why it was not)."""
    o = run.second_opinion
    if o.asked:
        where = " (not on this machine)" if o.leaves_machine else ""
        print(
            f"second opinion from {o.server}{where}: {o.asked} pairs asked both ways "
            f"({o.requests} requests, {o.seconds:.1f} s) — {o.yes} yes, {o.no} no, {o.split} "
            f"split, {o.unusable} unusable, {o.failed} failed; {o.hidden} hidden by its no",
            file=sys.stdout,
        )
    if o.error:
        print(f"⚠ second opinion: {o.error}", file=sys.stdout)


def print_pair(i: int, pair: Pair, out: TextIO) -> None:
    badge = _BADGE.get(pair.confidence, "MED ")
    mark = "*" if pair.confidence_defaulted else " "
    p = f" {pair.probability:.2f}" if pair.probability is not None else ""
    print(f"{i:>2}. [{badge}{p}]{mark} {pair.note_a}  ↔  {pair.note_b}", file=out)
    for line in textwrap.wrap(pair.description, 88):
        print(f"      {line}", file=out)
    print(f"      A: “{pair.quote_a}”", file=out)
    print(f"      B: “{pair.quote_b}”", file=out)
    if pair.second_opinion:
        print(f"      second opinion: {pair.second_opinion}", file=out)
    if pair.hidden_because:
        why = HIDDEN_REASONS.get(pair.hidden_because, pair.hidden_because)
        print(f"      hidden: {why}", file=out)


def print_run(
    run: ScanRun,
    *,
    debug_note: str | None = None,
    vault: Path | None = None,
    hidden: bool = False,
) -> None:
    out = sys.stdout
    print(run.summary(), file=out)
    if run.excluded:
        print(f"⚠ excluded {len(run.excluded)} notes:", file=out)
        for e in run.excluded[:10]:
            print(f"    {e.path}: {e.reason}", file=out)
        if len(run.excluded) > 10:
            print(f"    … and {len(run.excluded) - 10} more (--json lists all)", file=out)
    if run.judge:
        print(
            f"judge: {run.judge} · {run.sentence_pairs_judged} sentence pairs of "
            f"{run.note_pairs_judged} note pairs · "
            + (f"decided at note level ({run.decided_by}), " if run.decided_by else "")
            + f"threshold {run.threshold or 0:.2f}"
            + (
                f" · {run.sentence_pairs_left_out} more sentence pairs over the per-pair budget"
                if run.sentence_pairs_left_out
                else ""
            ),
            file=out,
        )
    print_learning(run, vault, hidden=hidden)
    print_opinion(run)
    if run.ignored.message:
        print(f"{run.ignored.message} (antinomy ignore list)", file=out)
    if run.ignored.error:
        print(f"⚠ ignore list: {run.ignored.error}", file=out)
    if run.not_evidence:
        parts = [f"{n} {NOT_EVIDENCE_WORDS.get(why, why)}" for why, n in run.not_evidence.items()]
        print("not read as claims: " + ", ".join(parts), file=out)
    if run.set_aside:
        parts = [f"{n} {why}" for why, n in run.set_aside.items()]
        print("sentence pairs set aside before the judge: " + ", ".join(parts), file=out)
    if run.notes_cut:
        names = ", ".join(n.rsplit("/", 1)[-1].removesuffix(".md") for n in run.notes_cut[:5])
        more = f" and {len(run.notes_cut) - 5} more" if len(run.notes_cut) > 5 else ""
        print(f"⚠ only the first sentences of very long notes were compared: {names}{more}")
    if run.dropped:
        parts = [dropped_phrase(r, n) for r, n in sorted(run.dropped.items())]
        print(f"not shown ({run.dropped_total}): " + "; ".join(parts), file=out)
    if run.status == "format_failure":
        print(f"✗ {run.error}", file=out)
    elif run.status == "error":
        print(f"✗ the scan failed: {run.error}", file=out)
    elif run.status == "stopped":
        print("■ stopped; these results are partial.", file=out)
    if run.failed_batches and run.status != "format_failure":
        print(f"⚠ {run.failed_batches} of {run.batches} batches had unusable answers.", file=out)
    if debug_note:
        print(f"raw answers kept in the debug note: {debug_note}", file=out)
    print("", file=out)
    if not run.pairs and run.status == "ok":
        print("No contradiction found in this run (that is not proof that none exist).", file=out)
    for i, pair in enumerate(run.pairs, 1):
        print_pair(i, pair, out)
    if hidden:
        print("", file=out)
        if not run.hidden:
            print("Your decisions hid no pair in this scan.", file=out)
        else:
            print(f"Hidden by what your decisions taught this vault ({len(run.hidden)}):", file=out)
        for i, pair in enumerate(run.hidden, len(run.pairs) + 1):
            print_pair(i, pair, out)
    if run.description_failures:
        print(
            f"  the model could not describe {run.description_failures} "
            f"pair{'s' if run.description_failures != 1 else ''}; a plain description is shown.",
            file=out,
        )
    if run.plain_descriptions_for and run.pairs:
        print(
            f"  descriptions are written from the quotes: {run.plain_descriptions_for} is not "
            "asked for them (measured to fail at it); a model chosen with --llm writes them.",
            file=out,
        )
    if any(p.confidence_defaulted for p in run.pairs):
        print("  * the model gave no confidence; shown as medium.", file=out)
    print("", file=out)
    print(DISCLAIMER, file=out)

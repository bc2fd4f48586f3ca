"""``antinomy capture import``, ``consolidate``, ``recall``,
``memory pending|rejected|quarantined|requeue``.

``consolidate`` exit codes (stable for scripts; unlike a zero exit that hides
failures, each outcome has its own):

====  =================  ==============================================
0     ok                 facts were written to subject pages
3     nothing            no pending input
4     empty              input consumed, no fact accepted (see rejected)
65    json_failure       the model's answer was unreadable; input stays pending
                       (the same statement failing again is quarantined)
75    already_running    another consolidation holds the lock
130   stopped            interrupted; finished steps are kept
====  =================  ==============================================
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from desktop.cli import exits
from desktop.cli.common import add_vault_option, require_query, set_handler, vault_path
from desktop.cli.output import print_json, progress
from desktop.flows.memory import (
    consolidate,
    import_transcript,
    pending_batches,
    quarantined_fragments,
    recall,
    rejected_fragments,
    requeue_fragment,
)
from desktop.flows.progress import ProgressClock, plural
from desktop.flows.settings import Overrides, resolve
from inference.engines import (
    LazyEmbedder,
    LazyGenerator,
    open_embedder,
    open_judge_or_none,
)

NOTHING = 3
EMPTY = 4
CONSOLIDATE_EXITS = {
    "ok": exits.OK,
    "nothing": NOTHING,
    "empty": EMPTY,
    "json_failure": exits.DATA_ERROR,
    "already_running": exits.TEMP_FAILURE,
    "stopped": exits.INTERRUPTED,
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("capture", help="capture conversations into memory")
    capture_sub = p.add_subparsers(dest="capture_command", metavar="ACTION", required=True)
    q = capture_sub.add_parser(
        "import",
        help="import a Claude Code transcript (.jsonl)",
        description="Capture the user and assistant turns of a Claude Code JSONL transcript "
        "(tool calls, tool results and subagent turns are skipped; secrets are masked). "
        "Exit codes: 0 imported, 65 not a transcript.",
    )
    add_vault_option(q)
    q.add_argument("file", help="the transcript file")
    q.add_argument("--json", action="store_true", help="machine-readable report")
    set_handler(q, run_import)

    p = sub.add_parser(
        "consolidate",
        help="turn pending conversation batches into cited subject pages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_vault_option(p)
    p.add_argument("--force", action="store_true", help="close today's open batch first")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--llm", metavar="GGUF", help="the model file (default: the shipped one)")
    p.add_argument(
        "--no-judge",
        action="store_true",
        help="check facts lexically only (the judge is used when it is installed)",
    )
    set_handler(p, run_consolidate)

    p = sub.add_parser(
        "recall",
        help="what memory holds about a query (subject summaries and cited facts)",
        description="Rank subject summaries and facts by meaning. Exit codes: 0 (even when "
        "nothing matches), 2 bad query or no such vault, 69 embedder unavailable.",
    )
    add_vault_option(p)
    p.add_argument("query", help="what to recall")
    p.add_argument("-k", type=int, default=5, help="how many facts (default 5)")
    p.add_argument("--json", action="store_true", help="machine-readable results")
    set_handler(p, run_recall)

    p = sub.add_parser(
        "memory", help="memory state: pending batches, rejected and quarantined fragments"
    )
    mem = p.add_subparsers(dest="memory_command", metavar="ACTION", required=True)
    q = mem.add_parser("pending", help="batches with lines not yet consolidated")
    add_vault_option(q)
    q.add_argument("--json", action="store_true", help="machine-readable list")
    set_handler(q, run_pending)
    q = mem.add_parser(
        "rejected",
        help="fragments the citation control rejected, with reasons; --requeue ID to retry one",
    )
    add_vault_option(q)
    q.add_argument("--requeue", metavar="ID", help="re-queue this fragment for the next run")
    q.add_argument("--json", action="store_true", help="machine-readable list")
    set_handler(q, run_rejected)
    q = mem.add_parser(
        "quarantined",
        help="statements set aside because the model's answer was unreadable in two runs",
        description="Each with its lines and the model's raw answers. Re-queue one with "
        "`antinomy memory requeue ID` (after changing the model, say).",
    )
    add_vault_option(q)
    q.add_argument("--json", action="store_true", help="machine-readable list")
    set_handler(q, run_quarantined)
    q = mem.add_parser(
        "requeue",
        help="put a rejected or quarantined fragment back in the queue of the next run",
        description="Exit codes: 0 re-queued, 1 no such fragment.",
    )
    add_vault_option(q)
    q.add_argument("fragment_id", metavar="ID", help="the fragment's id (r-…)")
    set_handler(q, run_requeue)


def run_import(args: argparse.Namespace) -> int:
    report = import_transcript(vault_path(args), args.file)
    if args.json:
        print_json(asdict(report))
        return exits.OK
    print(report.summary())
    if report.bad_records:
        print(f"  {plural(report.bad_records, 'unreadable line')} ignored", file=sys.stderr)
    return exits.OK


def run_consolidate(args: argparse.Namespace) -> int:
    root = vault_path(args)
    run_settings = resolve(Overrides(llm_path=args.llm))
    engine = LazyGenerator(run_settings.runtime)
    embedder = LazyEmbedder(run_settings.runtime)
    judge, _why = (
        open_judge_or_none(run_settings.runtime) if not args.no_judge else (None, "--no-judge")
    )
    clock = ProgressClock()  # the time left, from the steps' measured rate
    try:
        report = consolidate(
            root,
            engine,
            judge=judge,
            embedder=embedder,
            force=args.force,
            settings=run_settings.memory,
            progress=lambda done, total, what: progress(
                f"[{done}/{total}] {clock.line(done, total, what)}"
            ),
        )
    finally:
        engine.close()
        embedder.close()
        if judge is not None:
            judge.close()
    code = CONSOLIDATE_EXITS[report.status]
    if args.json:
        print_json(report.to_json())
        return code
    print(f"status: {report.status}" + (f" — {report.message}" if report.message else ""))
    if report.steps:
        counts = ", ".join(f"{n} {what}" for what, n in sorted(report.line_counts.items()))
        print(
            f"  {plural(report.lines_read, 'line')} read in {plural(report.steps, 'step')} "
            f"({counts}); {plural(report.candidates, 'candidate fact')}, "
            f"{len(report.accepted)} written, "
            f"{len(report.rejected)} rejected, {report.duplicates} already known, "
            f"{plural(report.lines_pending, 'line')} still pending ({report.seconds:.1f} s)"
        )
    for fact in report.accepted:
        print(f"  + {fact.subject} / {fact.section}: {fact.text} [{', '.join(fact.citations)}]")
        if fact.fallback_reason:
            print(f"      kept in the user's words: the rephrasing failed ({fact.fallback_reason})")
        if fact.subject_refused:
            print(f"      subject {fact.subject_refused!r} refused; filed under {fact.subject!r}")
    for frag in report.rejected:
        print(f"  - {frag.fragment_id} {frag.reason}: {frag.text!r} ({frag.detail})")
    if report.rejected:
        print("  re-queue one with: antinomy memory requeue ID")
    return code


def run_recall(args: argparse.Namespace) -> int:
    require_query(args.query)
    root = vault_path(args)
    run_settings = resolve()
    embedder = open_embedder(run_settings.runtime)
    try:
        result = recall(root, args.query, embedder=embedder, k=args.k, settings=run_settings.memory)
    finally:
        embedder.close()
    if args.json:
        print_json(asdict(result))
        return exits.OK
    if not result.subjects and not result.facts:
        if result.below_floor:
            print(
                f"nothing relevant: all {result.below_floor} items scored under the relevance "
                f"floor {result.floor:.2f}.",
                file=sys.stderr,
            )
        else:
            print("memory holds nothing yet (run `antinomy consolidate`).", file=sys.stderr)
        return exits.OK
    for hit in result.subjects:
        print(f"{hit.subject} ({hit.score:.2f}) — {hit.page}\n  {hit.text}")
    for hit in result.facts:
        when = f" ({hit.date})" if hit.date else ""
        print(f"- [{hit.subject}] {hit.text}{when}  {', '.join(hit.citations)}  ({hit.score:.2f})")
    return exits.OK


def run_pending(args: argparse.Namespace) -> int:
    batches = pending_batches(vault_path(args))
    if args.json:
        print_json([asdict(b) for b in batches])
        return exits.OK
    if not batches:
        print("no pending batches.")
    for b in batches:
        state = f"closed ({b.close_reason})" if b.closed else "open"
        print(
            f"{b.batch_id}: {b.pending_lines}/{b.lines} lines pending, "
            f"{b.withdrawn_lines} withdrawn, {state} — {b.path}"
        )
    return exits.OK


def run_requeue(args: argparse.Namespace) -> int:
    frag = requeue_fragment(vault_path(args), args.fragment_id)
    print(f"re-queued {frag.fragment_id}: the next `antinomy consolidate` reads its lines again")
    return exits.OK


def run_quarantined(args: argparse.Namespace) -> int:
    rows: list[dict[str, Any]] = [
        asdict(f) | {"state": state} for f, state in quarantined_fragments(vault_path(args))
    ]
    if args.json:
        print_json(rows)
        return exits.OK
    if not rows:
        print("no quarantined statements.")
    for row in rows:
        print(
            f"{row['fragment_id']} [{row['state']}] {row['text']!r} "
            f"(lines {', '.join(row['line_ids'])}; from {row['source']}; {row['detail']})"
        )
        for i, answer in enumerate(row["proposal"].get("answers", []), 1):
            print(f"    answer {i}: {' '.join(str(answer).split())[:200]!r}")
    if rows:
        print("re-queue one with: antinomy memory requeue ID")
    return exits.OK


def run_rejected(args: argparse.Namespace) -> int:
    vault = vault_path(args)
    if args.requeue:
        args.fragment_id = args.requeue
        return run_requeue(args)
    rows: list[dict[str, Any]] = [
        asdict(f) | {"state": state} for f, state in rejected_fragments(vault)
    ]
    if args.json:
        print_json(rows)
        return exits.OK
    if not rows:
        print("no rejected fragments.")
    for row in rows:
        print(
            f"{row['fragment_id']} [{row['state']}] {row['reason']}: {row['subject']} — "
            f"{row['text']!r} ({row['detail']}; from {row['source']})"
        )
    return exits.OK

"""``antinomy tx``: inspect, apply, recover, history and undo of vault transactions."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from desktop.cli import exits
from desktop.cli.common import add_vault_option, index_follower, set_handler, vault_path
from desktop.cli.output import print_json
from desktop.flows.review import undo_review
from desktop.vault.transactions import (
    ApplyResult,
    Preview,
    RecoveryReport,
    apply_plan,
    build_undo_plan,
    inspect_plan,
    list_history,
    read_plan_file,
    recover_vault,
)

EXIT_CODES = """\
exit codes:
  0   done (or nothing to do)
  1   another failure (the message names it)
  2   bad plan or arguments: not valid JSON, an unsafe path, a wrong approval hash,
      an operation id reused for different content, an unknown operation, no such vault
  75  the vault changed (a file is not what the plan expects; nothing was written),
      another Antinomy process is writing to it, or recovery left a file someone
      else changed — re-read the notes and try again
"""

PLAN_HELP = """\
PLAN.json:
  {"operation_id": "edit-1", "operation_type": "edit", "summary": "what it does",
   "writes": [
     {"action": "create", "path": "Notes/new.md", "expected_sha256": null, "content": "..."},
     {"action": "replace", "path": "Notes/a.md", "expected_sha256": "<sha256>", "content": ".."},
     {"action": "delete", "path": "Notes/old.md", "expected_sha256": "<sha256>"}]}
  Paths are relative to the vault; content is UTF-8 text (content_base64 for exact
  non-UTF-8 bytes). expected_sha256 is the sha256 of the file's bytes (`sha256sum`).
"""

Handler = Callable[[argparse.Namespace], int]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tx = sub.add_parser(
        "tx",
        help="vault transactions: inspect, apply, recover, history, undo",
        description=(
            "Every change to the vault is a plan: inspect it (diffs and an approval hash),"
            " apply it with that hash (all files or none; a file edited meanwhile refuses the"
            " whole plan), undo it later. An interrupted apply is rolled back by `tx recover`"
            " (or by the next apply)."
        ),
        epilog=EXIT_CODES + "\n" + PLAN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = tx.add_subparsers(dest="tx_action", metavar="ACTION")
    tx.set_defaults(handler=lambda _args: _usage(tx))

    p = _action(actions, "inspect", "preview a plan: per-file diffs, counts, the approval hash")
    p.add_argument("plan", metavar="PLAN.json", help="the plan file")
    set_handler(p, run_inspect)

    p = _action(actions, "apply", "apply an inspected plan (needs the approval hash)")
    p.add_argument("plan", metavar="PLAN.json", help="the plan file")
    p.add_argument("--approval", required=True, metavar="HASH", help="from `tx inspect`")
    set_handler(p, run_apply)

    p = _action(actions, "recover", "roll back an interrupted operation (safe to run any time)")
    set_handler(p, run_recover)

    p = _action(actions, "history", "list applied operations, newest first")
    p.add_argument("--limit", type=int, metavar="N", help="only the N newest")
    set_handler(p, run_history)

    p = _action(actions, "undo", "undo an applied operation (refused if a file changed since)")
    p.add_argument("operation", metavar="OP", help="operation id, from `tx history`")
    p.add_argument(
        "--dry-run", action="store_true", help="show what undo would write; write nothing"
    )
    set_handler(p, run_undo)


def _action(
    actions: argparse._SubParsersAction[argparse.ArgumentParser], name: str, text: str
) -> argparse.ArgumentParser:
    p = actions.add_parser(
        name,
        help=text,
        description=text[0].upper() + text[1:] + ".",
        epilog=EXIT_CODES + ("\n" + PLAN_HELP if name in ("inspect", "apply") else ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_vault_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    return p


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return exits.USAGE


# -- inspect ---------------------------------------------------------------------------------


def _show(args: argparse.Namespace, preview: Preview, stale_message: str) -> bool:
    """Print the preview; if files changed since the plan was made, say so. True if stale."""
    if args.json:
        print_json(_preview_json(preview))
    else:
        _print_preview(preview)
    if preview.stale:
        print(f"antinomy: {stale_message.format(files=', '.join(preview.stale))}", file=sys.stderr)
    return bool(preview.stale)


def run_inspect(args: argparse.Namespace) -> int:
    vault = str(vault_path(args))
    preview = inspect_plan(vault, read_plan_file(args.plan))
    if _show(
        args,
        preview,
        "The vault changed since this plan was made: {files}. apply would refuse it — "
        "re-read the notes, make a new plan and inspect it again.",
    ):
        return exits.TEMP_FAILURE
    if not args.json:
        command = shlex.join(["antinomy", "tx", "apply", args.plan, "--vault", vault, "--approval"])
        print(f"\nApproval: {preview.approval}\nApply with: {command} {preview.approval}")
    return exits.OK


def _preview_json(preview: Preview) -> dict[str, Any]:
    return {
        "ok": not preview.stale,
        "operation_id": preview.operation_id,
        "operation_type": preview.operation_type,
        "summary": preview.summary,
        "plan_sha256": preview.plan_sha256,
        "vault_id": preview.vault_id,
        "approval": preview.approval,
        "counts": {
            "create": preview.count("create"),
            "replace": preview.count("replace"),
            "delete": preview.count("delete"),
            "lines_added": preview.lines_added,
            "lines_removed": preview.lines_removed,
        },
        "stale": list(preview.stale),
        "files": [{**asdict(f), "stale": f.stale} for f in preview.files],
    }


def _print_preview(preview: Preview) -> None:
    print(f"Operation {preview.operation_id} ({preview.operation_type}): {preview.summary}")
    print(
        f"  {preview.count('create')} create, {preview.count('replace')} replace,"
        f" {preview.count('delete')} delete; +{preview.lines_added} −{preview.lines_removed}"
        " lines"
    )
    for f in preview.files:
        mark = "  ✗ changed since the plan was made" if f.stale else ""
        print(f"  {f.action:<8} {f.path}{mark}")
    for f in preview.files:
        print()
        sys.stdout.write(f.diff)


# -- apply, undo -----------------------------------------------------------------------------


def run_apply(args: argparse.Namespace) -> int:
    vault = str(vault_path(args))
    result = apply_plan(
        vault,
        read_plan_file(args.plan),
        approval=args.approval,
        on_change=index_follower(vault),
    )
    return _report_result(args, vault, result)


def run_undo(args: argparse.Namespace) -> int:
    vault = str(vault_path(args))
    if args.dry_run:
        preview = inspect_plan(vault, build_undo_plan(vault, args.operation))
        stale = _show(
            args,
            preview,
            f"Cannot undo {args.operation}: {{files}} changed after it was applied, and undo "
            "never overwrites a later edit.",
        )
        return exits.TEMP_FAILURE if stale else exits.OK
    result, shown = undo_review(vault, args.operation, on_change=index_follower(vault))
    code = _report_result(args, vault, result, frames_shown_again=len(shown))
    if shown and not args.json:
        print(f"Pairs like it are shown again ({len(shown)} hidden with “all like this”).")
    return code


def _report_result(
    args: argparse.Namespace, vault: str, result: ApplyResult, **extra: object
) -> int:
    for report in result.recovered:
        print(f"antinomy: {report.message}", file=sys.stderr)
    if args.json:
        print_json({"ok": True, **asdict(result), "paths": list(result.paths), **extra})
        return exits.OK
    if result.replayed:
        print(f"Already applied at {result.applied_at}; nothing written (stored result):")
    else:
        print(f"Applied {result.operation_id} ({result.operation_type}): {result.summary}")
    for c in result.changes:
        print(f"  {c.action:<8} {c.path}")
    history = list_history(vault) if result.replayed else ()
    undone_by = next((h.undone_by for h in history if h.operation_id == result.operation_id), None)
    if undone_by:
        print(f"It was undone since by {undone_by}; to bring it back:")
        print("  " + shlex.join(["antinomy", "tx", "undo", undone_by, "--vault", vault]))
    elif not result.replayed:
        undo = shlex.join(["antinomy", "tx", "undo", result.operation_id, "--vault", vault])
        print(f"Undo with: {undo}")
    return exits.OK


# -- recover, history ------------------------------------------------------------------------


def run_recover(args: argparse.Namespace) -> int:
    vault = str(vault_path(args))
    reports = recover_vault(vault, on_change=index_follower(vault))
    conflicts = any(r.conflicts for r in reports)
    if args.json:
        print_json({"ok": not conflicts, "recovered": [_report_json(r) for r in reports]})
    elif not reports:
        print("Nothing to recover: no operation was interrupted.")
    else:
        for r in reports:
            print(r.message)
    return exits.TEMP_FAILURE if conflicts else exits.OK


def _report_json(report: RecoveryReport) -> dict[str, Any]:
    return {**asdict(report), "message": report.message}


def run_history(args: argparse.Namespace) -> int:
    entries = list_history(vault_path(args))
    if args.limit is not None:
        entries = entries[: max(args.limit, 0)]
    if args.json:
        print_json({"operations": [{**asdict(e), "paths": list(e.paths)} for e in entries]})
        return exits.OK
    if not entries:
        print("No operations yet.")
    for e in entries:
        state = f"  (undone by {e.undone_by})" if e.undone_by else ""
        print(f"{e.applied_at}  {e.operation_id}  {e.operation_type}{state}")
        print(f"    {e.summary}")
        for c in e.changes:
            print(f"    {c.action:<8} {c.path}")
    return exits.OK

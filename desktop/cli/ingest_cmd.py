"""``antinomy ingest FILE``: a source document becomes cited pages through a previewed plan.

Exit codes (stable for scripts):

====  ==================================================================
0     applied (``--yes`` or ``--approve HASH``), previewed, or already ingested
1     another failure (the message names it)
65    the source was refused (scanned or encrypted PDF, navigation-only HTML,
      too large, not text), or the plan was rejected — its saved path is printed
69    the model is unavailable
75    the vault changed since planning (nothing was written), or it is busy
130   stopped
====  ==================================================================
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import asdict
from typing import Any

from desktop.cli import exits
from desktop.cli.common import add_vault_option, index_follower, set_handler, vault_path
from desktop.cli.output import print_json, progress
from desktop.flows.ingest import (
    IngestReport,
    IngestSettings,
    apply_ingest,
    apply_pending,
    plan_ingest,
    read_source,
    save_pending,
)
from desktop.flows.settings import Overrides, resolve
from desktop.vault.index import VaultIndex
from desktop.vault.transactions import ApplyResult
from foundation.errors import ModelUnavailable
from inference.engines import LazyGenerator, RuntimeSettings, open_judge
from inference.judge import Judge

STATUS_EXITS = {
    "planned": exits.OK,
    "already_ingested": exits.OK,
    "rejected": exits.DATA_ERROR,
    "stopped": exits.INTERRUPTED,
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ingest",
        help="turn a Markdown, text, HTML or PDF file into cited pages (previewed, then approved)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_vault_option(p)
    p.add_argument("file", help="the source document")
    approve = p.add_mutually_exclusive_group()
    approve.add_argument("--yes", action="store_true", help="apply the plan without asking")
    approve.add_argument(
        "--approve", metavar="HASH", help="apply the plan previewed before (its approval hash)"
    )
    p.add_argument("--json", action="store_true", help="the whole report as JSON on stdout")
    p.add_argument("--llm", metavar="GGUF", help="a GGUF model of your own (default: as saved)")
    p.add_argument("--no-judge", action="store_true", help="do not check contradictions")
    set_handler(p, run_ingest)


def load_judge(runtime: RuntimeSettings) -> Judge | None:
    """The judge, or None when its model file is not there (the report says so)."""
    try:
        return open_judge(runtime)
    except ModelUnavailable as exc:
        progress(f"judge unavailable ({exc}); contradictions will not be checked")
        return None


def run_ingest(args: argparse.Namespace) -> int:
    vault = vault_path(args)
    if args.approve:
        source = read_source(args.file)
        result = apply_pending(
            vault, source.sha256, approval=args.approve, on_change=index_follower(str(vault))
        )
        return _applied(args, result, None)
    index = VaultIndex(vault)
    run_settings = resolve(Overrides(llm_path=args.llm))
    engine = LazyGenerator(run_settings.runtime)
    judge = None if args.no_judge else load_judge(run_settings.runtime)
    try:
        progress("indexing: bringing the vault index up to date")
        index.update()
        folders = run_settings.folders
        report = plan_ingest(
            vault,
            args.file,
            engine=engine,
            judge=judge,
            index=index,
            settings=IngestSettings(sources_folder=folders.sources, pages_folder=folders.subjects),
            progress=lambda phase, detail: progress(f"{phase}: {detail}"),
        )
    finally:
        engine.close()
        index.close()
        if judge is not None:
            judge.close()
    code = STATUS_EXITS[report.status]
    if report.status != "planned" or report.preview is None:
        if args.json:
            print_json(report.to_json() | {"exit_code": code})
        else:
            print(f"status: {report.status} — {report.message}")
            if report.rejected_path:
                print(f"rejected plan saved: {report.rejected_path}")
                for error in report.errors_after_repair or report.errors_first:
                    print(f"  - {error}")
        return code
    if args.yes:
        result = apply_ingest(
            vault, report, approval=report.preview.approval, on_change=index_follower(str(vault))
        )
        return _applied(args, result, report)
    save_pending(vault, report)
    if args.json:
        print_json(report.to_json() | {"applied": False, "exit_code": exits.OK})
        return exits.OK
    _print_report(report)
    command = shlex.join(["antinomy", "ingest", args.file, "--vault", str(vault), "--approve"])
    print(f"\nApproval: {report.preview.approval}\nApply with: {command} {report.preview.approval}")
    print("(or run again with --yes)")
    return exits.OK


def _print_report(report: IngestReport) -> None:
    assert report.preview is not None
    s = report.source
    print(
        f"{s.title} ({s.kind}, {s.words_kept} words"
        + (f", {s.boilerplate_removed:.0%} boilerplate removed" if s.kind == "html" else "")
        + f") — {report.message}"
    )
    if report.context is not None:
        c = report.context
        print(
            f"  context: {c.sentences_sent} of {c.sentences_total} sentences, "
            f"{len(c.pages_sent)} related page(s) shown, {len(c.pages_judged)} read-only for the "
            f"judge, {c.prompt_tokens}/{c.context_window} tokens"
        )
        for left in c.left_out:
            print(f"  left out: {left.name} ({left.why})")
    if report.errors_first:
        print(f"  repaired {len(report.errors_first)} problem(s) of the first answer")
    for page in report.pages:
        print(f"  {page.action:<8} {page.path}  ({page.claims} claims, {page.citations} citations)")
    print(f"  judge: {report.judge}")
    for t in report.contradictions:
        print(
            f"  ! {t.page}: {t.existing_claim!r} vs {t.new_claim!r} "
            f"({t.severity}, P={t.probability:.2f}, {t.found_by})"
        )
    for d in report.dropped_contradictions:
        print(f"  dropped contradiction ({d.reason}): {d.detail}")
    for claim in report.dropped_claims:
        print(f"  dropped claim ({claim.reason}) for {claim.page}: {claim.claim[:100]!r} — "
              f"{claim.detail}")  # fmt: skip
    for f in report.preview.files:
        print()
        sys.stdout.write(f.diff)


def _applied(args: argparse.Namespace, result: ApplyResult, report: IngestReport | None) -> int:
    if args.json:
        data: dict[str, Any] = report.to_json() if report is not None else {}
        print_json(data | {"applied": True, "result": asdict(result), "exit_code": exits.OK})
        return exits.OK
    if report is not None:
        _print_report(report)
        print()
    print(
        f"applied {result.operation_id}: {len(result.changes)} file(s) written — "
        f"undo with: antinomy tx undo {result.operation_id}"
    )
    return exits.OK

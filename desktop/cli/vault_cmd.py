"""``antinomy index`` and ``antinomy search``."""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict
from typing import Any

from desktop.cli import exits
from desktop.cli.common import (
    add_embedder_backend_options,
    add_vault_option,
    open_index,
    rename_offer,
    require_positive,
    require_query,
    set_handler,
)
from desktop.cli.output import ProgressLine, print_json, progress
from desktop.vault.index import IndexReport
from desktop.vault.search import search


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "index",
        help="index the vault (incremental): notes, links, full text, vectors, coverage",
        description="Index the vault. Only files that changed are read again. Exit codes: "
        "0 indexed (skipped files are listed, not errors), 1 failure, 69 embedder unavailable.",
    )
    add_vault_option(p)
    p.add_argument("--rebuild", action="store_true", help="forget the index and start over")
    p.add_argument("--no-embed", action="store_true", help="skip vectors (full text only)")
    p.add_argument("--full-check", action="store_true", help="re-hash every file")
    p.add_argument("--json", action="store_true", help="machine-readable report")
    add_embedder_backend_options(p)
    set_handler(p, run_index)

    p = sub.add_parser(
        "search",
        help="search the vault by words and by meaning",
        description="Search notes: full text (BM25) and semantic similarity, fused by rank.",
    )
    add_vault_option(p)
    p.add_argument("query", help="what to look for")
    p.add_argument("-k", type=int, default=10, help="how many results (default 10)")
    p.add_argument("--type", action="append", dest="types", help="only notes of this type")
    p.add_argument("--status", action="append", dest="statuses", help="only this status")
    p.add_argument("--no-embed", action="store_true", help="full text only (no model load)")
    p.add_argument("--json", action="store_true", help="machine-readable results")
    add_embedder_backend_options(p)
    set_handler(p, run_search)


def report_dict(report: IndexReport) -> dict[str, Any]:
    data = asdict(report)
    data["summary"] = report.summary()
    return data


def run_index(args: argparse.Namespace) -> int:
    index = open_index(args, embed=not args.no_embed)
    bar = ProgressLine()
    try:
        if args.rebuild:
            report = index.rebuild(progress=bar.update, full_check=True)
        else:
            report = index.update(progress=bar.update, full_check=args.full_check)
    finally:
        bar.close()
        index.close()
    offer = rename_offer(index.root, report.renamed)
    if args.json:
        print_json(report_dict(report) | {"vault": str(index.root), "rename_offer": offer or None})
        return exits.OK
    print(report.summary())
    changed = len(report.added) + len(report.updated) + len(report.removed)
    print(
        f"  {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {report.embedded} embedded in {report.seconds:.2f} s"
        if changed or report.embedded
        else f"  nothing changed ({report.seconds:.2f} s)"
    )
    for old, new in report.renamed:
        print(f"  renamed: {old} → {new}")
    if offer:
        print(offer)
    for entry in report.skipped:
        print(f"  skipped {entry.path}: {entry.detail}")
    for entry in report.warnings:
        print(f"  warning {entry.path}: {entry.detail}")
    return exits.OK


def run_search(args: argparse.Namespace) -> int:
    query = require_query(args.query)
    require_positive(args.k, "-k")
    index = open_index(args, embed=not args.no_embed)
    try:
        report = index.update()  # cheap when nothing changed; never search a stale index
        if report.added or report.updated or report.removed:
            progress(report.summary())
        hits = search(index, query, args.k, types=args.types, statuses=args.statuses)
    finally:
        index.close()
    if args.json:
        print_json(
            [
                {
                    "path": h.note.path,
                    "title": h.note.title,
                    "type": h.note.type,
                    "status": h.note.status,
                    "score": round(h.score, 5),
                    "text_rank": h.text_rank,
                    "semantic_rank": h.semantic_rank,
                    "similarity": None if h.similarity is None else round(h.similarity, 4),
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        )
        return exits.OK
    if not hits:
        print("no matching notes.", file=sys.stderr)
        return exits.OK
    for i, hit in enumerate(hits, 1):
        kind = f" [{hit.note.type}{'/' + hit.note.status if hit.note.status else ''}]"
        print(f"{i:>2}. {hit.note.title}{kind if hit.note.type else ''}  — {hit.note.path}")
        if hit.snippet:
            print(f"    {hit.snippet.replace(chr(10), ' ')}")
    return exits.OK

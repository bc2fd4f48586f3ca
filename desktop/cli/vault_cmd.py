"""``antinomy index`` and ``antinomy search``."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from desktop.cli import exits
from desktop.cli.output import ProgressLine, print_json, progress
from desktop.flows.embedding import load_embedding_model
from desktop.resources import ensure_sample_vault
from desktop.vault.index import IndexReport, VaultIndex
from desktop.vault.search import search
from inference.paths import data_dir


def add_vault_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--vault",
        metavar="DIR",
        default=os.environ.get("ANTINOMY_VAULT"),
        help="the vault folder (default: $ANTINOMY_VAULT, else a copy of the sample vault)",
    )


def vault_path(args: argparse.Namespace) -> Path:
    if args.vault:
        return Path(args.vault)
    path = ensure_sample_vault(data_dir())
    progress(f"using the sample vault at {path} (give --vault DIR for your own)")
    return path


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
    p.set_defaults(handler=run_index)

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
    p.set_defaults(handler=run_search)


def open_index(args: argparse.Namespace, *, embed: bool) -> VaultIndex:
    embedding = load_embedding_model() if embed else None
    index = VaultIndex(vault_path(args), embedding=embedding)
    if index.rebuilt_because:
        progress(f"note: {index.rebuilt_because}.")
    return index


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
    # Imported here: review_cmd builds on this module's --vault option.
    from desktop.cli.review_cmd import rename_offer

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
    index = open_index(args, embed=not args.no_embed)
    try:
        report = index.update()  # cheap when nothing changed; never search a stale index
        if report.added or report.updated or report.removed:
            progress(report.summary())
        hits = search(index, args.query, args.k, types=args.types, statuses=args.statuses)
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

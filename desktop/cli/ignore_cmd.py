"""``antinomy ignore``: sentences, notes and folders every scan of this vault leaves out."""

from __future__ import annotations

import argparse
import shlex
from dataclasses import asdict

from desktop.cli import exits
from desktop.cli.common import add_vault_option, set_handler, vault_path
from desktop.cli.output import print_json
from desktop.flows.hunter.ignored import IgnoredItem
from desktop.flows.review import (
    ignore_folder,
    ignore_note,
    ignore_sentence,
    list_ignored,
    remove_ignored,
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ignore",
        help="sentences, notes and folders the scan leaves out in this vault",
        description="Leave a sentence (in every note it occurs in), a note or a folder out of "
        "every scan of this vault: a template line that keeps pairing up, an archive folder. "
        "Each scan says what it left out. Kept in the vault's .antinomy/ignored.json; the notes "
        "are not changed. Exit codes: 0 done, 2 bad input or no such vault, note, folder or "
        "item.",
    )
    what = p.add_subparsers(dest="ignore_what", metavar="WHAT", required=True)
    sentence = what.add_parser("sentence", help="ignore a sentence in every note")
    sentence.add_argument("text", help="the sentence, as the scan showed it")
    sentence.add_argument("--note", help="the note it was shown in (kept to say where from)")
    note = what.add_parser("note", help="never compare a note")
    note.add_argument("name", help="the note: a path in the vault or an unambiguous basename")
    folder = what.add_parser("folder", help="never compare the notes of a folder")
    folder.add_argument("path", help="the folder, from the vault's top (its subfolders too)")
    listed = what.add_parser("list", help="what is ignored, numbered")
    remove = what.add_parser("remove", help="take one item off the list")
    remove.add_argument(
        "item", help="its number in `antinomy ignore list`, or kind:value (note:Old/Plan.md)"
    )
    for parser in (sentence, note, folder, listed, remove):
        add_vault_option(parser)
        parser.add_argument("--json", action="store_true", help="the result as JSON")
        set_handler(parser, run_ignore)


def describe(item: IgnoredItem) -> str:
    if item.kind == "sentence":
        where = f" (from {item.note})" if item.note else ""
        return f"sentence “{item.value}”{where}"
    return f"{item.kind} {item.value}"


def run_ignore(args: argparse.Namespace) -> int:
    root = vault_path(args)
    what = args.ignore_what
    if what == "list":
        items = list_ignored(root)
        if args.json:
            print_json({"vault": str(root), "items": [asdict(i) for i in items]})
        elif not items:
            print("Nothing is ignored in this vault: every scan compares every note it picks.")
        else:
            for i, item in enumerate(items, 1):
                print(f"{i:>2}. {describe(item)}")
            print(f"take one back: antinomy ignore remove N --vault {shlex.quote(str(root))}")
        return exits.OK
    if what == "remove":
        gone = remove_ignored(root, args.item)
        if args.json:
            print_json({"ok": True, "removed": asdict(gone)})
        else:
            print(f"No longer ignored: {describe(gone)}. The next scan compares it again.")
        return exits.OK
    if what == "sentence":
        item, added = ignore_sentence(root, args.text, note=args.note)
    elif what == "note":
        item, added = ignore_note(root, args.name)
    else:
        item, added = ignore_folder(root, args.path)
    if args.json:
        print_json({"ok": True, "added": added, "item": asdict(item)})
    elif added:
        print(f"Ignored: {describe(item)}. Every scan of this vault leaves it out from now on.")
    else:
        print(f"Already ignored: {describe(item)}.")
    return exits.OK

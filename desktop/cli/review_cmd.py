"""``antinomy dismiss|undismiss|dismissed|elevate|resolve|defeat``: the review actions.

Each action is one transaction; its operation id is printed for
``antinomy tx undo``. Notes are named by path (relative to the vault) or by an
unambiguous basename.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shlex
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from desktop.cli import exits
from desktop.cli.common import add_vault_option, index_follower, set_handler, vault_path
from desktop.cli.output import print_json
from desktop.flows.hunter.dismissals import STORE_PATH
from desktop.flows.hunter.records import Pair, load_last_run, save_last_run
from desktop.flows.review import (
    DEFAULT_PRINCIPLES_FOLDER,
    KEEP_IN,
    AmbiguousNote,
    BadInput,
    KeepIn,
    NoteNotFound,
    ReviewResult,
    defeat_note,
    dismiss_like,
    dismiss_pair,
    elevate_tension,
    fix_renames,
    list_dismissed,
    resolve_tension,
    undismiss_pair,
)
from desktop.flows.review.vaultfiles import VaultFiles
from desktop.flows.settings import resolve, resolve_review, save_review_settings

EXIT_CODES = """\
exit codes:
  0   done (or already so: nothing written)
  2   bad arguments: no such note, a name shared by several notes (give the path),
      an empty title, motive or clause, no such vault
  65  the note does not allow this action: not an open tension, a type that cannot
      be defeated, a principle title already taken, a frontmatter Antinomy cannot
      edit safely
  75  the note changed on disk meanwhile, or another Antinomy process is writing —
      nothing was written; look again and retry
  1   another failure (the message names it)
"""

NOTE_HELP = "a note: its path relative to the vault, or its basename if no other note has it"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = _command(sub, "dismiss", "mark a pair as not a tension: the Hunter stops showing it")
    p.add_argument("a", metavar="A", help=NOTE_HELP)
    p.add_argument("b", metavar="B", help="the other note of the pair")
    p.add_argument(
        "--all-like-this",
        action="store_true",
        help="also hide, in every scan of this vault, each pair whose two sentences have the "
        "frame of this pair's quotes (each note's own names and the numbers masked); the "
        "quotes are the last scan's (`antinomy learned` lists hidden frames and takes "
        "them back)",
    )
    _expect_option(p, pair=True)
    set_handler(p, run_dismiss)

    p = _command(sub, "undismiss", "take a dismissal back: the Hunter may show the pair again")
    p.add_argument("a", metavar="A", help=NOTE_HELP)
    p.add_argument("b", metavar="B", help="the other note (a deleted note's old name works)")
    _expect_option(p, pair=True)
    set_handler(p, run_undismiss)

    p = _command(
        sub,
        "dismissed",
        "list the dismissed pairs (fix them after renames; choose where new ones are kept)",
    )
    p.add_argument(
        "--keep-in",
        choices=KEEP_IN,
        help="save this vault's choice of where new dismissals are written: notes (each "
        "note's hunter_false_positives, the default, read by Antinomia too) or antinomy "
        "(.antinomy/dismissed.json: the notes are not touched, for a vault under git or "
        "sync). Both places are always read",
    )
    p.add_argument(
        "--fix-renames",
        action="store_true",
        help="where a note was renamed, write its new name in its peers' dismissals",
    )
    p.add_argument(
        "--rename",
        nargs=2,
        action="append",
        metavar=("OLD", "NEW"),
        help="with --fix-renames: a rename to fix (old path or name, new path); by default "
        "renames are inferred from the notes",
    )
    set_handler(p, run_dismissed)

    p = _command(sub, "elevate", "turn an open tension into a principle (IF … THEN …)")
    p.add_argument("tension", metavar="TENSION", help=NOTE_HELP)
    p.add_argument("--title", required=True, help="the principle's title (its note name)")
    p.add_argument("--if", dest="if_clause", required=True, metavar="CLAUSE", help="IF clause")
    p.add_argument("--then", dest="then_clause", required=True, metavar="CLAUSE", help="THEN")
    p.add_argument("--grey", dest="grey_zone", default="", metavar="TEXT", help="grey zone")
    p.add_argument(
        "--folder",
        help="where the principle note goes (default: the Principles folder in Settings, "
        f"else {DEFAULT_PRINCIPLES_FOLDER})",
    )
    _expect_option(p, pair=False)
    set_handler(p, run_elevate)

    p = _command(sub, "resolve", "mark an open tension resolved (status: resolved)")
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    _expect_option(p, pair=False)
    set_handler(p, run_resolve)

    p = _command(sub, "defeat", "mark a tension, substrate or principle defeated, with a motive")
    p.add_argument("note", metavar="NOTE", help=NOTE_HELP)
    p.add_argument("--motive", required=True, help="why it no longer stands")
    p.add_argument("--replaced-by", metavar="NOTE", help="the note that replaces it")
    _expect_option(p, pair=False)
    set_handler(p, run_defeat)


def _expect_option(p: argparse.ArgumentParser, *, pair: bool) -> None:
    p.add_argument(
        "--expect-sha",
        nargs=2 if pair else 1,
        metavar=("SHA_A", "SHA_B") if pair else "SHA",
        help="the sha256 of the note(s) as you saw them; a note changed since is refused "
        "(exit 75). Default: the hashes the last scan recorded for this pair or note",
    )


def seen_hashes(
    root: Path, names: Sequence[str], expected: Sequence[str] | None
) -> dict[str, str] | None:
    """path → sha256 the user saw: ``--expect-sha``, else what the last scan recorded.

    The scan showed each pair with the hashes of the bytes it read (``Pair.sha_a``);
    an action on those notes must apply to those bytes, not to an edit made since.
    None when nothing says what was seen (the action then applies to the notes as
    they are now).
    """
    files = VaultFiles(root)
    paths: list[str | None] = []
    for name in names:
        try:
            paths.append(files.locate(name))
        except (NoteNotFound, AmbiguousNote):
            paths.append(None)  # the action reports it with its own message
    if expected is not None:
        for sha in expected:
            if not re.fullmatch(r"[0-9a-fA-F]{64}", sha):
                raise BadInput(
                    f"--expect-sha {sha!r} is not a sha256 (64 hex digits) — copy it from "
                    "`antinomy scan --json` (sha_a, sha_b) or `sha256sum`."
                )
        return {p: sha.lower() for p, sha in zip(paths, expected, strict=True) if p is not None}
    run = load_last_run(root)
    if run is None:
        return None
    wanted = {p for p in paths if p is not None}
    seen: dict[str, str] = {}
    for pair in (*run.pairs, *run.hidden):
        shas = {pair.path_a: pair.sha_a, pair.path_b: pair.sha_b}
        if len(names) == 2 and set(shas) != wanted:
            continue
        seen.update({p: sha for p, sha in shas.items() if p in wanted and sha})
    return seen or None


def remember_written(root: Path, result: ReviewResult) -> None:
    """After our own write, the last scan's hashes of those notes are the new bytes:
    a second action on a note this command just changed is not "changed since shown"."""
    run = load_last_run(root)
    if run is None or not result.changed:
        return
    now: dict[str, str] = {}
    for path in result.changed:
        try:
            now[path] = hashlib.sha256((root / path).read_bytes()).hexdigest()
        except OSError:
            continue

    def fresh(pairs: tuple[Pair, ...]) -> tuple[Pair, ...]:
        return tuple(
            replace(
                pair,
                sha_a=now.get(pair.path_a, pair.sha_a),
                sha_b=now.get(pair.path_b, pair.sha_b),
            )
            for pair in pairs
        )

    pairs, hidden = fresh(run.pairs), fresh(run.hidden)
    if pairs != run.pairs or hidden != run.hidden:
        save_last_run(root, replace(run, pairs=pairs, hidden=hidden))


def _command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, text: str
) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name,
        help=text,
        description=text[0].upper() + text[1:] + ". One transaction; undo it with "
        "`antinomy tx undo OP`.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_vault_option(p)
    p.add_argument("--json", action="store_true", help="machine-readable output on stdout")
    return p


def _done(args: argparse.Namespace, root: Path, result: ReviewResult) -> int:
    if result.operation_id is not None:
        remember_written(root, result)
    undo = (
        shlex.join(["antinomy", "tx", "undo", result.operation_id, "--vault", str(root)])
        if result.operation_id
        else None
    )
    if args.json:
        print_json({"ok": True, **asdict(result), "undo": undo})
        return exits.OK
    if result.operation_id is None:
        print(f"Nothing to write: the notes already say so ({result.summary}).")
        if result.learned:
            print(f"Learning: {result.learned}.")
        return exits.OK
    print(f"{result.summary}\nOperation {result.operation_id}")
    for path in result.changed:
        print(f"  changed  {path}")
    for path in result.created:
        print(f"  created  {path}")
    if result.learned:
        print(f"Learning: {result.learned}.")
    print(f"Undo with: {undo}")
    return exits.OK


def run_dismiss(args: argparse.Namespace) -> int:
    root = vault_path(args)
    keep_in = resolve_review(root).keep_dismissals
    seen = seen_hashes(root, [args.a, args.b], args.expect_sha)
    if args.all_like_this:
        quote_a, quote_b = _last_quotes(root, args.a, args.b)
        result, _ = dismiss_like(
            root,
            args.a,
            args.b,
            quote_a=quote_a,
            quote_b=quote_b,
            seen=seen,
            on_change=index_follower(root),
            keep_in=keep_in,
        )
        return _done(args, root, result)
    result = dismiss_pair(
        root, args.a, args.b, seen=seen, on_change=index_follower(root), keep_in=keep_in
    )
    return _done(args, root, result)


def _last_quotes(root: Path, a: str, b: str) -> tuple[str, str]:
    """The quotes the last scan showed for the pair ``a``–``b``, in that order."""
    files = VaultFiles(root)
    path_a, path_b = files.locate(a), files.locate(b)
    run = load_last_run(root)
    for pair in (*run.pairs, *run.hidden) if run is not None else ():
        if (pair.path_a, pair.path_b) == (path_a, path_b):
            return pair.quote_a, pair.quote_b
        if (pair.path_a, pair.path_b) == (path_b, path_a):
            return pair.quote_b, pair.quote_a
    raise BadInput(
        f"The last scan of this vault did not show {path_a} ↔ {path_b}: “all like this” "
        "hides the frame of the two sentences a scan showed — scan, then dismiss it again."
    )


def run_undismiss(args: argparse.Namespace) -> int:
    root = vault_path(args)
    seen = seen_hashes(root, [args.a, args.b], args.expect_sha)
    result = undismiss_pair(root, args.a, args.b, seen=seen, on_change=index_follower(root))
    return _done(args, root, result)


def run_elevate(args: argparse.Namespace) -> int:
    root = vault_path(args)
    result = elevate_tension(
        root,
        args.tension,
        title=args.title,
        if_clause=args.if_clause,
        then_clause=args.then_clause,
        grey_zone=args.grey_zone,
        folder=args.folder or resolve().folders.principles,
        seen=seen_hashes(root, [args.tension], args.expect_sha),
        on_change=index_follower(root),
    )
    return _done(args, root, result)


def run_resolve(args: argparse.Namespace) -> int:
    root = vault_path(args)
    seen = seen_hashes(root, [args.note], args.expect_sha)
    return _done(
        args, root, resolve_tension(root, args.note, seen=seen, on_change=index_follower(root))
    )


def run_defeat(args: argparse.Namespace) -> int:
    root = vault_path(args)
    result = defeat_note(
        root,
        args.note,
        motive=args.motive,
        replaced_by=args.replaced_by,
        seen=seen_hashes(root, [args.note], args.expect_sha),
        on_change=index_follower(root),
    )
    return _done(args, root, result)


def run_dismissed(args: argparse.Namespace) -> int:
    root = vault_path(args)
    if args.rename and not args.fix_renames:
        raise BadInput("--rename goes with --fix-renames.")
    if args.keep_in is not None:
        if args.fix_renames:
            raise BadInput("--keep-in is a setting of its own: give it without --fix-renames.")
        return _set_keep_in(args, root, args.keep_in)
    if args.fix_renames:
        renamed = [(old, new) for old, new in args.rename] if args.rename else None
        result, fixes = fix_renames(root, renamed, on_change=index_follower(root))
        if args.json:
            print_json({"ok": True, **asdict(result), "fixes": [asdict(f) for f in fixes]})
            return exits.OK
        if not fixes:
            print("No dismissal names a renamed note by its old name; nothing to fix.")
            return exits.OK
        for fix in fixes:
            print(f"{fix.old} → {fix.new}: fixed in {', '.join(fix.notes)}")
        return _done(args, root, result)
    pairs = list_dismissed(root)
    keep_in = resolve_review(root).keep_dismissals
    if args.json:
        print_json({"pairs": [asdict(p) for p in pairs], "keep_dismissals": keep_in})
        return exits.OK
    if not pairs:
        print("No dismissed pairs.")
    for pair in pairs:
        notes = []
        if pair.missing:
            notes.append(f"no note named {', '.join(pair.missing)}")
        if pair.ambiguous:
            notes.append(f"several notes named {', '.join(pair.ambiguous)}")
        if not pair.reciprocal:
            notes.append("listed in one note only")
        if "antinomy" in pair.kept_in:
            notes.append("kept in .antinomy/")
        flag = f"  ({'; '.join(notes)})" if notes else ""
        print(f"{pair.a} ↔ {pair.b}{flag}")
    if any(p.missing for p in pairs):
        command = shlex.join(["antinomy", "dismissed", "--fix-renames", "--vault", str(root)])
        print(f"A note was renamed or deleted? {command} keeps its dismissals.")
    if keep_in == "antinomy":
        print(f"New dismissals are kept in {STORE_PATH}; the notes are not touched.")
    return exits.OK


def _set_keep_in(args: argparse.Namespace, root: Path, keep_in: KeepIn) -> int:
    """Save where this vault's new dismissals are written (read back through resolve_review)."""
    path = save_review_settings(root, replace(resolve_review(root), keep_dismissals=keep_in))
    where = (
        "each note's hunter_false_positives"
        if keep_in == "notes"
        else f"{STORE_PATH} (the notes are not touched)"
    )
    if args.json:
        print_json({"ok": True, "keep_dismissals": keep_in, "settings": str(path)})
        return exits.OK
    print(f"New dismissals in {root} are kept in {where}.")
    print("Dismissals already made stay where they are, and both places are read.")
    return exits.OK

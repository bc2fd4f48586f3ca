"""``antinomy`` — the command line. Subcommands are headless; errors are one clear line.

Every :class:`~foundation.errors.AntinomyError` becomes its message on stderr
and a stable exit code (:data:`desktop.cli.common.EXIT_CODES`), never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence

import foundation
from desktop.cli import (
    exits,
    hooks_cmd,
    ignore_cmd,
    ingest_cmd,
    learned_cmd,
    memory_cmd,
    models_cmd,
    review_cmd,
    scan_cmd,
    serve_cmd,
    tx_cmd,
    vault_cmd,
)
from desktop.cli.common import report_error
from foundation.errors import AntinomyError

Handler = Callable[[argparse.Namespace], int]

#: Each module has ``register(subparsers)``, which adds its subcommands and sets
#: ``handler`` (a function of the parsed arguments returning an exit code).
COMMANDS = [
    models_cmd,
    vault_cmd,
    scan_cmd,
    review_cmd,
    learned_cmd,
    ignore_cmd,
    tx_cmd,
    serve_cmd,
    hooks_cmd,
    memory_cmd,
    ingest_cmd,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="antinomy",
        description="Antinomy: finds tensions between the notes of a Markdown vault, offline.",
    )
    parser.add_argument("--version", action="version", version=f"antinomy {foundation.__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    for module in COMMANDS:
        module.register(sub)
    _no_abbreviations(parser)
    return parser


def _no_abbreviations(parser: argparse.ArgumentParser) -> None:
    """Options must be spelled out: argparse would otherwise take ``--mode whole-vault``
    for ``--model whole-vault`` and fail on a model file of that name."""
    parser.allow_abbrev = False
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in set(action.choices.values()):
                _no_abbreviations(child)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return exits.OK
    try:
        return handler(args)
    except AntinomyError as exc:  # handlers report their own; this catches the rest
        return report_error(args, exc)
    except KeyboardInterrupt:
        print("antinomy: stopped.", file=sys.stderr)
        return exits.INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())

"""What every subcommand shares: the ``--vault`` option, opening the index, following
writes, and turning an error into its message and exit code.

Subcommand modules (``*_cmd.py``) import this module, never each other
(an import-linter ``independence`` contract checks it).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from desktop.cli import exits
from desktop.cli.output import print_json, progress
from desktop.flows.embedding import load_embedding_model
from desktop.flows.hunter.dismissals import STORE_PATH
from desktop.flows.ingest.errors import NoPendingPlan, SourceRefused
from desktop.flows.memory.errors import ConsolidationBusy, RecallInvalid, TranscriptInvalid
from desktop.flows.review import RenameFix, find_rename_fixes
from desktop.flows.review.errors import BadInput, ReviewRefused
from desktop.flows.settings import (
    EmbedderBackendSettings,
    Overrides,
    Resolved,
    load_settings,
    resolve,
)
from desktop.resources import ensure_sample_vault
from desktop.vault.errors import (
    AmbiguousNote,
    NoteNotFound,
    VaultBusy,
    VaultChanged,
    VaultNotFound,
)
from desktop.vault.index import VaultIndex
from desktop.vault.layout import STATE_DIR, vault_root
from desktop.vault.transactions import PlanInvalid
from foundation.errors import AntinomyError, ModelUnavailable
from foundation.paths import data_dir
from inference.runtime import RuntimeSettings
from inference.structured import FormatFailure

Handler = Callable[[argparse.Namespace], int]


class UsageError(AntinomyError):
    """A command-line value that cannot be used as given (an empty query, a bad count)."""


#: Error class → exit code. An error takes the code of the first class of its MRO
#: found here, so a subclass listed here overrides its parent (NoteNotFound is a
#: usage error although the vault layer raises it).
EXIT_CODES: dict[type[BaseException], int] = {
    # Bad arguments: the user names something that is not there, or twice.
    UsageError: exits.USAGE,
    VaultNotFound: exits.USAGE,
    NoteNotFound: exits.USAGE,
    AmbiguousNote: exits.USAGE,
    BadInput: exits.USAGE,
    PlanInvalid: exits.USAGE,
    RecallInvalid: exits.USAGE,
    # The data does not allow it: a note, a source file or a model answer.
    ReviewRefused: exits.DATA_ERROR,
    SourceRefused: exits.DATA_ERROR,
    TranscriptInvalid: exits.DATA_ERROR,
    FormatFailure: exits.DATA_ERROR,
    # Trying again may work.
    VaultChanged: exits.TEMP_FAILURE,
    VaultBusy: exits.TEMP_FAILURE,
    ConsolidationBusy: exits.TEMP_FAILURE,
    ModelUnavailable: exits.UNAVAILABLE,
    NoPendingPlan: exits.FAILURE,
    AntinomyError: exits.FAILURE,
}


def exit_code_for(exc: BaseException) -> int:
    """The exit code of an error (``FAILURE`` for one this table does not know)."""
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return exits.FAILURE


def report_error(args: argparse.Namespace, exc: AntinomyError) -> int:
    """One line on stderr (and, with ``--json``, a record on stdout); returns the exit code."""
    code = exit_code_for(exc)
    if getattr(args, "json", False):
        record: dict[str, Any] = {
            "ok": False,
            "error": str(exc),
            "error_type": type(exc).__name__,
            "paths": list(getattr(exc, "paths", ())),
            "candidates": list(getattr(exc, "candidates", ())),
            "exit_code": code,
        }
        reason = getattr(exc, "reason", None)
        if reason is not None:
            record["reason"] = reason
        print_json(record)
    print(f"antinomy: {exc}", file=sys.stderr)
    return code


def guarded(handler: Handler) -> Handler:
    """``handler`` with every Antinomy error reported by :func:`report_error`."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except AntinomyError as exc:
            return report_error(args, exc)

    run.__name__ = getattr(handler, "__name__", "run")
    run.__doc__ = handler.__doc__
    return run


def set_handler(parser: argparse.ArgumentParser, handler: Handler) -> None:
    """The subcommand's handler, its errors mapped to exit codes like every other's."""
    parser.set_defaults(handler=guarded(handler))


def require_query(query: str) -> str:
    """The query, stripped; ``UsageError`` when it is empty (checked before a model loads)."""
    text = query.strip()
    if not text:
        raise UsageError("The query is empty — give a few words to look for.")
    return text


def require_positive(value: int | None, option: str) -> None:
    """``UsageError`` unless ``value`` (when given) is at least 1."""
    if value is not None and value < 1:
        raise UsageError(f"{option} must be at least 1 (got {value}).")


# ---------------------------------------------------------------- the vault


# ---------------------------------------------------------------- where embeddings come from

OFF_MACHINE = (
    "antinomy: note: the embedding server {url} is not on this machine — every note "
    "indexed or searched is sent to it."
)


def add_embedder_backend_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "embeddings (default: the saved settings, else the bundled ONNX embedder)"
    )
    group.add_argument(
        "--embedder-backend",
        choices=["embedded", "http"],
        help="compute embeddings in-process, or on an OpenAI-compatible /v1/embeddings server",
    )
    group.add_argument(
        "--embedder-url",
        metavar="URL",
        help="the embedding server's base URL, e.g. http://127.0.0.1:8080/v1 (implies http)",
    )
    group.add_argument("--embedder-model", metavar="ID", help="model id to ask the server for")
    group.add_argument("--embedder-api-key", metavar="KEY", help="API key for that server")


def embedder_choice(args: argparse.Namespace) -> EmbedderBackendSettings:
    """The saved choice, then this command's flags on top; checked."""
    saved = load_settings().embedder_backend
    backend = getattr(args, "embedder_backend", None)
    url = getattr(args, "embedder_url", None)
    kind = backend or ("http" if url else saved.kind)
    if kind == "embedded":
        return EmbedderBackendSettings()
    base_url = url or saved.base_url
    if not base_url:
        raise UsageError(
            "--embedder-backend http needs --embedder-url (e.g. http://127.0.0.1:8080/v1)."
        )
    model = getattr(args, "embedder_model", None)
    key = getattr(args, "embedder_api_key", None)
    return EmbedderBackendSettings(
        kind="http",
        base_url=base_url,
        model=saved.model if model is None else model,
        api_key=key or saved.api_key,
    )


def embedder_override(args: argparse.Namespace) -> EmbedderBackendSettings:
    """Where to embed (:func:`embedder_choice`); warns when the server is remote."""
    choice = embedder_choice(args)
    if choice.leaves_machine:
        print(OFF_MACHINE.format(url=choice.base_url), file=sys.stderr)
    return choice


def resolved(args: argparse.Namespace, **overrides: Any) -> Resolved:
    """The saved settings with this command's embedder flags (and ``overrides``) on top:
    what the window would use, so both record the same models and folders."""
    return resolve(Overrides(embedder_backend=embedder_override(args), **overrides))


def add_vault_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--vault",
        metavar="DIR",
        default=os.environ.get("ANTINOMY_VAULT"),
        help="the vault folder (default: $ANTINOMY_VAULT, else a copy of the sample vault)",
    )


def vault_path(args: argparse.Namespace) -> Path:
    """The vault the command works on, resolved; ``VaultNotFound`` if it is not a folder."""
    if args.vault:
        return vault_root(args.vault)
    path = ensure_sample_vault(data_dir())
    progress(f"using the sample vault at {path} (give --vault DIR for your own)")
    args.vault = str(path)  # said once, even when the command asks again
    return path


def open_index(
    args: argparse.Namespace, *, embed: bool, runtime: RuntimeSettings | None = None
) -> VaultIndex:
    """The vault's index, with the embedder when ``embed`` (``ModelUnavailable`` if absent):
    the one ``runtime`` names (default: the resolved settings, :func:`resolved`)."""
    root = vault_path(args)
    embedding = None
    if embed:
        embedding = load_embedding_model(runtime=runtime or resolved(args).runtime)
    index = VaultIndex(root, embedding=embedding)
    if index.rebuilt_because:
        progress(f"note: {index.rebuilt_because}.")
    return index


def index_follower(vault: str | os.PathLike[str]) -> Callable[[Sequence[str]], None]:
    """After a write, re-index the touched notes — if the vault has an index at all.

    Without the embedder (a CLI call should not load a model): the notes' text,
    links and coverage follow at once; their vectors on the next ``antinomy index``.
    """

    def follow(paths: Sequence[str]) -> None:
        root = Path(vault)
        if not (root / STATE_DIR / "index.db").exists():
            return
        index = VaultIndex(root)
        try:
            index.update_paths(paths)
        finally:
            index.close()

    return follow


def rename_offer(root: Path, renamed: Sequence[tuple[str, str]]) -> str:
    """After indexing: a line offering to fix dismissals left by renames ('' if none)."""
    if not renamed:
        return ""
    try:
        fixes: list[RenameFix] = find_rename_fixes(root, renamed)
    except AntinomyError:
        return ""
    if not fixes:
        return ""
    command = ["antinomy", "dismissed", "--fix-renames", "--vault", str(root)]
    for fix in fixes:
        command += ["--rename", fix.old, fix.new_path]
    count = sum(len(f.notes) for f in fixes if f.notes != (STORE_PATH,))
    who = [f"{count} note(s)"] if count else []
    if any(f.notes == (STORE_PATH,) for f in fixes):
        who.append(STORE_PATH)
    return (
        f"  {' and '.join(who)} still dismiss a pair by a renamed note's old name; to keep "
        f"those dismissals: {shlex.join(command)}"
    )

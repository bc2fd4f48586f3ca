"""Which pairs the user dismissed: the one rule every reader of a dismissal follows.

A dismissal lives in one of two places, and every reader (the scan's filter, the window,
the Dismissed list, the learning labels) reads both, so switching where new dismissals go
loses none:

- the notes' own ``hunter_false_positives`` (Antinomia's key): each note lists the other.
  An entry names a note by basename (``Roadmap``, ``[[Roadmap]]``), or — when several notes
  share that basename — by its path without ``.md`` (``manual/api/index``; ``/index`` for a
  note at the top of the vault). A name-only entry keeps meaning every note of that name,
  as it always did;
- the vault's ``.antinomy/dismissed.json``, for a vault whose notes Antinomy should not
  touch: pairs of paths, written by the same journaled transactions as the notes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from desktop.vault.errors import StateUnsafe, VaultError
from desktop.vault.layout import DISMISSALS_FILE, NOFOLLOW, link_refusal
from desktop.vault.notes import frontmatter_strings

#: Antinomia's key: the notes a pair with which was dismissed.
FALSE_POSITIVES = "hunter_false_positives"
#: The vault-relative path of the dismissals kept outside the notes.
STORE_PATH = DISMISSALS_FILE
STORE_FORMAT = "antinomy-dismissed/1"


class DismissalsUnreadable(VaultError):
    """``.antinomy/dismissed.json`` is not a dismissal list Antinomy wrote."""


def dismissal_target(entry: object) -> str:
    """An entry as it is compared: ``[[X|alias]]``, ``X.md`` and case differences all name
    X; a folder in it is kept (``manual/api/index``), a leading ``/`` too."""
    text = str(entry).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    text = text.replace("\\", "/")
    if text.lower().endswith(".md"):
        text = text[:-3]
    return text.strip().casefold()


def dismissal_targets(value: object) -> frozenset[str]:
    """A note's ``hunter_false_positives`` value as targets (empty ones dropped)."""
    return frozenset(t for e in frontmatter_strings(value) if (t := dismissal_target(e)))


def names_note(targets: Iterable[str], path: str) -> bool:
    """Whether one of ``targets`` names the note at ``path``: a bare name its basename, a
    name with a folder the end of its path, a name starting with ``/`` its whole path."""
    full = path[:-3] if path.lower().endswith(".md") else path
    full = full.casefold()
    base = full.rsplit("/", 1)[-1]
    for target in targets:
        if target.startswith("/"):
            if target[1:] == full:
                return True
        elif "/" in target:
            if full == target or full.endswith("/" + target):
                return True
        elif target == base:
            return True
    return False


def entry_for(path: str, paths: Iterable[str]) -> str:
    """What a dismissal writes in a peer's list to name ``path``: its basename, or — when
    another of ``paths`` has that basename — its path (``/`` first at the top of the vault)."""
    name = PurePosixPath(path).name
    base = name[:-3] if name.lower().endswith(".md") else name
    shared = any(
        p != path and dismissal_target(PurePosixPath(p).name) == base.casefold() for p in paths
    )
    if not shared:
        return base
    stem = path[:-3] if path.lower().endswith(".md") else path
    return stem if "/" in stem else "/" + stem


def path_target(path: str) -> str:
    """The target naming exactly the note at ``path``."""
    return "/" + dismissal_target(path)


# ------------------------------------------------------------------ .antinomy/dismissed.json


@dataclass(frozen=True)
class StoredPair:
    """One dismissal kept in ``.antinomy/dismissed.json``: two vault-relative paths, sorted."""

    a: str
    b: str
    at: str = ""


def store_text(pairs: Iterable[StoredPair]) -> str:
    """The file's text: pairs sorted, one stable form (an unchanged list writes no bytes)."""
    ordered = sorted({(p.a, p.b): p for p in pairs}.values(), key=lambda p: (p.a, p.b))
    data = {"format": STORE_FORMAT, "pairs": [{"a": p.a, "b": p.b, "at": p.at} for p in ordered]}
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def parse_store(text: str, *, where: str) -> list[StoredPair]:
    """The pairs of the file's ``text``; :class:`DismissalsUnreadable` naming ``where``."""
    fix = (
        "Nothing was changed — restore it (`antinomy tx list` shows the operation that wrote "
        "it last; `antinomy tx undo OP` takes that back) or remove the file, then try again."
    )
    try:
        data: Any = json.loads(text)
    except ValueError as exc:
        raise DismissalsUnreadable(f"{where} is not JSON ({exc}). {fix}") from None
    if not isinstance(data, dict) or data.get("format") != STORE_FORMAT:
        raise DismissalsUnreadable(f"{where} is not an {STORE_FORMAT} file. {fix}")
    raw = data.get("pairs")
    if not isinstance(raw, list):
        raise DismissalsUnreadable(f"{where}: 'pairs' is not a list. {fix}")
    pairs: list[StoredPair] = []
    for n, item in enumerate(raw, 1):
        a = item.get("a") if isinstance(item, dict) else None
        b = item.get("b") if isinstance(item, dict) else None
        at = item.get("at", "") if isinstance(item, dict) else ""
        if not isinstance(a, str) or not isinstance(b, str) or not a or not b or a == b:
            raise DismissalsUnreadable(
                f"{where}: pair {n} is not two different note paths ({item!r}). {fix}"
            )
        first, second = sorted((a, b))
        pairs.append(StoredPair(first, second, at if isinstance(at, str) else ""))
    return pairs


def read_store_bytes(root: Path) -> bytes | None:
    """The bytes of the vault's ``.antinomy/dismissed.json`` (None: no file). Never read
    through a link (a copied vault can carry one)."""
    path = root / STORE_PATH
    if path.parent.is_symlink():
        raise StateUnsafe(link_refusal(path.parent))
    try:
        fd = os.open(path, os.O_RDONLY | NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if path.is_symlink():
            raise StateUnsafe(link_refusal(path)) from None
        raise DismissalsUnreadable(
            f"{path} cannot be read ({exc.strerror or exc}) — check the file's permissions."
        ) from None
    with os.fdopen(fd, "rb") as f:
        return f.read()


def read_store(root: Path) -> list[StoredPair]:
    """The dismissals kept in the vault's ``.antinomy/dismissed.json`` (none: no file)."""
    data = read_store_bytes(root)
    return [] if data is None else parse_store_bytes(data, where=str(root / STORE_PATH))


def parse_store_bytes(data: bytes, *, where: str) -> list[StoredPair]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise DismissalsUnreadable(f"{where} is not UTF-8 text — restore or remove it.") from None
    return parse_store(text, where=where)


def stored_peers(pairs: Iterable[StoredPair]) -> dict[str, frozenset[str]]:
    """path → the :func:`path_target` of every note the file pairs it with."""
    peers: dict[str, set[str]] = {}
    for p in pairs:
        peers.setdefault(p.a, set()).add(path_target(p.b))
        peers.setdefault(p.b, set()).add(path_target(p.a))
    return {path: frozenset(targets) for path, targets in peers.items()}


def dismisses(a: str, targets_a: Iterable[str], b: str, targets_b: Iterable[str]) -> bool:
    """Whether notes ``a`` and ``b``, with the targets each dismisses (their list and the
    file's pairs), dismiss each other — whichever way round."""
    return names_note(targets_a, b) or names_note(targets_b, a)


def targets_of(
    path: str, frontmatter: Mapping[str, Any], stored: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """Everything that dismisses a pair with ``path``: its own list and the file's pairs."""
    return dismissal_targets(frontmatter.get(FALSE_POSITIVES)) | stored.get(path, frozenset())

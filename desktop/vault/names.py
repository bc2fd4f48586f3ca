"""The one way a note named by the user becomes a vault path.

Every command and the GUI resolve a name the user typed (``Roadmap``,
``[[Roadmap]]``, ``Projects/Roadmap.md``, an absolute path, an alias) with
:func:`resolve_note_name`, so a name that works for one action works for all.
Link targets written inside notes follow Obsidian's rule instead
(:meth:`desktop.vault.index.VaultIndex.resolve`: no aliases).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from desktop.vault.errors import AmbiguousNote, NoteNotFound

#: alias (as written) → the paths of the notes that declare it; asked for lazily.
AliasSource = Callable[[], Mapping[str, Sequence[str]]]


#: Separators in a title that no file name may hold (Windows forbids ``:`` ``/`` ``\\``
#: ``|``; ``/`` is a folder everywhere): written as a dash.
_SEPARATORS = re.compile(r"\s*[:/\\|]+\s*")
#: Characters Windows forbids in a file name (``? * " < >``) and characters that break an
#: Obsidian link to the note (``# ^ [ ]``, control characters): dropped.
_DROPPED = re.compile(r"[?*\"<>#^\[\]\x00-\x1f\x7f]+")
#: Names Windows keeps for devices, whatever the extension.
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{p}{n}" for p in ("com", "lpt") for n in range(1, 10)]
)


def note_file_name(title: str, *, max_chars: int = 80) -> str:
    """``title`` as a note's file name (without ``.md``), valid on Windows, macOS and Linux
    and as an Obsidian link target; "" when no character of it can be kept.

    The title itself keeps its characters (a page's heading and frontmatter hold it as
    written): "Tutorial: First Steps" is the file ``Tutorial - First Steps.md``,
    "What is uv?" is ``What is uv.md``, "TCP/IP" is ``TCP-IP.md``.
    """
    name = _SEPARATORS.sub(lambda m: " - " if m.group().strip() != m.group() else "-", title)
    name = " ".join(_DROPPED.sub(" ", name).split())
    # Windows drops a trailing dot or space; a leading dot hides the file.
    name = name[:max_chars].strip(" .-–—")
    if name.split(".")[0].casefold() in _RESERVED:
        name = f"{name} note"
    return name


def basename_of(path: str) -> str:
    name = PurePosixPath(path).name
    return name[:-3] if name.lower().endswith(".md") else name


def name_key(name: str) -> str:
    """How basenames and aliases are compared: case-insensitively, as links resolve."""
    return name.strip().casefold()


def strip_wikilink(text: str) -> str:
    """``[[Target#Heading|Shown]]`` → ``Target``; any other text unchanged."""
    text = text.strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0].split("#", 1)[0].strip()
    return text


def by_basename(paths: Iterable[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for rel in paths:
        found[name_key(basename_of(rel))].append(rel)
    return found


def resolve_note_name(
    name: str,
    *,
    root: Path,
    paths: Sequence[str],
    named: Mapping[str, Sequence[str]] | None = None,
    aliases: AliasSource | None = None,
) -> str:
    """The vault-relative path of the note the user means by ``name``.

    Tried in order: a path (exact, then ignoring case; ``.md`` optional), a
    basename (ignoring case), an alias from the notes' frontmatter (only when
    no path or basename matches). Several matches raise :class:`AmbiguousNote`
    listing them; none raises :class:`NoteNotFound`. ``named`` is
    :func:`by_basename` of ``paths`` when the caller has it already.
    """
    wanted = strip_wikilink(name).replace("\\", "/")
    if os.path.isabs(wanted):
        try:
            wanted = Path(wanted).resolve().relative_to(root).as_posix()
        except ValueError:
            raise NoteNotFound(
                f"{name} is outside the vault {root} — give a note of this vault."
            ) from None
    wanted = wanted.removeprefix("./")
    if not wanted:
        raise NoteNotFound("No note given — name a note by its path or its basename.")
    if "/" in wanted or wanted.lower().endswith(".md"):  # a path
        exact = set(paths)
        for candidate in (wanted, wanted + ".md"):
            if candidate in exact:
                return candidate
        folded = {p.casefold(): p for p in paths}
        for candidate in (wanted, wanted + ".md"):
            if candidate.casefold() in folded:
                return folded[candidate.casefold()]
    if "/" not in wanted:  # a basename (even "X.md" for a note not at the top)
        index = named if named is not None else by_basename(paths)
        found = sorted(index.get(name_key(basename_of(wanted)), ()))
        if len(found) == 1:
            return found[0]
        if found:
            raise _ambiguous(name, found, "the name")
        if aliases is not None:
            key = name_key(wanted)
            known = set(paths)
            hits = sorted(
                {p for alias, ps in aliases().items() if name_key(alias) == key for p in ps} & known
            )
            if len(hits) == 1:
                return hits[0]
            if hits:
                raise _ambiguous(name, hits, "an alias")
    raise NoteNotFound(
        f"No note {name!r} in the vault {root} — check the name, or give the note's "
        "path relative to the vault (`antinomy search` finds it)."
    )


def _ambiguous(name: str, found: Sequence[str], what: str) -> AmbiguousNote:
    return AmbiguousNote(
        f"{name!r} is {what} of {len(found)} notes: {', '.join(found)} — "
        "give the path of the one you mean.",
        tuple(found),
    )

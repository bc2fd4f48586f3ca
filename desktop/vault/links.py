"""Where names lead: a link written in a note (Obsidian's rule), a name the user types
(:mod:`desktop.vault.names`), an alias. Functions of the index's database.

Like Obsidian, a link names a file (``[[Note]]`` or ``[[Folder/Note]]``);
aliases are for display, search and the names users type, not for resolving links.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

import sqlite_utils

from desktop.vault.layout import STATE_DIR

Resolution = tuple[str | None, str | None, int]


def resolve_target(db: sqlite_utils.Database, target: str) -> list[str]:
    """Paths a wikilink target could mean (one = resolved, several = ambiguous)."""
    key = target.lower().removesuffix(".md").strip("/")
    if "/" in key:
        rows = db.execute(
            "SELECT path FROM notes WHERE lower(path) = ? OR lower(path) LIKE ?",
            [key + ".md", "%/" + key + ".md"],
        )
    else:
        rows = db.execute(
            "SELECT path FROM notes WHERE basename = ? COLLATE NOCASE ORDER BY path", [key]
        )
    return [r[0] for r in rows]


def resolve_links(db: sqlite_utils.Database, only_sources: Sequence[str] | None = None) -> None:
    """Point each link (of ``only_sources``, or all) at a note path; ambiguous basenames
    are flagged, never guessed."""
    if only_sources is not None:
        _resolve_some_links(db, only_sources)
        return
    by_base: dict[str, list[str]] = defaultdict(list)
    by_path: dict[str, str] = {}
    for (path,) in db.execute("SELECT path FROM notes"):
        lower = path.lower()
        by_path[lower[:-3] if lower.endswith(".md") else lower] = path
        by_base[PurePosixPath(lower).stem].append(path)
    rows = db.execute("SELECT rowid, target FROM links").fetchall()
    updates: list[Resolution] = []
    for rowid, target in rows:
        key = target.lower().removesuffix(".md").strip("/")
        if "/" in key:
            hit = by_path.get(key)
            candidates = [hit] if hit else [p for k, p in by_path.items() if k.endswith("/" + key)]
        else:
            candidates = by_base.get(key, [])
        updates.append(_resolution(candidates, rowid))
    _store_resolutions(db, updates)


def _resolve_some_links(db: sqlite_utils.Database, sources: Sequence[str]) -> None:
    """Resolve the links of a few notes, one indexed lookup per target."""
    marks = ", ".join("?" for _ in sources)
    rows = db.execute(
        f"SELECT rowid, target FROM links WHERE src IN ({marks})", list(sources)
    ).fetchall()
    found: dict[str, list[str]] = {}
    updates = []
    for rowid, target in rows:
        if target not in found:
            found[target] = resolve_target(db, target)
        updates.append(_resolution(found[target], rowid))
    _store_resolutions(db, updates)


def _store_resolutions(db: sqlite_utils.Database, updates: list[Resolution]) -> None:
    with db.conn:
        db.execute("BEGIN IMMEDIATE")
        db.conn.executemany("UPDATE links SET resolved = ?, problem = ? WHERE rowid = ?", updates)


def _resolution(candidates: Sequence[str], rowid: int) -> Resolution:
    """(resolved path, problem, link rowid): one candidate resolves; several are ambiguous."""
    if len(candidates) == 1:
        return candidates[0], None, rowid
    return None, "ambiguous" if candidates else "unresolved", rowid


ALIASES_SQL = "SELECT path, aliases FROM notes WHERE aliases != '[]' ORDER BY path"


def alias_map(rows: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path, aliases in rows:
        for alias in json.loads(aliases):
            found[str(alias)].append(path)
    return dict(found)


def stored_aliases(root: Path) -> dict[str, list[str]]:
    """alias → paths as the index last saw them, read without opening the index for
    writing ({} when the vault has no index yet or it cannot be read)."""
    path = root / STATE_DIR / "index.db"
    if not path.is_file():
        return {}
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            return alias_map(conn.execute(ALIASES_SQL).fetchall())
        finally:
            conn.close()
    except (sqlite3.Error, ValueError):
        return {}

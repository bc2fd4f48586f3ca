"""The vault index: notes, links, full text, vectors and coverage, kept incrementally.

Only files whose size or modification time changed are re-read; only notes
whose content hash changed are re-parsed and re-embedded; deleted files leave
the index. Every file seen is in the coverage table — indexed, or skipped with
its reason — so a bad file is visible, never silently missing.

Thread-safety: one :class:`VaultIndex` may be used from several threads. Each thread
has its own connection (:class:`~desktop.vault.db.ThreadConnections` says why); writes
are short ``BEGIN IMMEDIATE`` transactions, serialised by a lock here and by SQLite's
busy wait across processes.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import numpy as np
import sqlite_utils

from desktop.vault.db import IndexDatabase, ThreadConnections
from desktop.vault.layout import state_dir, vault_root
from desktop.vault.links import (
    ALIASES_SQL,
    alias_map,
    resolve_links,
    resolve_target,
    stored_aliases,
)
from desktop.vault.names import resolve_note_name
from desktop.vault.notes import (
    DEFAULT_MAX_BYTES,
    SWAPPED_REASONS,
    Link,
    Note,
    NoteSkipped,
    read_note,
)
from desktop.vault.vectors import EmbeddingModel, VectorStore, embed_notes
from desktop.vault.walk import REASONS, CoverageEntry, walk_entry, walk_vault

__all__ = [
    "REASONS",
    "CoverageEntry",
    "IndexReport",
    "NoteSummary",
    "VaultIndex",
    "sql_filters",
    "stored_aliases",
    "walk_vault",
]

log = logging.getLogger(__name__)

#: ``progress(done, total, phase)``; phase is "reading" or "embedding".
Progress = Callable[[int, int, str], None]
StopCheck = Callable[[], bool]

_BATCH_FILES = 200
_BATCH_EMBED = 32


@dataclass(frozen=True)
class IndexReport:
    files_seen: int
    notes_indexed: int
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    #: (old path, new path) pairs: a file removed and one added with the same content.
    renamed: tuple[tuple[str, str], ...] = ()
    embedded: int = 0
    skipped: tuple[CoverageEntry, ...] = ()
    warnings: tuple[CoverageEntry, ...] = ()
    seconds: float = 0.0
    stopped: bool = False
    rebuilt_because: str | None = None

    def summary(self) -> str:
        text = f"{self.notes_indexed} / {self.files_seen} notes indexed"
        if self.skipped:
            counts = Counter(REASONS.get(e.reason or "", e.reason or "?") for e in self.skipped)
            parts = ", ".join(f"{why} {n}" for why, n in counts.most_common())
            text += f"; {len(self.skipped)} skipped: {parts}"
        if self.warnings:
            text += f"; {len(self.warnings)} warning{'s' if len(self.warnings) > 1 else ''}"
        if self.stopped:
            text += " (stopped before the end)"
        return text


@dataclass(frozen=True)
class NoteSummary:
    """A row of the notes list: what a UI or a flow needs without the body."""

    path: str
    basename: str
    title: str
    type: str | None
    status: str | None
    mtime: float
    sha256: str
    aliases: tuple[str, ...] = field(default=(), repr=False)


class VaultIndex:
    """The index of one vault, in ``<vault>/.antinomy/index.db``."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        embedding: EmbeddingModel | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self.root = vault_root(root)
        self.embedding = embedding
        self.max_bytes = max_bytes
        self._store = IndexDatabase(state_dir(self.root) / "index.db")
        self._connections = ThreadConnections(self._store)
        self._write_lock = threading.RLock()
        self.vectors: VectorStore | None = None
        if embedding is not None:
            self._load_vectors(embedding)

    @property
    def rebuilt_because(self) -> str | None:
        return self._store.rebuilt_because

    @property
    def db(self) -> sqlite_utils.Database:
        """The calling thread's connection to the index (opened on first use)."""
        return self._connections.get()

    # ------------------------------------------------------------------ vectors

    def _load_vectors(self, embedding: EmbeddingModel) -> None:
        store = VectorStore(embedding.dimension)
        if self._store.get_meta("embedder") != embedding.model_id:
            with self._write_lock:
                self.db.execute("DELETE FROM vectors")  # another model: every vector is stale
                self._store.set_meta("embedder", embedding.model_id)
        rows = self.db.execute("SELECT path, vector FROM vectors").fetchall()
        store.upsert((p, np.frombuffer(v, dtype="<f4")) for p, v in rows)
        self.vectors = store

    # ------------------------------------------------------------------ updating

    def update(
        self,
        *,
        progress: Progress | None = None,
        stop: StopCheck | None = None,
        full_check: bool = False,
    ) -> IndexReport:
        """Bring the index up to date with the files; returns what changed."""
        start = time.perf_counter()
        seen: dict[str, os.stat_result] = {}
        skipped: dict[str, CoverageEntry] = {}
        for rel, st, skip in walk_vault(self.root):
            if skip is not None:
                skipped[rel] = skip
            elif st is not None:
                seen[rel] = st
        known = {
            row[0]: (row[1], row[2], row[3])
            for row in self.db.execute("SELECT path, state, size, mtime_ns FROM coverage")
        }
        to_read = [
            p
            for p, st in seen.items()
            if full_check
            or p not in known
            or (known[p][1], known[p][2]) != (st.st_size, st.st_mtime_ns)
        ]
        # A file skipped before is not re-read until it changes (its stat is kept).
        gone = [p for p in known if p not in seen and p not in skipped]
        with self._write_lock:
            for entry in skipped.values():  # symlinks the walk refused
                self._set_coverage(entry, None)
            added, updated, stopped = self._read_files(to_read, seen, skipped, progress, stop)
            renamed = self._remove(gone, added)
            if added or gone or not known:
                self._resolve_links(None)
            elif updated:
                self._resolve_links(updated)
            self._mark_duplicates()
            embedded = 0
            if not stopped and self.embedding is not None:
                embedded, stopped = self._embed_missing(progress, stop)
        return self._report(
            added, updated, gone, renamed, embedded, time.perf_counter() - start, stopped
        )

    def update_paths(self, paths: Iterable[str]) -> IndexReport:
        """Re-index just these vault-relative paths (after a transaction, or a watcher event)."""
        start = time.perf_counter()
        seen: dict[str, os.stat_result] = {}
        skipped: dict[str, CoverageEntry] = {}
        gone: list[str] = []
        for rel in dict.fromkeys(PurePosixPath(p).as_posix() for p in paths):
            full = self.root / rel
            if not rel.lower().endswith(".md") or any(
                part.startswith(".") for part in PurePosixPath(rel).parts
            ):
                continue
            if not os.path.lexists(full) or (full.is_dir() and not full.is_symlink()):
                gone.append(rel)  # a folder named x.md is not a note (the walk skips it too)
                continue
            shown, st, skip = walk_entry(self.root, full)
            if skip is not None:
                skipped[shown] = skip
            elif st is not None:
                seen[rel] = st
        with self._write_lock:
            for entry in skipped.values():
                self._set_coverage(entry, None)
            added, updated, stopped = self._read_files(list(seen), seen, skipped, None, None)
            renamed = self._remove(gone, added)
            self._resolve_links(None if (added or gone) else updated)
            self._mark_duplicates()
            embedded = 0
            if self.embedding is not None:
                embedded, stopped = self._embed_missing(None, None)
        return self._report(
            added, updated, gone, renamed, embedded, time.perf_counter() - start, stopped
        )

    def rebuild(self, **kwargs: Any) -> IndexReport:
        """Forget everything and index from scratch."""
        with self._write_lock:
            with self.db.conn:
                self.db.execute("BEGIN IMMEDIATE")
                for table in ("links", "vectors", "coverage", "notes"):
                    self.db.execute(f"DELETE FROM {table}")
            if self.vectors is not None:
                self.vectors = VectorStore(self.vectors.dimension)
        return self.update(**kwargs)

    def _read_files(
        self,
        paths: Sequence[str],
        seen: dict[str, os.stat_result],
        skipped: dict[str, CoverageEntry],
        progress: Progress | None,
        stop: StopCheck | None,
    ) -> tuple[list[str], list[str], bool]:
        if len(paths) <= 500:
            marks = ", ".join("?" for _ in paths) or "NULL"
            stored = dict(
                self.db.execute(
                    f"SELECT path, sha256 FROM notes WHERE path IN ({marks})", list(paths)
                ).fetchall()
            )
        else:
            stored = dict(self.db.execute("SELECT path, sha256 FROM notes").fetchall())
        added: list[str] = []
        updated: list[str] = []
        total = len(paths)
        for start in range(0, total, _BATCH_FILES):
            if stop is not None and stop():
                return added, updated, True
            with self.db.conn:
                self.db.execute("BEGIN IMMEDIATE")
                for rel in paths[start : start + _BATCH_FILES]:
                    try:
                        note = read_note(self.root, rel, max_bytes=self.max_bytes)
                    except NoteSkipped as exc:
                        self._drop_note(rel)
                        entry = CoverageEntry(rel, "skipped", exc.reason, str(exc))
                        skipped[rel] = entry
                        # Found changed since the walk: looked at again next time, stat or not.
                        kept = None if exc.reason in SWAPPED_REASONS else seen.get(rel)
                        self._set_coverage(entry, kept)
                        continue
                    st = seen[rel]
                    if stored.get(rel) != note.sha256:
                        self._write_note(note)
                        (updated if rel in stored else added).append(rel)
                    entry = CoverageEntry(rel, "indexed")
                    if not note.body.strip():
                        entry = CoverageEntry(
                            rel, "indexed", "empty", "no text besides frontmatter"
                        )
                    self._set_coverage(entry, st)
            if progress is not None:
                progress(min(start + _BATCH_FILES, total), total, "reading")
        return added, updated, False

    def _write_note(self, note: Note) -> None:
        row = {
            "path": note.path,
            "basename": note.basename,
            "title": note.title,
            "type": note.type,
            "status": note.status,
            "aliases": json.dumps(list(note.aliases), ensure_ascii=False),
            "tags": json.dumps(list(note.tags), ensure_ascii=False),
            "frontmatter": json.dumps(note.frontmatter, ensure_ascii=False, default=str),
            "body": note.body,
            "sha256": note.sha256,
            "mtime": note.mtime,
            "size": note.size,
        }
        # UPDATE keeps the rowid (and so the FTS row) stable; INSERT for new notes.
        cols = [c for c in row if c != "path"]
        cur = self.db.execute(
            f"UPDATE notes SET {', '.join(f'{c} = ?' for c in cols)} WHERE path = ?",
            [row[c] for c in cols] + [note.path],
        )
        if cur.rowcount == 0:
            self.db.execute(
                f"INSERT INTO notes ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                list(row.values()),
            )
        self.db.execute("DELETE FROM links WHERE src = ?", [note.path])
        self.db.conn.executemany(
            "INSERT INTO links (src, target, heading, alias, embed) VALUES (?, ?, ?, ?, ?)",
            [(note.path, lk.target, lk.heading, lk.alias, int(lk.embed)) for lk in note.links],
        )

    def _drop_note(self, rel: str) -> None:
        self.db.execute("DELETE FROM notes WHERE path = ?", [rel])  # cascades links, vectors
        if self.vectors is not None:
            self.vectors.remove([rel])

    def _set_coverage(self, entry: CoverageEntry, st: os.stat_result | None) -> None:
        self.db.execute(
            "INSERT INTO coverage (path, state, reason, detail, size, mtime_ns) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET state = excluded.state, "
            "reason = excluded.reason, detail = excluded.detail, size = excluded.size, "
            "mtime_ns = excluded.mtime_ns",
            [
                entry.path,
                entry.state,
                entry.reason,
                entry.detail,
                st.st_size if st else None,
                st.st_mtime_ns if st else None,
            ],
        )

    def _remove(self, gone: Sequence[str], added: Sequence[str]) -> list[tuple[str, str]]:
        if not gone:
            return []
        old_hashes = dict(
            self.db.execute(
                f"SELECT path, sha256 FROM notes WHERE path IN ({', '.join('?' for _ in gone)})",
                list(gone),
            ).fetchall()
        )
        with self.db.conn:
            self.db.execute("BEGIN IMMEDIATE")
            for rel in gone:
                self._drop_note(rel)
                self.db.execute("DELETE FROM coverage WHERE path = ?", [rel])
        new_by_hash: dict[str, list[str]] = defaultdict(list)
        if added:
            rows = self.db.execute(
                f"SELECT path, sha256 FROM notes WHERE path IN ({', '.join('?' for _ in added)})",
                list(added),
            ).fetchall()
            for path, digest in rows:
                new_by_hash[digest].append(path)
        return [
            (old, new_by_hash[digest][0])
            for old, digest in old_hashes.items()
            if len(new_by_hash.get(digest, ())) == 1
        ]

    def _mark_duplicates(self) -> None:
        """Warn on every note whose basename another note shares (links to it are ambiguous)."""
        groups = [
            sorted(paths.split("\x1f"))
            for (paths,) in self.db.execute(
                "SELECT group_concat(path, char(31)) FROM notes "
                "GROUP BY basename COLLATE NOCASE HAVING count(*) > 1"
            )
        ]
        with self.db.conn:
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute(
                "UPDATE coverage SET reason = NULL, detail = NULL "
                "WHERE state = 'indexed' AND reason = 'duplicate_basename'"
            )
            for paths in groups:
                for path in paths:
                    others = ", ".join(p for p in paths if p != path)
                    self.db.execute(
                        "UPDATE coverage SET reason = 'duplicate_basename', detail = ? "
                        "WHERE path = ?",
                        [f"the same name as {others}: [[links]] to it are ambiguous", path],
                    )

    def _embed_missing(self, progress: Progress | None, stop: StopCheck | None) -> tuple[int, bool]:
        assert self.embedding is not None and self.vectors is not None
        todo = self.db.execute(
            "SELECT n.path, n.title, n.body, n.sha256 FROM notes n "
            "LEFT JOIN vectors v ON v.path = n.path "
            "WHERE v.path IS NULL OR v.sha256 != n.sha256 ORDER BY n.path"
        ).fetchall()
        done = 0
        for start in range(0, len(todo), _BATCH_EMBED):
            if stop is not None and stop():
                return done, True
            batch = todo[start : start + _BATCH_EMBED]
            vectors = embed_notes(self.embedding, [(title, body) for _, title, body, _ in batch])
            rows = [
                (path, digest, vec.astype("<f4").tobytes())
                for (path, _, _, digest), vec in zip(batch, vectors, strict=True)
            ]
            with self.db.conn:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.conn.executemany(
                    "INSERT INTO vectors (path, sha256, vector) VALUES (?, ?, ?) "
                    "ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, "
                    "vector = excluded.vector",
                    rows,
                )
            self.vectors.upsert((path, vec) for (path, *_), vec in zip(batch, vectors, strict=True))
            done += len(batch)
            if progress is not None:
                progress(done, len(todo), "embedding")
        return done, False

    def _report(
        self,
        added: list[str],
        updated: list[str],
        gone: list[str],
        renamed: list[tuple[str, str]],
        embedded: int,
        seconds: float,
        stopped: bool,
    ) -> IndexReport:
        notes = int(self.db.execute("SELECT count(*) FROM notes").fetchone()[0])
        all_skipped = tuple(self.coverage(only="skipped"))
        all_warnings = tuple(self.coverage(only="warnings"))
        files = int(self.db.execute("SELECT count(*) FROM coverage").fetchone()[0])
        return IndexReport(
            files_seen=files,
            notes_indexed=notes,
            added=tuple(added),
            updated=tuple(updated),
            removed=tuple(gone),
            renamed=tuple(renamed),
            embedded=embedded,
            skipped=all_skipped,
            warnings=all_warnings,
            seconds=seconds,
            stopped=stopped,
            rebuilt_because=self.rebuilt_because,
        )

    # ------------------------------------------------------------------ reading

    def coverage(self, *, only: str | None = None) -> list[CoverageEntry]:
        """Every file seen, by path; ``only="skipped"`` or ``only="warnings"`` narrows it."""
        where = {
            None: "1",
            "skipped": "state = 'skipped'",
            "warnings": "state = 'indexed' AND reason IS NOT NULL",
        }[only]
        return [
            CoverageEntry(p, s, r, d)
            for p, s, r, d in self.db.execute(
                f"SELECT path, state, reason, detail FROM coverage WHERE {where} ORDER BY path"
            )
        ]

    def note(self, path: str) -> Note | None:
        row = self.db.execute(
            "SELECT path, basename, frontmatter, body, type, status, aliases, tags, sha256, "
            "mtime, size FROM notes WHERE path = ?",
            [path],
        ).fetchone()
        if row is None:
            return None
        links = tuple(
            Link(target=t, heading=h, alias=a, embed=bool(e))
            for t, h, a, e in self.db.execute(
                "SELECT target, heading, alias, embed FROM links WHERE src = ? ORDER BY rowid",
                [path],
            )
        )
        return Note(
            path=row[0],
            basename=row[1],
            frontmatter=json.loads(row[2]),
            body=row[3],
            type=row[4],
            status=row[5],
            aliases=tuple(json.loads(row[6])),
            tags=tuple(json.loads(row[7])),
            links=links,
            sha256=row[8],
            mtime=row[9],
            size=row[10],
        )

    def notes(
        self, *, types: Iterable[str] | None = None, statuses: Iterable[str] | None = None
    ) -> list[NoteSummary]:
        sql = "SELECT path, basename, title, type, status, mtime, sha256, aliases FROM notes"
        clauses, params = sql_filters(types, statuses)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        return [
            NoteSummary(p, b, t, ty, st, m, h, tuple(json.loads(a)))
            for p, b, t, ty, st, m, h, a in self.db.execute(sql + " ORDER BY path", params)
        ]

    def bodies(self) -> Iterator[tuple[str, str, tuple[str, ...], str]]:
        """``(path, title, aliases, body)`` of every indexed note, by path."""
        for path, title, aliases, body in self.db.execute(
            "SELECT path, title, aliases, body FROM notes ORDER BY path"
        ):
            yield path, title, tuple(json.loads(aliases)), body

    def summaries(self, paths: Iterable[str]) -> dict[str, NoteSummary]:
        wanted = list(dict.fromkeys(paths))
        if not wanted:
            return {}
        rows = self.db.execute(
            "SELECT path, basename, title, type, status, mtime, sha256, aliases FROM notes "
            f"WHERE path IN ({', '.join('?' for _ in wanted)})",
            wanted,
        )
        return {
            p: NoteSummary(p, b, t, ty, st, m, h, tuple(json.loads(a)))
            for p, b, t, ty, st, m, h, a in rows
        }

    def _resolve_links(self, only_sources: Sequence[str] | None) -> None:
        resolve_links(self.db, only_sources)

    def resolve(self, target: str) -> list[str]:
        """Paths a wikilink target could mean (one = resolved, several = ambiguous)."""
        return resolve_target(self.db, target)

    def locate(self, name: str) -> str:
        """The path of the note the user names (see :func:`resolve_note_name`)."""
        paths = [r[0] for r in self.db.execute("SELECT path FROM notes ORDER BY path")]
        return resolve_note_name(name, root=self.root, paths=paths, aliases=self.aliases)

    def aliases(self) -> dict[str, list[str]]:
        """alias → the paths of the notes whose frontmatter declares it."""
        return alias_map(self.db.execute(ALIASES_SQL))

    def backlinks(self, path: str) -> list[str]:
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT src FROM links WHERE resolved = ? ORDER BY src", [path]
            )
        ]

    def broken_links(self) -> list[tuple[str, str, str]]:
        """(source, target, problem) for links that are unresolved or ambiguous."""
        return [
            (s, t, p)
            for s, t, p in self.db.execute(
                "SELECT src, target, problem FROM links WHERE problem IS NOT NULL ORDER BY src"
            )
        ]

    def close(self) -> None:
        """Close every thread's connection (once the other threads are done with the index)."""
        self._connections.close()


def sql_filters(
    types: Iterable[str] | None, statuses: Iterable[str] | None, prefix: str = ""
) -> tuple[list[str], list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for column, values in (("type", types), ("status", statuses)):
        if values is not None:
            vals = list(values)
            clauses.append(f"{prefix}{column} IN ({', '.join('?' for _ in vals)})")
            params.extend(vals)
    return clauses, params

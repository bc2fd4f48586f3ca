"""The index database: ``<vault>/.antinomy/index.db``, numbered migrations on open.

The index is derived data — the vault files are the source of truth. So a
database that is corrupt, or was written by a newer Antinomy, is moved aside
and rebuilt, and the caller is told why (:attr:`IndexDatabase.rebuilt_because`).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import sqlite_utils

log = logging.getLogger(__name__)


def _m1_initial(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE notes (
            path TEXT PRIMARY KEY,
            basename TEXT NOT NULL,
            title TEXT NOT NULL,
            type TEXT,
            status TEXT,
            aliases TEXT NOT NULL,      -- JSON list
            tags TEXT NOT NULL,         -- JSON list
            frontmatter TEXT NOT NULL,  -- JSON object
            body TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            mtime REAL NOT NULL,
            size INTEGER NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX notes_basename ON notes(basename COLLATE NOCASE)")
    db.execute("CREATE INDEX notes_type ON notes(type, status)")
    db.execute(
        """
        CREATE TABLE links (
            src TEXT NOT NULL REFERENCES notes(path) ON DELETE CASCADE,
            target TEXT NOT NULL,
            heading TEXT,
            alias TEXT,
            embed INTEGER NOT NULL,
            resolved TEXT,              -- vault-relative path, or NULL
            problem TEXT                -- 'unresolved' | 'ambiguous' | NULL
        )
        """
    )
    db.execute("CREATE INDEX links_src ON links(src)")
    db.execute("CREATE INDEX links_resolved ON links(resolved)")
    db.execute(
        """
        CREATE TABLE vectors (
            path TEXT PRIMARY KEY REFERENCES notes(path) ON DELETE CASCADE,
            sha256 TEXT NOT NULL,       -- the note content the vector was made from
            vector BLOB NOT NULL        -- float32, little-endian
        )
        """
    )
    db.execute(
        """
        CREATE TABLE coverage (
            path TEXT PRIMARY KEY,
            state TEXT NOT NULL,        -- 'indexed' | 'skipped'
            reason TEXT,                -- stable code when skipped, or a warning code
            detail TEXT,                -- a sentence for the user
            size INTEGER,
            mtime_ns INTEGER
        )
        """
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute(
        "CREATE VIRTUAL TABLE notes_fts USING fts5("
        "title, aliases, body, content='notes', content_rowid='rowid', "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    for name, op in (("ai", "INSERT"), ("ad", "DELETE"), ("au", "UPDATE")):
        new = (
            "INSERT INTO notes_fts(rowid, title, aliases, body) "
            "VALUES (new.rowid, new.title, new.aliases, new.body);"
        )
        old = (
            "INSERT INTO notes_fts(notes_fts, rowid, title, aliases, body) "
            "VALUES ('delete', old.rowid, old.title, old.aliases, old.body);"
        )
        action = {"ai": new, "ad": old, "au": old + new}[name]
        db.execute(f"CREATE TRIGGER notes_{name} AFTER {op} ON notes BEGIN {action} END")


def _m2_sentence_vectors(db: sqlite_utils.Database) -> None:
    # Content-addressed: a sentence's vector depends only on its text and the model,
    # so it stays valid whichever note holds it; rows of vanished sentences are pruned.
    db.execute(
        """
        CREATE TABLE sentence_vectors (
            text_sha TEXT NOT NULL,     -- sha256 of the sentence text (first 32 hex digits)
            model_id TEXT NOT NULL,
            vector BLOB NOT NULL,       -- float32, little-endian
            used REAL NOT NULL,         -- last time a scan read it (unix seconds)
            PRIMARY KEY (text_sha, model_id)
        ) WITHOUT ROWID
        """
    )


#: Migration N brings the schema from version N-1 to N. Append only.
MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_m1_initial, _m2_sentence_vectors]
SCHEMA_VERSION = len(MIGRATIONS)


#: How long opening the index waits for another process that holds the file.
OPEN_WAIT_SECONDS = 30.0
#: How long a write waits for another writer (another thread's or process's) to commit.
BUSY_WAIT_SECONDS = 5.0


def _busy(exc: sqlite3.DatabaseError) -> bool:
    """The error says the database is in use elsewhere, not that the file is damaged."""
    text = str(exc).casefold()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


class IndexDatabase:
    """Owns the SQLite connection of one vault's index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        #: Why the database was rebuilt on open, or None.
        self.rebuilt_because: str | None = None
        try:
            self.db = self._open_when_free()
        except sqlite3.DatabaseError as exc:
            if _busy(exc):
                raise
            self._move_aside(f"the index database was unreadable ({exc})")
            self.db = self._open()

    def _open_when_free(self) -> sqlite_utils.Database:
        """:meth:`_open`, waiting while another process holds the file: a locked database
        is busy, not broken, and must never be moved aside (two processes opening a new
        vault's index at once both switch it to WAL, which needs the lock for a moment)."""
        deadline = time.monotonic() + OPEN_WAIT_SECONDS
        while True:
            try:
                return self._open()
            except sqlite3.OperationalError as exc:
                if not _busy(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def connect(self) -> sqlite_utils.Database:
        """Another connection to the same database (open, migrated): one for each thread
        that uses the index, so a read in progress on one thread never holds the snapshot
        another thread's write must start from."""
        db = self._connect()
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT_SECONDS * 1000)}")
        return db

    def _connect(self) -> sqlite_utils.Database:
        conn = sqlite3.connect(
            self.path, check_same_thread=False, isolation_level=None, timeout=30.0
        )
        try:
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error:
            conn.close()  # a retry opens a new one
            raise
        return sqlite_utils.Database(conn)

    def _open(self) -> sqlite_utils.Database:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._connect()
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            db.conn.close()
            self._move_aside(
                f"the index was written by a newer Antinomy (schema {version}, "
                f"this one knows {SCHEMA_VERSION})"
            )
            db = self._connect()
            version = 0
        db.execute("PRAGMA quick_check").fetchone()
        for number in range(version, SCHEMA_VERSION):
            # IMMEDIATE takes the write lock first, so two processes opening a new
            # vault at once migrate it once: the second sees the new version.
            with db.conn:
                db.execute("BEGIN IMMEDIATE")
                if int(db.execute("PRAGMA user_version").fetchone()[0]) > number:
                    continue
                MIGRATIONS[number](db)
                db.execute(f"PRAGMA user_version = {number + 1}")
        return db

    def _move_aside(self, why: str) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for suffix in ("", "-wal", "-shm"):
            part = self.path.with_name(self.path.name + suffix)
            if part.exists():
                part.replace(part.with_name(f"{part.name}.broken-{stamp}"))
        self.rebuilt_because = f"{why}; it was moved aside and is rebuilt from the vault files"
        log.warning("index %s: %s", self.path, self.rebuilt_because)

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )

    def close(self) -> None:
        self.db.conn.close()


class ThreadConnections:
    """One connection to the index for each thread that uses it.

    A connection shared by threads shares its snapshot too: while one thread's read is in
    progress (a scan iterating over the notes), the connection keeps the snapshot it
    started from, and once another writer has committed, SQLite refuses a write that would
    start from that stale snapshot at once — the busy wait does not apply ("database is
    locked"). With a connection each, a write starts from the newest commit and waits
    (``BEGIN IMMEDIATE``, :data:`BUSY_WAIT_SECONDS`) for a writer that holds the lock.
    """

    def __init__(self, store: IndexDatabase) -> None:
        self._store = store
        store.db.execute(f"PRAGMA busy_timeout = {int(BUSY_WAIT_SECONDS * 1000)}")
        self._local = threading.local()
        self._local.db = store.db  # the opening thread keeps the migrating connection
        self._all: list[sqlite_utils.Database] = [store.db]
        self._lock = threading.Lock()
        self._closed = False

    def get(self) -> sqlite_utils.Database:
        """The calling thread's connection; any thread may call it."""
        db: sqlite_utils.Database | None = getattr(self._local, "db", None)
        if db is not None:
            return db
        with self._lock:
            if self._closed:
                return self._store.db  # closed: using it raises sqlite3.ProgrammingError
            db = self._store.connect()
            self._all.append(db)
        self._local.db = db
        return db

    def close(self) -> None:
        """Close every thread's connection; any thread may call it."""
        with self._lock:
            self._closed = True
            for db in self._all:
                db.conn.close()
            self._all = []

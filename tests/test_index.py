"""The vault index: notes, links, coverage, incremental updates, search, bad input."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from desktop.vault.db import SCHEMA_VERSION
from desktop.vault.index import VaultIndex
from desktop.vault.notes import parse_links, parse_note
from desktop.vault.search import fts_query, neighbours, search
from desktop.vault.vectors import EmbeddingModel, VectorStore, note_chunks


class BagOfWords:
    """A deterministic stand-in embedder: hashed word counts, normalised."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-9, None)


@pytest.fixture()
def bow() -> BagOfWords:
    return BagOfWords()


@pytest.fixture()
def model(bow: BagOfWords) -> EmbeddingModel:
    return EmbeddingModel("bag-of-words", 64, bow)


def write(root: Path, rel: str, text: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture()
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(
        root,
        "Tensions/Speed vs care.md",
        "---\ntype: tension\nstatus: open\naliases: [Speed]\ntags: [work]\n---\n"
        "We ship fast. See [[Deploys]] and [[Decisions/Freeze|the freeze]] and "
        "[[Deploys#Why]] and ![[Diagram]]. #team\n",
    )
    write(root, "Deploys.md", "---\nantinomia_type: substrate\n---\nWe deploy every Friday.\n")
    write(
        root,
        "Decisions/Freeze.md",
        "---\nkind: decision\nstatus: accepted\n---\nNothing ships before a weekend.\n",
    )
    write(root, "Journal/2026-11-01.md", "Gardening: the tomatoes are late this year.\n")
    write(root, ".obsidian/app.json", "{}")
    write(root, ".obsidian/hidden.md", "never indexed")
    return root


def test_note_parsing_reads_type_fallbacks_links_and_tags() -> None:
    note = parse_note(
        "a/B.md",
        b"---\nkind: decision\ntags: [x, '#y']\naliases: Bee\n---\nText #inline and `#code`\n",
    )
    assert note.basename == "B" and note.type == "decision"
    assert note.tags == ("x", "y", "inline") and note.aliases == ("Bee",)
    links = parse_links("[[A]] [[F/B|b]] [[C#H]] ![[D]] [[#Self]] `[[Not]]`")
    assert [(lk.target, lk.heading, lk.alias, lk.embed) for lk in links] == [
        ("A", None, None, False),
        ("F/B", None, "b", False),
        ("C", "H", None, False),
        ("D", None, None, True),
    ]


def test_index_reads_notes_links_and_coverage(vault: Path, model: EmbeddingModel) -> None:
    index = VaultIndex(vault, embedding=model)
    report = index.update()
    assert report.notes_indexed == 4 and report.files_seen == 4
    assert report.summary() == "4 / 4 notes indexed"
    assert {n.path: n.type for n in index.notes()} == {
        "Decisions/Freeze.md": "decision",
        "Deploys.md": "substrate",
        "Journal/2026-11-01.md": None,
        "Tensions/Speed vs care.md": "tension",
    }
    assert index.backlinks("Deploys.md") == ["Tensions/Speed vs care.md"]
    assert index.backlinks("Decisions/Freeze.md") == ["Tensions/Speed vs care.md"]
    assert index.broken_links() == [("Tensions/Speed vs care.md", "Diagram", "unresolved")]
    note = index.note("Tensions/Speed vs care.md")
    assert note is not None and note.tags == ("work", "team") and note.aliases == ("Speed",)
    assert len(index.vectors or []) == 4
    assert (vault / ".obsidian" / "hidden.md").read_text() == "never indexed"  # untouched


def test_incremental_update_rereads_only_what_changed(
    vault: Path, model: EmbeddingModel, bow: BagOfWords
) -> None:
    index = VaultIndex(vault, embedding=model)
    index.update()
    bow.calls.clear()
    again = index.update()
    assert (again.added, again.updated, again.removed, again.embedded) == ((), (), (), 0)
    assert bow.calls == []
    path = vault / "Deploys.md"
    path.write_text("---\nantinomia_type: substrate\n---\nWe deploy on Mondays now.\n")
    os.utime(path, ns=(1, 1_000_000_000))
    changed = index.update()
    assert changed.updated == ("Deploys.md",) and changed.embedded == 1
    assert search(index, "Mondays")[0].note.path == "Deploys.md"
    # touched but identical content: re-read, not re-embedded
    os.utime(path, ns=(2, 2_000_000_000))
    bow.calls.clear()
    touched = index.update()
    assert touched.updated == () and bow.calls == []


def test_deleted_and_renamed_files(vault: Path, model: EmbeddingModel) -> None:
    index = VaultIndex(vault, embedding=model)
    index.update()
    (vault / "Journal/2026-11-01.md").unlink()
    (vault / "Deploys.md").rename(vault / "Deployments.md")
    report = index.update()
    assert set(report.removed) == {"Journal/2026-11-01.md", "Deploys.md"}
    assert report.renamed == (("Deploys.md", "Deployments.md"),)
    assert "Deploys.md" not in (index.vectors or VectorStore(1))
    assert ("Tensions/Speed vs care.md", "Deploys", "unresolved") in index.broken_links()


def test_rebuild_from_scratch_gives_the_same_index(vault: Path, model: EmbeddingModel) -> None:
    index = VaultIndex(vault, embedding=model)
    index.update()
    before = (index.notes(), index.coverage(), index.broken_links())
    index.rebuild()
    assert (index.notes(), index.coverage(), index.broken_links()) == before


def test_bad_input_is_listed_with_reasons_and_the_rest_works(
    vault: Path, model: EmbeddingModel, tmp_path: Path
) -> None:
    write(vault, "Inbox/bad yaml.md", "---\ntitle: 'unclosed\n---\nbody\n")
    write(vault, "Inbox/latin1.md", "Café crème".encode("latin-1"))
    write(vault, "Inbox/binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    write(vault, "Inbox/empty.md", b"")
    write(vault, "Inbox/huge.md", "word " * 300_000)
    write(vault, "Archive/Deploys.md", "Another note with the same name.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (vault / "Inbox/link.md").symlink_to(outside)
    (vault / "Linked").symlink_to(tmp_path)
    write(vault, "Inbox/crlf.md", "---\r\ntype: substrate\r\n---\r\nWindows note\r\n")
    write(vault, "Inbox/bom.md", "\ufeff---\ntype: substrate\n---\nBOM note\n")
    index = VaultIndex(vault, embedding=model, max_bytes=1 << 20)
    report = index.update()
    reasons = {e.path: e.reason for e in report.skipped}
    assert reasons == {
        "Inbox/bad yaml.md": "invalid_yaml",
        "Inbox/latin1.md": "not_utf8",
        "Inbox/binary.md": "binary",
        "Inbox/huge.md": "too_large",
        "Inbox/link.md": "symlink_outside",
        "Linked": "symlink_dir",
    }
    assert {w.path: w.reason for w in report.warnings} == {
        "Deploys.md": "duplicate_basename",
        "Archive/Deploys.md": "duplicate_basename",
        "Inbox/empty.md": "empty",
    }
    assert "Inbox/empty.md" in {n.path for n in index.notes()}
    assert index.note("Inbox/crlf.md").type == "substrate"  # type: ignore[union-attr]
    assert index.note("Inbox/bom.md").type == "substrate"  # type: ignore[union-attr]
    assert ("Tensions/Speed vs care.md", "Deploys", "ambiguous") in index.broken_links()
    assert "6 skipped" in report.summary() and "3 warnings" in report.summary()
    assert search(index, "tomatoes")[0].note.path == "Journal/2026-11-01.md"
    # Skipped files are not re-read until they change.
    assert index.update().skipped == report.skipped


def test_file_changing_while_read_is_reported(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.vault import notes

    real = notes._read_regular

    def always_growing(
        root: Path, rel: str, max_bytes: int
    ) -> tuple[bytes, os.stat_result, os.stat_result]:
        data, before, _ = real(root, rel, max_bytes)
        with (root / rel).open("ab") as fh:
            fh.write(b" more")
        return data, before, (root / rel).stat()

    monkeypatch.setattr(notes, "_read_regular", always_growing)
    report = VaultIndex(vault).update()
    assert {e.reason for e in report.skipped} == {"changing"}


def test_search_fuses_words_and_meaning_with_filters(vault: Path, model: EmbeddingModel) -> None:
    index = VaultIndex(vault, embedding=model)
    index.update()
    hits = search(index, "deploy Friday")
    assert hits[0].note.path == "Deploys.md"
    assert hits[0].text_rank == 1 and hits[0].semantic_rank is not None
    assert "«Friday»" in (hits[0].snippet or "")
    only = search(index, "deploy", types=["decision"])
    assert [h.note.path for h in only] == ["Decisions/Freeze.md"]
    assert search(index, 'NOT "OR" (*') is not None  # FTS syntax in the query is inert
    assert fts_query("   ") is None
    assert fts_query('deploy on "friday"') == '"deploy" OR "friday"*'  # short words dropped
    assert fts_query("on a") == '"on" OR "a"'  # unless nothing else is left
    near = neighbours(index, "Deploys.md", k=2)
    assert len(near) == 2 and all(s.path != "Deploys.md" for s, _ in near)


def test_search_without_vectors_is_full_text_only(vault: Path) -> None:
    index = VaultIndex(vault)
    index.update()
    hits = search(index, "tomatoes")
    assert [h.note.path for h in hits] == ["Journal/2026-11-01.md"]
    assert hits[0].semantic_rank is None and neighbours(index, "Deploys.md") == []


def test_changing_the_embedder_redoes_all_vectors(vault: Path, model: EmbeddingModel) -> None:
    VaultIndex(vault, embedding=model).update()
    other = EmbeddingModel("other-model", 64, BagOfWords())
    index = VaultIndex(vault, embedding=other)
    assert len(index.vectors or []) == 0
    assert index.update().embedded == 4


def test_corrupt_database_is_rebuilt_with_a_message(vault: Path) -> None:
    VaultIndex(vault).update()
    db = vault / ".antinomy" / "index.db"
    for part in vault.joinpath(".antinomy").glob("index.db-*"):
        part.unlink()
    db.write_bytes(b"this is not a database" * 100)
    index = VaultIndex(vault)
    assert index.rebuilt_because and "unreadable" in index.rebuilt_because
    assert index.update().notes_indexed == 4
    assert list(vault.joinpath(".antinomy").glob("index.db.broken-*"))


def test_database_from_a_newer_version_is_rebuilt(vault: Path) -> None:
    VaultIndex(vault).close()
    conn = sqlite3.connect(vault / ".antinomy" / "index.db")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    index = VaultIndex(vault)
    assert "newer Antinomy" in (index.rebuilt_because or "")
    assert index.update().notes_indexed == 4


def test_update_paths_follows_a_transaction(vault: Path, model: EmbeddingModel) -> None:
    index = VaultIndex(vault, embedding=model)
    index.update()
    write(vault, "Principles/New.md", "---\ntype: principle\n---\nLinks [[Deploys]].\n")
    (vault / "Journal/2026-11-01.md").unlink()
    report = index.update_paths(["Principles/New.md", "Journal/2026-11-01.md"])
    assert report.added == ("Principles/New.md",)
    assert report.removed == ("Journal/2026-11-01.md",)
    assert "Principles/New.md" in index.backlinks("Deploys.md")


def test_long_notes_are_embedded_in_chunks() -> None:
    chunks = note_chunks("Title", "word " * 1000)
    assert len(chunks) == 7 and all(c.startswith("Title\n") for c in chunks)
    assert note_chunks("Title", "") == ["Title"]
    assert len(note_chunks("T", "w " * 100_000)) == 8  # capped


def test_vector_store_incremental_rows() -> None:
    store = VectorStore(2)
    store.upsert([("a", np.array([1, 0], np.float32)), ("b", np.array([0, 1], np.float32))])
    store.upsert([("c", np.array([0.7, 0.7], np.float32))])
    store.remove(["a"])
    assert len(store) == 2 and "a" not in store
    assert [p for p, _ in store.nearest(np.array([1, 0], np.float32), 5)] == ["c", "b"]
    allowed = store.nearest(np.array([1, 0], np.float32), 5, allowed={"b"}.__contains__)
    assert [p for p, _ in allowed] == ["b"]


_WRITER = """
import sys
from pathlib import Path
from desktop.vault.index import VaultIndex
root, n = Path(sys.argv[1]), sys.argv[2]
index = VaultIndex(root)
for r in range(40):
    for k in range(5):
        (root / f"Edited {n}-{k}.md").write_text(f"# Edited\\n\\nround {r} of {n} {k}\\n")
    index.update()
"""


def test_two_processes_index_one_vault_at_once(tmp_path: Path) -> None:
    """The app's index and the guard's share index.db: concurrent writers wait, never fail
    (with a plain BEGIN, a read-then-write transaction hit "database is locked")."""
    import subprocess
    import sys

    from desktop.resources import sample_vault_source

    root = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), root)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(root), str(n)],
            stderr=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        )
        for n in range(2)
    ]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    index = VaultIndex(root)
    assert index.rebuilt_because is None
    assert {f"Edited {n}-4.md" for n in range(2)} <= {s.path for s in index.notes()}


def test_snippets_do_not_highlight_stop_words(tmp_path: Path) -> None:
    from desktop.vault.search import snippets
    from desktop.vault.stopwords import content_words

    vault = tmp_path / "v"
    vault.mkdir()
    (vault / "en.md").write_text("# En\n\nThe release of the app is on the Friday of the week.\n")
    (vault / "fr.md").write_text("# Fr\n\nUne sortie pour la version est prévue vendredi.\n")
    (vault / "it.md").write_text(
        "# It\n\nIl rilascio della versione è il venerdì della settimana.\n"
    )
    index = VaultIndex(vault)
    index.update()
    cases = {
        "en.md": ("the release of the app", "«release»", "«the»"),
        "fr.md": ("une sortie pour la version", "«sortie»", "«une»"),
        "it.md": ("il rilascio della versione", "«rilascio»", "«della»"),
    }
    for path, (query, marked, unmarked) in cases.items():
        text = snippets(index, query, [path])[path]
        assert marked in text and unmarked not in text.casefold(), text
    # A query made only of stop words still gets its words highlighted.
    assert content_words("the of") == ["the", "of"]
    assert "«the»" in snippets(index, "the of", ["en.md"])["en.md"].casefold()
    index.close()


def _clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors around a few directions, like embeddings (which are not isotropic)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, 64)).astype(np.float32)
    data = centres[rng.integers(0, 12, n)] + 0.3 * rng.standard_normal((n, 64)).astype(np.float32)
    return (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)


def test_past_the_size_search_is_approximate_and_finds_the_exact_top(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from desktop.vault import vectors

    monkeypatch.setattr(vectors, "APPROX_FROM", 500)
    monkeypatch.setattr(vectors, "REDUCED", 32)
    monkeypatch.setattr(vectors, "SHORTLIST", 150)
    data = _clustered(1200, 1)
    store = VectorStore(64)
    store.upsert((f"n{i}", data[i]) for i in range(400))
    assert not store.approximate  # below the size: exact
    store.upsert((f"n{i}", data[i]) for i in range(400, 1200))
    assert store.approximate
    queries = _clustered(40, 2)
    found = 0
    for q in queries:
        exact = [f"n{i}" for i in np.argsort(-(data @ q))[:10]]
        got = store.nearest(q, 10)
        assert len(got) == 10 and [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        # Scores are exact cosines, whatever the shortlist.
        assert all(abs(s - float(data[int(p[1:])] @ q)) < 1e-5 for p, s in got)
        found += len({p for p, _ in got} & set(exact))
    assert found / (10 * len(queries)) >= 0.95
    # Updates and removals reach the reduced matrix too.
    q = queries[0]
    store.upsert([("n5", q)])
    assert store.nearest(q, 1)[0][0] == "n5"
    store.remove(["n5"])
    assert all(p != "n5" for p, _ in store.nearest(q, 50))
    assert all(p != "n7" for p, _ in store.nearest(data[7], 5, exclude=["n7"]))
    # A filtered query stays exact.
    only = store.nearest(q, 3, allowed=lambda p: p.endswith("1"))
    exact_filtered = sorted(
        (f"n{i}" for i in range(1200) if i != 5 and str(i).endswith("1")),
        key=lambda p: -float(data[int(p[1:])] @ q),
    )[:3]
    assert [p for p, _ in only] == exact_filtered


def test_a_locked_index_is_waited_for_never_moved_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes opening a new vault's index at once: one finds the file locked while
    the other switches it to WAL. Locked means busy, not damaged: the index is opened once
    the lock is free, and the other process's file is left where it is."""
    from desktop.vault import db as db_module

    path = tmp_path / ".antinomy" / "index.db"
    db_module.IndexDatabase(path).close()
    real = db_module.IndexDatabase._open
    calls = {"n": 0}

    def locked_twice(self):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] <= 2:
            raise sqlite3.OperationalError("database is locked")
        return real(self)

    monkeypatch.setattr(db_module.IndexDatabase, "_open", locked_twice)
    opened = db_module.IndexDatabase(path)
    assert opened.rebuilt_because is None and calls["n"] == 3
    assert not list(path.parent.glob("*.broken-*"))
    opened.close()
    monkeypatch.setattr(db_module, "OPEN_WAIT_SECONDS", 0.0)
    calls["n"] = -100  # locked for good: a clear error, the file untouched
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        db_module.IndexDatabase(path)
    assert not list(path.parent.glob("*.broken-*")) and path.exists()

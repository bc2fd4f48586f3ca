"""No file can take the index down: each hostile file is skipped with its reason, the rest indexes.

Before these fixes a symlink loop raised ``RuntimeError``, a name with bytes
that are not UTF-8 raised ``UnicodeEncodeError`` in SQLite, a FIFO named
``x.md`` hung the indexer for ever and a YAML alias bomb took 79 s and 750 MB
before an ``OverflowError``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.vault.frontmatter import FrontmatterError, parse_frontmatter
from desktop.vault.index import IndexReport, VaultIndex

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file kinds")

GOOD = "---\ntitle: {name}\ntype: tension\n---\nA plain note called {name}.\n"


def alias_bomb(levels: int = 12, width: int = 9) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


def bounded_update(root: Path, seconds: float = 30.0) -> IndexReport:
    """``update()`` on a thread: a hang fails the test instead of stalling the suite."""
    out: list[IndexReport] = []
    errors: list[BaseException] = []

    def run() -> None:
        index = VaultIndex(root)
        try:
            out.append(index.update())
        except BaseException as exc:
            errors.append(exc)
        finally:
            index.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"indexing did not end within {seconds} s"
    if errors:
        raise errors[0]
    return out[0]


def skipped_reasons(report: IndexReport) -> dict[str, str | None]:
    return {e.path: e.reason for e in report.skipped}


def test_symlink_loops_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    os.symlink("self.md", tmp_path / "self.md")
    os.symlink("b.md", tmp_path / "a.md")
    os.symlink("a.md", tmp_path / "b.md")
    report = bounded_update(tmp_path)
    assert skipped_reasons(report) == {
        "self.md": "symlink_loop",
        "a.md": "symlink_loop",
        "b.md": "symlink_loop",
    }
    assert report.notes_indexed == 1
    assert "symlink loop 3" in report.summary()


def test_a_name_that_is_not_utf8_is_skipped_and_shown_escaped(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    bad = os.fsdecode(b"caf\xe9.md")
    (tmp_path / bad).write_text("text", encoding="utf-8")
    report = bounded_update(tmp_path)
    [entry] = report.skipped
    assert (entry.path, entry.reason) == ("caf\\xe9.md", "bad_name")
    assert "not valid UTF-8" in (entry.detail or "")
    assert report.notes_indexed == 1


def test_a_fifo_named_md_is_never_opened(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    os.mkfifo(tmp_path / "pipe.md")
    report = bounded_update(tmp_path, seconds=10)
    assert skipped_reasons(report) == {"pipe.md": "not_regular"}
    assert "FIFO" in (report.skipped[0].detail or "")


def test_a_fifo_swapped_in_after_the_walk_is_not_read(tmp_path: Path) -> None:
    from desktop.vault.notes import NoteSkipped, read_note

    os.mkfifo(tmp_path / "late.md")
    start = time.perf_counter()
    with pytest.raises(NoteSkipped) as caught:
        read_note(tmp_path, "late.md")
    assert caught.value.reason == "not_regular"
    assert time.perf_counter() - start < 2


def test_an_alias_bomb_is_refused_quickly_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    (tmp_path / "bomb.md").write_text(alias_bomb(), encoding="utf-8")
    start = time.perf_counter()
    report = bounded_update(tmp_path)
    assert time.perf_counter() - start < 5
    [entry] = report.skipped
    assert entry.reason == "invalid_yaml"
    assert "expand to more than 10,000 values" in (entry.detail or "")
    assert report.notes_indexed == 1


def test_a_self_referring_alias_is_refused() -> None:
    with pytest.raises(FrontmatterError, match=r"\*a refers to the node that contains it"):
        parse_frontmatter("---\nx: &a [1, *a]\n---\nbody\n")


def test_ordinary_aliases_still_read() -> None:
    data = parse_frontmatter("---\nbase: &b [x, y]\ncopy: *b\nname: &n Ada\nwho: *n\n---\n")
    assert data == {"base": ["x", "y"], "copy": ["x", "y"], "name": "Ada", "who": "Ada"}


def test_update_paths_survives_the_same_files(tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text(GOOD.format(name="ok"), encoding="utf-8")
    index = VaultIndex(tmp_path)
    try:
        index.update()
        os.symlink("loop.md", tmp_path / "loop.md")
        os.mkfifo(tmp_path / "pipe.md")
        report = index.update_paths(["loop.md", "pipe.md", "ok.md"])
    finally:
        index.close()
    assert skipped_reasons(report) == {"loop.md": "symlink_loop", "pipe.md": "not_regular"}
    assert report.notes_indexed == 1


# ---------------------------------------------------------------- random vaults

Maker = Callable[[Path, str], tuple[str, str]]


def _good(root: Path, name: str) -> tuple[str, str]:
    (root / f"{name}.md").write_text(GOOD.format(name=name), encoding="utf-8")
    return f"{name}.md", "indexed"


def _self_loop(root: Path, name: str) -> tuple[str, str]:
    os.symlink(f"{name}.md", root / f"{name}.md")
    return f"{name}.md", "symlink_loop"


def _pair_loop(root: Path, name: str) -> tuple[str, str]:
    os.symlink(f"{name}-b.md", root / f"{name}.md")
    os.symlink(f"{name}.md", root / f"{name}-b.md")
    return f"{name}.md", "symlink_loop"  # its partner is checked through the count below


def _bad_name(root: Path, name: str) -> tuple[str, str]:
    (root / os.fsdecode(name.encode() + b"\xff.md")).write_text("x", encoding="utf-8")
    return f"{name}\\xff.md", "bad_name"


def _fifo(root: Path, name: str) -> tuple[str, str]:
    os.mkfifo(root / f"{name}.md")
    return f"{name}.md", "not_regular"


def _bomb(root: Path, name: str) -> tuple[str, str]:
    (root / f"{name}.md").write_text(alias_bomb(levels=8), encoding="utf-8")
    return f"{name}.md", "invalid_yaml"


def _broken_yaml(root: Path, name: str) -> tuple[str, str]:
    (root / f"{name}.md").write_text("---\nkey: [unclosed\n---\nbody\n", encoding="utf-8")
    return f"{name}.md", "invalid_yaml"


MAKERS: dict[str, Maker] = {
    "good": _good,
    "self_loop": _self_loop,
    "pair_loop": _pair_loop,
    "bad_name": _bad_name,
    "fifo": _fifo,
    "bomb": _bomb,
    "broken_yaml": _broken_yaml,
}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(st.sampled_from(sorted(MAKERS)), min_size=1, max_size=12))
def test_random_hostile_vaults_index_every_good_note_and_report_every_bad_file(
    kinds: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        expected: dict[str, str] = {}
        for i, kind in enumerate(kinds):
            path, state = MAKERS[kind](root, f"n{i}")
            expected[path] = state
            if kind == "pair_loop":
                expected[f"n{i}-b.md"] = "symlink_loop"
        report = bounded_update(root)
        got = {e.path: ("indexed" if e.state == "indexed" else e.reason) for e in coverage(root)}
        assert got == expected
        assert report.notes_indexed == sum(1 for s in expected.values() if s == "indexed")
        assert len(report.skipped) == sum(1 for s in expected.values() if s != "indexed")


def coverage(root: Path) -> list:  # type: ignore[type-arg]
    index = VaultIndex(root)
    try:
        return index.coverage()
    finally:
        index.close()

"""The one atomic-write helper, and the state files written through it."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path

import pytest

from desktop.flows.hunter.records import ScanRun, load_last_run, save_last_run
from foundation import atomic

ROOT = Path(__file__).resolve().parents[1]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_bytes_and_json_replace_the_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    atomic.write_json(target, {"é": [1, 2]})
    assert target.read_bytes() == '{\n  "é": [\n    1,\n    2\n  ]\n}\n'.encode()
    atomic.write_json(target, {"a": 1}, indent=None, newline=False)
    assert target.read_text(encoding="utf-8") == '{"a": 1}'
    atomic.write_bytes(target, b"\x00raw")
    assert target.read_bytes() == b"\x00raw"
    assert leftovers(target.parent) == []


def test_mode_is_the_new_files(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_text("old")
    os.chmod(target, 0o644)
    atomic.write_text(target, "new", mode=atomic.PRIVATE_MODE)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_a_failure_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic.replacing(target) as out:
        out.write(b"half")
        raise RuntimeError("crash mid-write")
    with pytest.raises(TypeError):
        atomic.write_json(target, {"x": object()})
    assert target.read_text() == "old"
    assert leftovers(tmp_path) == []


def test_durable_writes_fsync_the_file_and_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    atomic.write_bytes(tmp_path / "a", b"x")
    assert len(synced) == 2  # the file, then the folder holding the new name
    synced.clear()
    atomic.write_bytes(tmp_path / "b", b"x", durable=False)
    assert synced == []


def test_the_last_scan_survives_concurrent_saves(tmp_path: Path) -> None:
    """It used one fixed ``last-scan.tmp``: two saves at once lost the rename (ENOENT)."""
    errors: list[BaseException] = []
    runs = [
        ScanRun(started_at="2026-12-01T00:00:00Z", mode="classic", status="ok", notes_examined=n)
        for n in range(8)
    ]

    def save(run: ScanRun) -> None:
        try:
            for _ in range(20):
                save_last_run(tmp_path, run)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=save, args=(r,)) for r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    last = load_last_run(tmp_path)
    assert last is not None and last.notes_examined in range(8)
    assert leftovers(tmp_path / ".antinomy") == []


def test_no_module_renames_its_own_temp_file() -> None:
    """State files go through foundation/atomic.py; only the journal keeps its own."""
    allowed = {
        "foundation/atomic.py",
        "inference/derived.py",  # a prepared model file, moved into place once
        "inference/registry.py",  # a model joined from its parts, streamed (1 GB), hash-checked
        "desktop/resources.py",  # a whole folder (the sample vault copy), not a file
    }
    found = []
    for folder in ("desktop", "foundation", "inference"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel in allowed or rel.startswith("desktop/vault/transactions/"):
                continue
            text = path.read_text(encoding="utf-8")
            if re.search(r"os\.replace\(|\.replace\(path\)|\.replace\(target\)|mkstemp\(", text):
                found.append(rel)
    assert found == []


def test_json_written_is_json(tmp_path: Path) -> None:
    target = atomic.write_json(tmp_path / "x.json", {"k": "v"}, indent=1)
    assert json.loads(target.read_text()) == {"k": "v"}

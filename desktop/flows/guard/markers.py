"""Which decisions already warned in which agent session."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from pathlib import Path

from desktop.flows.guard.constants import MARKER_MAX_AGE
from desktop.vault.layout import state_dir
from foundation import atomic


class SessionMarkers:
    """Which decisions already warned in which agent session (files, so restarts keep them)."""

    def __init__(self, root: Path) -> None:
        self.folder = state_dir(root, "guard", "sessions")
        self._lock = threading.Lock()
        self._pruned_at = 0.0

    def _file(self, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        return self.folder / f"{digest}.json"

    def warned(self, session_id: str) -> set[str]:
        try:
            data = json.loads(self._file(session_id).read_text(encoding="utf-8"))
            return set(data.get("warned", []))
        except (OSError, ValueError):
            return set()

    def mark(self, session_id: str, path: str) -> None:
        with self._lock:
            warned = self.warned(session_id) | {path}
            # Atomic but not fsynced: a warning's check waits for this write, and a marker
            # lost to a power cut costs one repeated warning, nothing more.
            atomic.write_json(
                self._file(session_id),
                {"session": session_id, "warned": sorted(warned)},
                durable=False,
            )
            if time.time() - self._pruned_at > 3600:
                self.prune()

    def prune(self, max_age: float = MARKER_MAX_AGE) -> int:
        """Delete markers untouched for ``max_age`` seconds; returns how many."""
        self._pruned_at = time.time()
        cutoff = time.time() - max_age
        removed = 0
        for marker in self.folder.glob("*.json"):
            try:
                if marker.stat().st_mtime < cutoff:
                    marker.unlink()
                    removed += 1
            except OSError:
                continue
        return removed

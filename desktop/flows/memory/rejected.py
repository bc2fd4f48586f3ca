"""Rejected fragments: kept with their reasons, listed, and re-queued on request.

``.antinomy/memory/rejected.jsonl`` holds one fragment per line (appended
before the transaction that consumes its input, deduplicated by id: a re-run
after a crash proposes the same fragments again and adds nothing).
``.antinomy/memory/requeue.json`` holds the ids the user re-queued; the next
consolidation re-reads the fragment's cited lines with two lines of context
on each side (or its whole input when no cited line existed), and the
progress journal marks the requeue done in the same transaction as its facts.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from desktop.flows.memory.batches import write_private
from desktop.flows.memory.errors import UnknownFragment
from desktop.vault.layout import state_dir


@dataclass(frozen=True)
class RejectedFragment:
    fragment_id: str
    reason: str
    detail: str
    subject: str
    text: str
    #: Cited line ids that exist.
    line_ids: tuple[str, ...]
    #: The input it came from: ``2026-11-30#L1-L40`` or ``requeue r-…``.
    source: str
    #: Line ids of that input (for a requeue when nothing cited exists).
    source_ids: tuple[str, ...]
    at: str
    proposal: dict[str, Any]


def fragment_id(source: str, proposal: dict[str, Any]) -> str:
    canon = json.dumps([source, proposal], sort_keys=True, ensure_ascii=False, default=str)
    return "r-" + hashlib.sha256(canon.encode("utf-8")).hexdigest()[:10]


class RejectedStore:
    def __init__(self, root: Path) -> None:
        self.folder = state_dir(root, "memory")
        self.path = self.folder / "rejected.jsonl"
        self.requeue_path = self.folder / "requeue.json"

    def all(self) -> list[RejectedFragment]:
        out: dict[str, RejectedFragment] = {}
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        for line in text.splitlines():
            try:
                d = json.loads(line)
                frag = RejectedFragment(
                    **{**d, "line_ids": tuple(d["line_ids"]), "source_ids": tuple(d["source_ids"])}
                )
            except (ValueError, TypeError, KeyError):
                continue  # a torn last line after a crash
            out.setdefault(frag.fragment_id, frag)
        return list(out.values())

    def get(self, fid: str) -> RejectedFragment:
        for frag in self.all():
            if frag.fragment_id == fid:
                return frag
        raise UnknownFragment(
            f"No rejected fragment {fid!r} — list them with `antinomy memory rejected`."
        )

    def add(self, fragments: list[RejectedFragment]) -> None:
        known = {f.fragment_id for f in self.all()}
        new = [f for f in fragments if f.fragment_id not in known]
        if not new:
            return
        payload = "".join(json.dumps(asdict(f), ensure_ascii=False) + "\n" for f in new)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, payload.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def requested(self) -> dict[str, str]:
        try:
            data = json.loads(self.requeue_path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def request(self, fid: str, at: str) -> None:
        self.get(fid)  # raises for an unknown id
        data = self.requested()
        data.setdefault(fid, at)
        write_private(self.requeue_path, json.dumps(data, indent=1).encode("utf-8"))

"""Import of Claude Code transcript files (``~/.claude/projects/…/<session>.jsonl``).

Each JSONL record with ``type`` ``user`` or ``assistant`` carries a
``message`` whose ``content`` is a string or a list of blocks. Kept: text
blocks of the primary conversation. Skipped as tool noise: ``tool_use``,
``tool_result``, ``thinking`` and image blocks, sidechain (subagent) records,
meta records, and the CLI's own wrappers (``<command-name>``,
``<local-command-stdout>``, ``<system-reminder>`` …). Every kept turn goes
through :func:`capture_turn`, so masking and withdrawal apply as for live turns.

Times are checked before anything is captured: a turn dated out of range
(:func:`~.capture.check_time`: before 1970, or ahead of this computer's clock)
refuses the whole file with its line number, and nothing is imported. A
missing or unreadable time is the time of import, as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from desktop.flows.memory.capture import capture_turn, check_time
from desktop.flows.memory.errors import CaptureInvalid, TranscriptInvalid
from desktop.flows.progress import plural

_NOISE = re.compile(
    r"^\s*<(command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|system-reminder|user-prompt-submit-hook|bash-input|bash-stdout|"
    r"bash-stderr)>",
)
_SESSION_SAFE = re.compile(r"[^A-Za-z0-9._:-]")


@dataclass(frozen=True)
class ImportReport:
    path: str
    turns_captured: int
    turns_skipped: int
    lines_written: int
    secrets_masked: int
    withdrawn_turns: int
    bad_records: int

    def summary(self) -> str:
        """The report in one line, as the CLI prints it and the window shows it."""
        return (
            f"imported {plural(self.turns_captured, 'turn')} "
            f"({plural(self.lines_written, 'line')}) from "
            f"{self.path}; skipped {self.turns_skipped} (tool noise, subagents, blank); "
            f"{plural(self.secrets_masked, 'secret')} masked; "
            f"{plural(self.withdrawn_turns, 'withdrawal')}"
        )


#: ``progress(done, total, what)``: turns captured so far of those the file holds.
ImportProgress = Callable[[int, int, str], None]


def import_transcript(
    vault: str | Path, file: str | Path, *, progress: ImportProgress | None = None
) -> ImportReport:
    """Capture every user/assistant text turn of a Claude Code JSONL transcript."""
    path = Path(file)
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TranscriptInvalid(
            f"No transcript at {path} — give the path of a .jsonl file."
        ) from None
    except UnicodeDecodeError:
        raise TranscriptInvalid(
            f"{path} is not UTF-8 text — is it a Claude Code transcript?"
        ) from None
    except IsADirectoryError:
        raise TranscriptInvalid(
            f"{path} is a folder — give one transcript file (.jsonl) inside it."
        ) from None
    except OSError as exc:
        raise TranscriptInvalid(
            f"Cannot read {path}: {exc.strerror or exc} — nothing was imported."
        ) from None
    records: list[tuple[int, dict[str, Any]]] = []
    bad = 0
    for number, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(value, dict):
            records.append((number, value))
        else:
            bad += 1
    if not any(r.get("type") in ("user", "assistant") for _, r in records):
        raise TranscriptInvalid(
            f"{path} has no user or assistant messages ({plural(bad, 'unreadable line')}) — "
            "give a Claude Code transcript (.jsonl, one JSON record per line)."
        )
    turns = [(number, record, _turn(record)) for number, record in records]
    for number, _, turn in turns:
        if turn is not None and turn[2] is not None:
            try:
                check_time(turn[2])
            except CaptureInvalid as err:
                raise TranscriptInvalid(
                    f"{path} line {number}: {err} Nothing was imported."
                ) from None
    captured = skipped = lines = secrets = withdrawn = 0
    fallback_session = _SESSION_SAFE.sub("-", path.stem)[:100] or "import"
    total = sum(turn is not None for _, _, turn in turns)
    done = 0
    for _, record, turn in turns:
        if turn is not None and progress is not None:
            progress(done, total, f"capturing turn {done + 1} of {total} from {path.name}")
            done += 1
        if turn is None:
            skipped += 1
            continue
        role, text, ts = turn
        session = _SESSION_SAFE.sub("-", str(record.get("sessionId") or fallback_session))[:128]
        result = capture_turn(vault, role=role, text=text, session_id=session, ts=ts)
        if result.status == "skipped":
            skipped += 1
            continue
        captured += 1
        lines += len(result.line_ids)
        secrets += result.secrets_masked
        withdrawn += result.status == "withdrawn"
    if progress is not None:
        progress(total, total, f"captured {captured} turns from {path.name}")
    return ImportReport(str(path), captured, skipped, lines, secrets, withdrawn, bad)


def _turn(record: dict[str, Any]) -> tuple[str, str, datetime | None] | None:
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isSidechain") or record.get("isMeta"):
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
    else:
        return None
    text = "\n".join(t for t in texts if not _NOISE.match(t)).strip()
    if not text:
        return None
    return str(kind), text, _timestamp(record.get("timestamp"))


def _timestamp(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None

"""Capture: one conversation turn → masked, numbered lines in the open raw batch.

Only the ``primary`` context is kept (a subagent's turns are not the user's
conversation). Secrets are masked before anything is written; a withdrawal
instruction blanks the lines it names (:mod:`.withdraw`).

A turn's time must lie between 1970-01-01 and a few minutes ahead of this
computer's clock (:func:`check_time`): a batch is named after the day of its
first turn and batches are taken in that order, so a turn dated 9999 would
hold every later batch open, and one dated in year 1 would name a batch no
listing reads. Out of range is refused with an error naming ``timestamp``; up
to :data:`CLOCK_SLACK` ahead (clocks drift) is recorded as now.

Thread-safety: any thread or process may call these; the raw folder's lock
serialises the writes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from desktop.flows.memory.batches import RawLine, RawStore, format_time, now_utc, text_lines
from desktop.flows.memory.conversations import refresh_after_withdrawal
from desktop.flows.memory.errors import CaptureInvalid
from desktop.flows.memory.secrets import mask_secrets
from desktop.flows.memory.withdraw import withdrawal_scope
from desktop.vault.layout import vault_root

CaptureStatus = Literal["captured", "skipped", "withdrawn"]
ROLES = ("user", "assistant")
CONTEXTS = ("primary", "subagent")
MAX_TURN_CHARS = 100_000
_SESSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
#: How far ahead of this computer's clock a turn's time may be (recorded as now).
CLOCK_SLACK = timedelta(minutes=5)


@dataclass(frozen=True)
class CaptureResult:
    status: CaptureStatus
    #: Line ids written for this turn (``2026-11-30#L12``…).
    line_ids: tuple[str, ...] = ()
    secrets_masked: int = 0
    #: Lines of earlier turns withdrawn by this one.
    withdrawn: tuple[str, ...] = ()
    reason: str = ""


def check_turn(*, role: object, text: object, session_id: object, context: object) -> None:
    """Raise :class:`CaptureInvalid` naming the bad field."""
    if role not in ROLES:
        raise CaptureInvalid(f"role must be 'user' or 'assistant', not {role!r}.")
    if not isinstance(text, str):
        raise CaptureInvalid("text must be a string (the turn's words).")
    if len(text) > MAX_TURN_CHARS:
        raise CaptureInvalid(
            f"text is {len(text)} characters; at most {MAX_TURN_CHARS} per turn — split it."
        )
    if not isinstance(session_id, str) or not _SESSION.fullmatch(session_id):
        raise CaptureInvalid(
            "session_id must be 1–128 characters of letters, digits and . _ : - "
            f"(got {session_id!r})."
        )
    if context not in CONTEXTS:
        raise CaptureInvalid(f"context must be 'primary' or 'subagent', not {context!r}.")


def check_time(ts: datetime, *, now: datetime | None = None) -> datetime:
    """``ts`` in UTC, clamped to ``now`` when at most :data:`CLOCK_SLACK` ahead;
    raises :class:`CaptureInvalid` naming ``timestamp`` when out of range."""
    now = now or now_utc()
    aware = ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    try:
        utc = aware.astimezone(UTC)
    except (OverflowError, ValueError):
        utc = None
    if utc is None or utc < EARLIEST or utc > now + CLOCK_SLACK:
        raise CaptureInvalid(
            f"timestamp {ts.isoformat()} is out of range: give a time from 1970-01-01 to "
            f"now ({format_time(now)}; at most {CLOCK_SLACK.seconds // 60} minutes ahead), "
            "or leave timestamp out to use the time of capture."
        )
    return min(utc, now)


def capture_turn(
    vault: str | Path,
    *,
    role: str,
    text: str,
    session_id: str,
    ts: datetime | None = None,
    context: str = "primary",
) -> CaptureResult:
    """Record one turn. Returns what was written; raises :class:`CaptureInvalid` on bad input
    (a time out of range included: see :func:`check_time`)."""
    check_turn(role=role, text=text, session_id=session_id, context=context)
    when = check_time(ts) if ts is not None else now_utc()
    if context != "primary":
        return CaptureResult("skipped", reason="only the primary conversation is remembered")
    masked = mask_secrets(text)
    lines = text_lines(masked.text)
    if not lines:
        return CaptureResult("skipped", reason="nothing but blank text")
    store = RawStore(vault_root(vault))
    time = format_time(when)
    scope = withdrawal_scope(text) if role == "user" else None
    with store.locked():
        earlier = _turn_to_withdraw(store, session_id) if scope == "previous" else ()
        added = store.append(time=time, role=role, session=session_id, texts=lines)  # type: ignore[arg-type]
        if scope is None:
            return CaptureResult("captured", _ids(added), masked.count)
        store.withdraw(_ids(added) + earlier)
    # A line already shown in a conversation note leaves it too (a journaled write).
    refresh_after_withdrawal(store.root, store, earlier)
    return CaptureResult("withdrawn", _ids(added), masked.count, earlier, f"withdrawn ({scope})")


def close_open_batch(vault: str | Path, *, reason: str = "on demand") -> str | None:
    """Close the open batch (session end, Consolidate now); returns its id, or None."""
    store = RawStore(vault_root(vault))
    with store.locked():
        batch = store.open_batch()
        if batch is None or not batch.lines:
            return None
        store.close(batch.batch_id, reason)
        return batch.batch_id


def end_session(vault: str | Path, *, session_id: str) -> str | None:
    """A session ended (hook): close the open batch if that session spoke in it."""
    store = RawStore(vault_root(vault))
    with store.locked():
        batch = store.open_batch()
        if batch is None or not any(line.session == session_id for line in batch.lines):
            return None
        store.close(batch.batch_id, f"session end ({session_id})")
        return batch.batch_id


def close_stale_batch(vault: str | Path, *, today: str) -> str | None:
    """Close the open batch if it is from an earlier day than ``today`` (YYYY-MM-DD)."""
    store = RawStore(vault_root(vault))
    with store.locked():
        batch = store.open_batch()
        if batch is None or batch.day >= today or not batch.lines:
            return None
        store.close(batch.batch_id, "day change")
        return batch.batch_id


def _turn_to_withdraw(store: RawStore, session: str) -> tuple[str, ...]:
    """The session's previous user turn and the assistant lines after it."""
    ids = store.batch_ids()[-2:]
    lines: list[RawLine] = [
        line for b in ids for line in store.read(b).lines if line.session == session
    ]
    picked: list[str] = []
    i = len(lines) - 1
    while i >= 0 and lines[i].role == "assistant":
        picked.append(lines[i].line_id)
        i -= 1
    if i < 0:
        return ()
    while i >= 0 and lines[i].role == "user":
        picked.append(lines[i].line_id)
        if not lines[i].continues:
            break
        i -= 1
    return tuple(reversed(picked))


def _ids(lines: tuple[RawLine, ...]) -> tuple[str, ...]:
    return tuple(line.line_id for line in lines)

"""A live, Qt-free log of guard checks for the GUI's Guard panel and for tests.

The endpoint appends one :class:`GuardRecord` per ``/v1/guard/check``; the
panel registers a listener and shows them. Listeners are called on the
endpoint's thread: a Qt panel must hop to the GUI thread (emit a signal).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GuardRecord:
    #: Wall-clock time of the check (``time.time()``).
    time: float
    tool: str
    #: "warn", "ask", "allow" (below threshold), "repeat" (already warned this
    #: session), "off" (guard not enabled here), "skip" (summary too short),
    #: "error" (the check failed; the hook allowed the tool).
    verdict: str
    score: float | None
    decision_id: str | None
    decision_title: str | None
    decision_path: str | None
    #: Server-side milliseconds from request to answer.
    latency_ms: float
    session_id: str = ""
    cwd: str = ""
    summary: str = ""


GuardListener = Callable[[GuardRecord], None]


class GuardLog:
    """The last ``capacity`` checks, newest last. Thread-safe."""

    def __init__(self, capacity: int = 500) -> None:
        self._lock = threading.Lock()
        self._records: deque[GuardRecord] = deque(maxlen=capacity)
        self._listeners: list[GuardListener] = []

    def add(self, record: GuardRecord) -> None:
        with self._lock:
            self._records.append(record)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(record)
            except Exception:  # a broken panel must not break the endpoint
                log.exception("guard log listener failed")

    def records(self) -> list[GuardRecord]:
        with self._lock:
            return list(self._records)

    def add_listener(self, listener: GuardListener) -> Callable[[], None]:
        """Call ``listener(record)`` for every new check; returns a function that removes it."""
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

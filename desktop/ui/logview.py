"""Python logging into the GUI: a handler that keeps recent records and signals new ones."""

from __future__ import annotations

import logging
from collections import deque

from PySide6.QtCore import QObject, Signal

MAX_LINES = 2000


class _Emitter(QObject):
    sig_log_record = Signal(str)
    """A formatted log line (emitted from whatever thread logged it; connect queued)."""


class QtLogHandler(logging.Handler):
    """Keeps the last ``MAX_LINES`` lines; any thread may log through it."""

    def __init__(self, level: int = logging.INFO) -> None:
        super().__init__(level)
        self.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S")
        )
        self.lines: deque[str] = deque(maxlen=MAX_LINES)
        self.emitter = _Emitter()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # a bad format string must not break the app
            self.handleError(record)
            return
        self.lines.append(line)
        self.emitter.sig_log_record.emit(line)


def install_log_handler() -> QtLogHandler:
    """Attach a :class:`QtLogHandler` to the root logger (INFO for antinomy's own loggers)."""
    handler = QtLogHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    for name in ("desktop", "inference"):
        logging.getLogger(name).setLevel(logging.INFO)
    return handler


def remove_log_handler(handler: QtLogHandler) -> None:
    logging.getLogger().removeHandler(handler)

"""Errors of the ingest flow; each message names the file, the reason and the next step."""

from __future__ import annotations

from foundation.errors import AntinomyError


class SourceRefused(AntinomyError):
    """The source file cannot be ingested (type, size, no text, encryption, navigation only).

    ``reason`` is a stable code for scripts and tests: ``missing``, ``not_a_file``,
    ``unsupported``, ``too_large``, ``empty``, ``not_text``, ``pdf_encrypted``,
    ``pdf_unreadable``, ``pdf_no_text``, ``html_navigation``.
    """

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class NoPendingPlan(AntinomyError):
    """``--approve HASH`` was given but no previewed plan is saved for this file."""

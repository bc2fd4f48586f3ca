"""Errors of the memory flows; each message names the next step."""

from __future__ import annotations

from foundation.errors import AntinomyError


class MemoryError_(AntinomyError):
    """Root of the memory errors (named with a trailing _ so it never shadows the builtin)."""


class CaptureInvalid(MemoryError_):
    """A turn or a payload that cannot be captured; the message says which field is wrong."""


class TranscriptInvalid(MemoryError_):
    """A transcript file that is not a Claude Code JSONL transcript."""


class UnknownFragment(MemoryError_):
    """A rejected-fragment id that is not on record."""


class RecallInvalid(MemoryError_):
    """A recall request with a bad query or k."""


class ConsolidationBusy(MemoryError_):
    """Another consolidation holds the vault's lock (in this process or another)."""

    def __init__(
        self,
        message: str = "A consolidation is already running for this vault — wait for it to finish.",
    ) -> None:
        super().__init__(message)

"""The exception root shared by every Antinomy layer.

Messages are written for the user: each names what went wrong and the next
step. ``desktop`` subclasses :class:`AntinomyError` for its own failures.
"""

from __future__ import annotations


class AntinomyError(Exception):
    """Root of every error Antinomy reports to a user."""


class ModelUnavailable(AntinomyError):
    """A model file or backend cannot be used; the message names the fix."""


class GenerationError(AntinomyError):
    """A transport or engine failure during a completion (never retried)."""


class Stopped(AntinomyError):
    """The user pressed Stop; never retried."""

    def __init__(self, message: str = "Stopped by the user.") -> None:
        super().__init__(message)

"""Refusals of the review actions. Each message names the note and the next step."""

from __future__ import annotations

from desktop.vault.errors import AmbiguousNote, NoteNotFound, VaultError

__all__ = [
    "AmbiguousNote",
    "BadInput",
    "DismissalListInvalid",
    "NotEligible",
    "NoteNotFound",
    "PrincipleExists",
    "ReviewRefused",
]


class ReviewRefused(VaultError):
    """The action cannot be done on these notes; nothing was written."""


class NotEligible(ReviewRefused):
    """The note's type or status does not allow this action (e.g. not an open tension)."""


class PrincipleExists(ReviewRefused):
    """A note with the new principle's title already exists."""


class BadInput(ReviewRefused):
    """A title, clause or motive given by the user cannot be used as it is."""


class DismissalListInvalid(ReviewRefused):
    """``hunter_false_positives`` holds something that is not a list of note names."""

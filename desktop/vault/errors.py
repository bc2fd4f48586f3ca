"""Errors of the vault layer. Messages are for the user and name the next step."""

from __future__ import annotations

from foundation.errors import AntinomyError


class VaultError(AntinomyError):
    """Something about the vault prevents the operation."""


class VaultNotFound(VaultError):
    """The vault folder does not exist or is not a folder."""


class VaultChanged(VaultError):
    """A file changed since it was read or planned; nothing was written.

    ``paths`` are the vault-relative paths that differ.
    """

    def __init__(self, message: str, paths: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.paths = paths


class StateUnsafe(VaultError):
    """A link (or a file) stands where Antinomy keeps its state in the vault; nothing was
    read or written through it."""


class VaultBusy(VaultError):
    """Another writer holds the vault's mutation lock."""


class NoteNotFound(VaultError):
    """No note in the vault has this path, basename or alias."""


class AmbiguousNote(VaultError):
    """A name fits several notes; ``candidates`` are their paths."""

    def __init__(self, message: str, candidates: tuple[str, ...]) -> None:
        super().__init__(message)
        self.candidates = candidates

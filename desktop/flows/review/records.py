"""What the review actions return, and the frontmatter keys they write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from desktop.flows.hunter.dismissals import FALSE_POSITIVES

__all__ = [
    "DEFAULT_PRINCIPLES_FOLDER",
    "FALSE_POSITIVES",
    "DismissedPair",
    "KeepIn",
    "ReviewResult",
]

#: Where a dismissal is written: in the two notes' ``hunter_false_positives`` (Antinomia
#: reads them), or in the vault's ``.antinomy/dismissed.json`` (the notes are not touched).
KeepIn = Literal["notes", "antinomy"]
KEEP_IN: tuple[KeepIn, ...] = ("notes", "antinomy")
#: Where new principle notes go unless the caller gives another folder.
DEFAULT_PRINCIPLES_FOLDER = "Antinomy/Principles"


@dataclass(frozen=True)
class ReviewResult:
    """The outcome of one review action: one transaction, undoable by its id.

    ``operation_id`` is ``None`` when the vault already held the result and
    nothing was written (e.g. dismissing a pair that is already dismissed);
    otherwise it is the id ``antinomy tx undo`` takes. ``changed`` are the
    vault-relative paths that were replaced, ``created`` the new files.
    """

    operation_id: str | None
    changed: tuple[str, ...]
    created: tuple[str, ...]
    summary: str = ""
    #: What the scan will learn from the decision ("kept as 1 dismissed pair to learn
    #: from"), or why it could not be kept (the notes still say it). "" when nothing.
    learned: str = ""


@dataclass(frozen=True)
class DismissedPair:
    """A dismissed pair as the vault records it.

    ``a`` and ``b`` name the notes as a dismissal does (``a`` sorts first): the basename,
    or the path without ``.md`` when several notes share the basename. ``path_a``/``path_b``
    are the notes' paths, ``None`` when no note (or several notes) answer to that name.
    ``missing`` lists the names with no note (deleted or renamed); ``ambiguous`` the
    names several notes answer to. ``reciprocal`` is False when only one of the two notes
    lists the other (a half-written dismissal, e.g. by another tool): the Hunter still
    hides the pair. ``kept_in``: where it is written — ``notes``, ``antinomy``
    (``.antinomy/dismissed.json``), or both.
    """

    a: str
    b: str
    path_a: str | None
    path_b: str | None
    missing: tuple[str, ...]
    ambiguous: tuple[str, ...] = ()
    reciprocal: bool = True
    kept_in: tuple[KeepIn, ...] = ("notes",)

"""What the review actions return, and the frontmatter keys they write."""

from __future__ import annotations

from dataclasses import dataclass

#: Antinomia's key: basenames of the notes a pair with which was dismissed.
FALSE_POSITIVES = "hunter_false_positives"
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
    """A dismissed pair as the notes record it.

    ``a`` and ``b`` are basenames (``a`` sorts first). ``path_a``/``path_b``
    are the notes' paths, ``None`` when no note (or several notes) have that
    basename. ``missing`` lists the basenames with no note (deleted or
    renamed); ``ambiguous`` those shared by several notes. ``reciprocal`` is
    False when only one of the two notes lists the other (a half-written
    dismissal, e.g. by another tool): the Hunter still hides the pair.
    """

    a: str
    b: str
    path_a: str | None
    path_b: str | None
    missing: tuple[str, ...]
    ambiguous: tuple[str, ...] = ()
    reciprocal: bool = True

"""Review actions: dismiss, undismiss, elevate, resolve, defeat — each one
journaled, undoable transaction that changes only the frontmatter keys it is about (or,
for a vault that keeps its dismissals out of its notes, ``.antinomy/dismissed.json``) —
and what the scan learns from them: each decision a label (``ReviewResult.learned``
says so), ``dismiss_like`` to hide every pair like one, ``unhide_frame`` and
``reset_learning`` to take that back; ``ignore_sentence`` / ``ignore_note`` /
``ignore_folder`` to leave things out of every scan (``remove_ignored`` takes one back).

All paths are vault-relative (an unambiguous basename is accepted too).
``seen`` maps a path to the sha256 of the bytes the user saw (``Pair.sha_a``);
a note changed since raises :class:`~desktop.vault.errors.VaultChanged` and
nothing is written. Every function is blocking: call it off the GUI thread.
"""

from __future__ import annotations

from desktop.flows.review.decide import (
    available_actions,
    defeat_note,
    elevate_tension,
    resolve_tension,
)
from desktop.flows.review.dismiss import dismiss_like, dismiss_pair, undismiss_pair
from desktop.flows.review.dismissed_list import list_dismissed
from desktop.flows.review.errors import (
    AmbiguousNote,
    BadInput,
    DismissalListInvalid,
    NotEligible,
    NoteNotFound,
    PrincipleExists,
    ReviewRefused,
)
from desktop.flows.review.ignore import (
    ignore_folder,
    ignore_note,
    ignore_sentence,
    list_ignored,
    remove_ignored,
)
from desktop.flows.review.learn import (
    reset_learning,
    undo_review,
    unhide_frame,
    unhide_frames_of,
)
from desktop.flows.review.records import (
    DEFAULT_PRINCIPLES_FOLDER,
    FALSE_POSITIVES,
    KEEP_IN,
    DismissedPair,
    KeepIn,
    ReviewResult,
)
from desktop.flows.review.renames import RenameFix, find_rename_fixes, fix_renames, infer_renames
from desktop.flows.review.vaultfiles import VaultFiles

__all__ = [
    "DEFAULT_PRINCIPLES_FOLDER",
    "FALSE_POSITIVES",
    "KEEP_IN",
    "AmbiguousNote",
    "BadInput",
    "DismissalListInvalid",
    "DismissedPair",
    "KeepIn",
    "NotEligible",
    "NoteNotFound",
    "PrincipleExists",
    "RenameFix",
    "ReviewRefused",
    "ReviewResult",
    "VaultFiles",
    "available_actions",
    "defeat_note",
    "dismiss_like",
    "dismiss_pair",
    "elevate_tension",
    "find_rename_fixes",
    "fix_renames",
    "ignore_folder",
    "ignore_note",
    "ignore_sentence",
    "infer_renames",
    "list_dismissed",
    "list_ignored",
    "remove_ignored",
    "reset_learning",
    "resolve_tension",
    "undismiss_pair",
    "undo_review",
    "unhide_frame",
    "unhide_frames_of",
]

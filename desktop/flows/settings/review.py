"""A vault's review settings, in ``<vault>/.antinomy/review/settings.json``: where its
dismissals are written. They travel with the vault (a copy or a clone keeps them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from desktop.flows.review.records import KEEP_IN, KeepIn
from desktop.flows.settings.vault import (
    load_vault_settings,
    save_vault_settings,
    vault_settings_path,
)
from foundation.errors import AntinomyError

FEATURE = "review"
#: The next step named by every error about the file.
_FIX = "Fix it, or set it again with `antinomy dismissed --keep-in notes|antinomy`."


class ReviewSettingsInvalid(AntinomyError):
    """The vault's review settings file holds a value Antinomy does not know."""


@dataclass(frozen=True)
class ReviewSettings:
    #: Where a dismissal is written: ``notes`` (each note's ``hunter_false_positives``,
    #: which Antinomia reads too) or ``antinomy`` (``.antinomy/dismissed.json``; the notes
    #: are not touched — for a vault under git or sync). Both are always read.
    keep_dismissals: KeepIn = "notes"

    def __post_init__(self) -> None:
        if self.keep_dismissals not in KEEP_IN:
            raise ReviewSettingsInvalid(
                f"review.keep_dismissals is {self.keep_dismissals!r}: use 'notes' (in each "
                "note's hunter_false_positives) or 'antinomy' (in .antinomy/dismissed.json)."
            )


def review_settings_path(root: Path) -> Path:
    return vault_settings_path(root, FEATURE)


def load_review_settings(root: Path) -> ReviewSettings:
    """The vault's review settings (the defaults when none were saved);
    :class:`ReviewSettingsInvalid` naming the file when it cannot be used."""
    try:
        return load_vault_settings(
            root, FEATURE, ReviewSettings, error=ReviewSettingsInvalid, fix=_FIX
        )
    except ReviewSettingsInvalid as exc:
        path = review_settings_path(root)
        if str(path) in str(exc):
            raise
        raise ReviewSettingsInvalid(f"{path}: {exc} {_FIX}") from None


def save_review_settings(root: Path, settings: ReviewSettings) -> Path:
    return save_vault_settings(root, FEATURE, settings)

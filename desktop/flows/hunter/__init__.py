"""The tension scan ("Hunter"): pairs of notes that disagree, verified by code.

``scan(index, engine, judge=..., mode=..., focus=..., settings=..., stop=...,
progress=...)`` returns a :class:`ScanRun`: the judge decides which pairs are shown,
the engine describes them. ``write_debug_note`` keeps a failed run's raw answers as a
note; ``load_last_run`` gives the last completed run back after a restart.
"""

from __future__ import annotations

from desktop.flows.hunter.debug import DEBUG_FOLDER, write_debug_note
from desktop.flows.hunter.records import (
    DISCLAIMER,
    DROP_REASONS,
    HIDDEN_REASONS,
    MODES,
    Attempt,
    Excluded,
    LearningReport,
    Mode,
    Pair,
    ScanError,
    ScanRun,
    ScanSettings,
    SecondOpinionReport,
    dropped_phrase,
    load_last_run,
)
from desktop.flows.hunter.scan import scan

__all__ = [
    "DEBUG_FOLDER",
    "DISCLAIMER",
    "DROP_REASONS",
    "HIDDEN_REASONS",
    "MODES",
    "Attempt",
    "Excluded",
    "LearningReport",
    "Mode",
    "Pair",
    "ScanError",
    "ScanRun",
    "ScanSettings",
    "SecondOpinionReport",
    "dropped_phrase",
    "load_last_run",
    "scan",
    "write_debug_note",
]

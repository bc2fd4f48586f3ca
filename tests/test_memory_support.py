"""The support threshold, recomputed on the labelled calibration set; date support."""

from __future__ import annotations

import json
from datetime import date

import pytest

from desktop.flows.memory.support import (
    SUPPORT_THRESHOLD,
    date_supported,
    support_ratio,
    unsupported_names,
)
from tests.memory_helpers import DATA

PAIRS = json.loads((DATA / "support_calibration.json").read_text(encoding="utf-8"))["pairs"]


def _accepted(pair: dict[str, object], threshold: float, *, names: bool = True) -> bool:
    fact, cited, subject = str(pair["fact"]), str(pair["cited"]), str(pair["subject"])
    ratio = support_ratio(fact, cited, allowed=(subject,))
    missing = unsupported_names(fact, cited, allowed=(subject,)) if names else []
    return ratio >= threshold and not missing


def test_the_documented_threshold_separates_the_calibration_set() -> None:
    faithful = [p for p in PAIRS if p["supported"]]
    invented = [p for p in PAIRS if not p["supported"]]
    assert (len(faithful), len(invented)) == (22, 20)
    assert all(_accepted(p, SUPPORT_THRESHOLD) for p in faithful)
    assert not any(_accepted(p, SUPPORT_THRESHOLD) for p in invented)


def test_the_documented_table() -> None:
    def counts(t: float, names: bool = True) -> tuple[int, int]:
        return (
            sum(_accepted(p, t, names=names) for p in PAIRS if p["supported"]),
            sum(_accepted(p, t, names=names) for p in PAIRS if not p["supported"]),
        )

    assert counts(0.4) == (22, 0) and counts(0.4, names=False) == (22, 3)
    assert counts(0.5) == counts(0.66) == (22, 0)
    assert counts(0.6, names=False) == (22, 2)
    assert counts(0.7) == (18, 0) and counts(0.8) == (14, 0)


@pytest.mark.parametrize(
    ("text", "spoken", "wanted", "ok"),
    [
        ("the cutover is on 15 December", "2026-11-30", "2026-12-15", True),
        ("due December 19th", "2026-11-30", "2026-12-19", True),
        ("signed by 8 January 2027", "2026-11-30", "2027-01-08", True),
        ("signed by 8 January 2027", "2026-11-30", "2026-01-08", False),
        ("le 3 décembre", "2026-11-30", "2026-12-03", True),
        ("il 3 dicembre", "2026-11-30", "2026-12-03", True),
        ("on 2026-12-24", "2026-11-30", "2026-12-24", True),
        ("on 12/24", "2026-11-30", "2026-12-24", True),
        ("moved to tomorrow at 9", "2026-12-01", "2026-12-02", True),
        ("moved to tomorrow at 9", "2026-12-01", "2026-12-03", False),
        ("the report is due next Friday", "2026-11-30", "2026-12-11", True),
        ("the report is due on Friday", "2026-11-30", "2026-12-04", True),
        ("in 3 days", "2026-11-30", "2026-12-03", True),
        ("dopodomani", "2026-11-30", "2026-12-02", True),
        ("I like Lisbon", "2026-11-30", "2026-12-12", False),
        ("on 12 December", "2026-11-30", "2026-12-13", False),
    ],
)
def test_date_support(text: str, spoken: str, wanted: str, ok: bool) -> None:
    assert date_supported(date.fromisoformat(wanted), text, spoken=date.fromisoformat(spoken)) is ok

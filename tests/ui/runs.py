"""A saved scan with many pairs, built from a vault's own notes (no model, no judge).

The pairs are real sentences of real notes, so every review action works on
them; what they pair is arbitrary. For tests and screenshots of review at scale.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from desktop.flows.hunter import Pair, ScanRun
from desktop.flows.hunter.records import save_last_run
from desktop.vault.notes import NoteSkipped, read_note

CONFIDENCES = ("high", "medium", "low")
_ALIASED_LINK = re.compile(r"\[\[[^\]|]+\|[^\]]+\]\]")


def quote_of(body: str) -> str | None:
    """A line of the body to quote: one with an aliased wikilink if any, else a long one."""
    lines = [ln.strip().lstrip("-*> ").strip() for ln in body.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith(("#", "```", "|")) and "`" not in ln]
    linked = [ln for ln in lines if _ALIASED_LINK.search(ln) and len(ln.split()) >= 4]
    long = [ln for ln in lines if len(ln.split()) >= 6]
    chosen = (linked or long or [None])[0]
    return chosen[:300] if chosen else None


def many_pairs(root: Path, n: int, *, first: str | None = None) -> list[Pair]:
    """``n`` distinct pairs of the vault's uniquely named notes (``first`` in the first pair)."""
    quotes: dict[str, tuple[str, str]] = {}
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))
    paths = [p for p in paths if not any(part.startswith(".") for part in p.split("/"))]
    # Dismissals are kept by note name: a name several notes share cannot be dismissed.
    names = Counter(Path(p).stem.casefold() for p in paths)
    paths = [p for p in paths if names[Path(p).stem.casefold()] == 1]
    if first is not None:
        paths.remove(first)
        paths.insert(0, first)
    for path in paths:
        try:
            note = read_note(root, path)  # as a scan reads it: broken notes are not scanned
        except NoteSkipped:
            continue
        quote = quote_of(note.body)
        if quote is not None:
            quotes[path] = (quote, note.sha256)
    usable = list(quotes)
    pairs: list[Pair] = []
    step = 1
    while len(pairs) < n and step < len(usable):
        for i in range(len(usable) - step):
            if len(pairs) == n:
                break
            a, b = usable[i], usable[i + step]
            (qa, sa), (qb, sb) = quotes[a], quotes[b]
            pairs.append(
                Pair(
                    path_a=a,
                    path_b=b,
                    note_a=Path(a).stem,
                    note_b=Path(b).stem,
                    quote_a=qa,
                    quote_b=qb,
                    description=f"{Path(a).stem} and {Path(b).stem} may disagree.",
                    confidence=CONFIDENCES[len(pairs) % 3],  # type: ignore[arg-type]
                    sha_a=sa,
                    sha_b=sb,
                    probability=0.9 - 0.01 * len(pairs),
                    found_by="judge",
                    described_by="plain",
                )
            )
        step += 1
    if len(pairs) < n:
        raise ValueError(f"{root} has too few quotable notes for {n} pairs")
    return pairs


def save_run(root: Path, n: int, *, mode: str = "whole-vault", first: str | None = None) -> ScanRun:
    """Save a completed scan of ``n`` pairs as the vault's last run (what a restart shows)."""
    pairs = many_pairs(root, n, first=first)
    run = ScanRun(
        started_at=datetime.now(UTC).replace(microsecond=0).isoformat(),
        mode=mode,  # type: ignore[arg-type]
        status="ok",
        model="fixture",
        backend="none",
        notes_examined=len({p for pair in pairs for p in (pair.path_a, pair.path_b)}),
        candidates=len(pairs) * 2,
        pairs=tuple(pairs),
    )
    save_last_run(root, run)
    return run

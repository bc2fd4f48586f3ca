"""Planning a consolidation: pending input cut into steps of bounded size.

Pending input is the re-queued rejected fragments, then each closed batch's
lines past its watermark in the progress journal. A step is at most
``max_lines_per_step`` lines of one batch (one transaction each), so a
10,000-line session is many small steps, and a crash loses at most one.
Withdrawn lines are consumed by the step (the watermark passes them) but are
never read: their outcome is ``withdrawn``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop.flows.memory.batches import RawLine, RawStore, split_line_id
from desktop.flows.memory.progress import Progress
from desktop.flows.memory.rejected import RejectedFragment, RejectedStore


@dataclass
class Step:
    source: str
    #: Lines to read (withdrawn ones are in ``withdrawn``).
    lines: list[RawLine]
    withdrawn: list[str] = field(default_factory=list)
    #: Batch watermark this step moves (None for a requeue).
    batch_id: str | None = None
    through: int = 0
    requeue_id: str | None = None

    @property
    def span(self) -> int:
        return len(self.lines) + len(self.withdrawn)


def anything_pending(store: RawStore, rejected: RejectedStore, journal: Progress) -> bool:
    """Cheap check before any engine is needed (the CLI loads them lazily)."""
    if set(rejected.requested()) - journal.requeues:
        return True
    for batch in store.closed_batches():
        if batch.lines and batch.lines[-1].number > journal.through.get(batch.batch_id, 0):
            return True
    return False


def plan_steps(
    store: RawStore, rejected: RejectedStore, journal: Progress, *, max_lines: int
) -> list[Step]:
    steps: list[Step] = []
    for rid in sorted(set(rejected.requested()) - journal.requeues):
        lines = requeue_lines(store, rejected.get(rid))
        steps.append(Step(f"requeue {rid}", lines, requeue_id=rid))
    for batch in store.closed_batches():
        done = journal.through.get(batch.batch_id, 0)
        fresh = [line for line in batch.lines if line.number > done]
        steps.extend(split(fresh, batch.batch_id, max_lines=max_lines))
    return steps


def split(lines: Sequence[RawLine], batch_id: str, *, max_lines: int) -> list[Step]:
    steps: list[Step] = []
    for start in range(0, len(lines), max_lines):
        chunk = lines[start : start + max_lines]
        step = Step(
            f"{batch_id}#L{chunk[0].number}-L{chunk[-1].number}",
            [line for line in chunk if not line.withdrawn],
            [line.line_id for line in chunk if line.withdrawn],
            batch_id=batch_id,
            through=chunk[-1].number,
        )
        steps.append(step)
    return steps


def requeue_lines(store: RawStore, frag: RejectedFragment) -> list[RawLine]:
    """The fragment's cited lines with two lines of context each side (or its whole input)."""
    wanted = frag.line_ids or frag.source_ids
    by_batch: dict[str, set[int]] = {}
    for line_id in wanted:
        parts = split_line_id(line_id)
        if parts is None:
            continue
        span = range(parts[1] - 2, parts[1] + 3) if frag.line_ids else range(parts[1], parts[1] + 1)
        by_batch.setdefault(parts[0], set()).update(span)
    out: list[RawLine] = []
    for batch_id, numbers in by_batch.items():
        out += [
            line
            for line in store.read(batch_id).lines
            if line.number in numbers and not line.withdrawn
        ]
    return out

"""Quarantine: a statement the model cannot route is set aside, so it never blocks the rest.

A routing answer that is not the expected JSON (even after the stricter retry)
ends the run with ``json_failure`` the first time, and the input stays pending:
the model may have been swapped or have failed once. The failure is counted
per statement (its line ids and words) in ``.antinomy/memory/failures.json``,
with the raw answers. When the same statement fails in a second run it is
**quarantined**: recorded as a rejected fragment with reason
``unreadable_answer`` (its line ids and every raw answer kept), and the step
goes on without it, so the rest of the input is consolidated.

``antinomy memory quarantined`` lists them with their raw answers; ``antinomy
memory requeue ID`` puts one back in the queue. A re-queued statement whose
answer is unreadable again goes straight back to quarantine (the run goes on).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from desktop.flows.memory.batches import write_private
from desktop.flows.memory.extract import Candidate
from desktop.flows.memory.rejected import RejectedFragment, fragment_id
from desktop.flows.memory.secrets import mask_secrets
from desktop.vault.layout import state_dir

#: The runs in which a statement's answer must be unreadable before it is quarantined.
QUARANTINE_AFTER = 2
REASON = "unreadable_answer"
#: Raw answers kept per statement (the latest), and characters kept of each.
MAX_ANSWERS = 6
MAX_ANSWER_CHARS = 2000


def statement_key(candidate: Candidate) -> str:
    canon = json.dumps([list(candidate.line_ids), candidate.text], ensure_ascii=False)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()[:16]


class FailureLog:
    """Unreadable-answer counts per statement. Written only under the consolidation lock."""

    def __init__(self, root: Path) -> None:
        self.path = state_dir(root, "memory") / "failures.json"

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def record(
        self, candidate: Candidate, *, source: str, answers: tuple[str, ...], at: str
    ) -> tuple[int, list[str]]:
        """Count one more failed run for this statement; returns (runs failed, answers kept)."""
        data = self._read()
        key = statement_key(candidate)
        entry = data.get(key) if isinstance(data.get(key), dict) else None
        runs = int(entry.get("runs", 0)) if entry else 0
        kept = [str(a) for a in entry.get("answers", [])] if entry else []
        kept += [mask_secrets(a).text[:MAX_ANSWER_CHARS] for a in answers]
        data[key] = {
            "runs": runs + 1,
            "line_ids": list(candidate.line_ids),
            "source": source,
            "last_failed": at,
            "answers": kept[-MAX_ANSWERS:],
        }
        write_private(self.path, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))
        return runs + 1, kept[-MAX_ANSWERS:]


def quarantine_fragment(
    candidate: Candidate,
    *,
    runs: int,
    answers: list[str],
    source: str,
    source_ids: tuple[str, ...],
    at: str,
) -> RejectedFragment:
    """The fragment that records a quarantined statement (same id on a re-run of the step)."""
    identity = {"candidate": candidate.text, "line_ids": list(candidate.line_ids), "reason": REASON}
    return RejectedFragment(
        fragment_id=fragment_id(source, identity),
        reason=REASON,
        detail=(
            f"the model's routing answer was not the expected JSON in {runs} runs "
            f"({len(answers)} raw answers kept); re-queue it after changing the model"
        ),
        subject="",
        text=candidate.text,
        line_ids=candidate.line_ids,
        source=source,
        source_ids=source_ids,
        at=at,
        proposal={"candidate": candidate.text, "context": candidate.context, "answers": answers},
    )

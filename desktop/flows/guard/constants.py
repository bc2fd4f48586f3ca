"""The guard's numbers, in one place (the stdlib hook client keeps pinned copies of the
summary limits: tests/test_guard_check.py checks they match)."""

from __future__ import annotations

#: Cosine a change needs with a decision's statement to warn.
#:
#: Calibrated with tests/perf/calibrate_guard.py: 56 realistic tool calls
#: (Bash commands with the agent's description, file writes and edits) against
#: the sample vault's 7 standing decisions, with the shipped all-MiniLM-L6-v2.
#: Calls that go against a decision scored 0.16–0.68 with it (median 0.41);
#: calls on the same subject that respect it 0.01–0.70 (median 0.31) — cosine
#: measures "about the same thing", not "against it", so the two overlap;
#: unrelated calls scored at most 0.50 with any decision (median 0.09).
#: MiniLM's cosines run far below the 0.82 the Commonwealth guard used with
#: its embedder: at 0.82 nothing here ever warns. 0.55 is the worst unrelated
#: call plus a 0.05 margin: it warns on 3 of 19 contradicting calls, 1 of 18
#: related ones and none of the 18 unrelated (0.50 would warn on 6 / 2 / 0, with
#: no margin at all). Precision over recall: a guard that cries wolf is
#: switched off. Users who want more can lower it per vault.
DEFAULT_THRESHOLD = 0.55
#: With the judge: decisions this close (cosine) to the change are judged.
SUBJECT_FLOOR = 0.2
#: With the judge: the judge is asked only when a sentence of the near decisions has at least
#: this cosine with the change (the same "shares a subject" gate as a scan's, 0.3). Measured
#: with tests/perf/calibrate_guard.py: every warning came from a check whose best pair had
#: cosine 0.39 or more, and at the calibrated threshold the same calls warn with the gate as
#: without it; 7 of the 56 calls no longer wait for the judge.
SENTENCE_FLOOR = 0.3
#: With the judge: at most this many decisions, and sentence pairs, are judged per check
#: (each pair costs ~5 ms of int8 judge on one core).
JUDGED_DECISIONS = 3
JUDGED_PAIRS = 3
#: With the judge: at most this many statements of a file change are embedded (each costs
#: ~3 ms on a busy core; a 2 KB Write can hold 30): when it has more, those sharing the
#: rarest words with the standing decisions' sentences. At most 3 pairs are judged anyway.
EMBEDDED_STATEMENTS = 4
MARKER_MAX_AGE = 7 * 24 * 3600
SUMMARY_MAX_BYTES = 2048
SUMMARY_MIN_CHARS = 12
NOT_STANDING = frozenset(
    {"superseded", "deprecated", "rejected", "retired", "withdrawn", "obsolete"}
)
PROJECTS_FILE = "guard-projects.json"

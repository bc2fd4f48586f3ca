"""What the guard answers, and the text the agent is shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from desktop.flows.guard.constants import SUMMARY_MAX_BYTES, SUMMARY_MIN_CHARS
from desktop.flows.guard.decisions import StandingDecision
from desktop.flows.guard.settings import GuardMode


@dataclass(frozen=True)
class GuardVerdict:
    #: "warn" | "ask" | "allow" | "repeat" | "off" | "skip"
    verdict: str
    decision: StandingDecision | None = None
    score: float | None = None
    #: The hook's stdout JSON, when the agent should be told something.
    output: dict[str, Any] | None = None


def warning_text(decision: StandingDecision, score: float, *, judged: bool = False) -> str:
    measure = f"contradiction {score:.2f}" if judged else f"similarity {score:.2f}"
    return (
        f"⚠ This change may contradict decision {decision.id}: {decision.title} "
        f"(vault note {decision.path}; {measure}). Read the decision before going "
        "ahead. If it no longer holds, say so to the user rather than working around it."
    )


def hook_output(
    decision: StandingDecision, score: float, mode: GuardMode, *, judged: bool = False
) -> dict[str, Any]:
    text = warning_text(decision, score, judged=judged)
    if mode == "ask":
        inner = {
            "hookEventName": "PreToolUse",
            "permissionDecision": "ask",
            "permissionDecisionReason": text,
        }
    else:
        inner = {"hookEventName": "PreToolUse", "additionalContext": text}
    return {"hookSpecificOutput": inner}


def too_short(summary: str) -> bool:
    """A summary too short to compare with anything (the guard answers ``skip``)."""
    return len(summary.strip()) < SUMMARY_MIN_CHARS


def bound_summary(summary: str) -> str:
    data = summary.encode("utf-8")
    if len(data) > SUMMARY_MAX_BYTES:
        summary = data[:SUMMARY_MAX_BYTES].decode("utf-8", errors="ignore")
    return summary

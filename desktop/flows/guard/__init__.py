"""The action-time contradiction guard: is a pending tool call against a standing decision?

Qt-free and HTTP-free: the endpoint embeds the hook's summary and calls
:meth:`Guard.decide`; tests call it directly.

* **Standing decisions** are notes of type/kind ``decision`` that are not
  superseded (``status`` superseded/deprecated/rejected/retired, or a
  ``superseded_by`` key), and, if the vault's settings say so, principles.
* **What is compared.** Each decision is embedded as its title plus its
  ``## Decision`` section (a principle: title plus its IF/THEN clauses) — the
  statement an action can go against — not the whole note, whose context and
  consequences dilute it. The summary of the change is compared with these by
  cosine; vectors are cached in ``.antinomy/guard/vectors.npz`` by text hash.
* **The judge decides.** Cosine only says "about the same thing". The
  decisions nearest the change's summary (cosine at least :data:`SUBJECT_FLOOR`)
  are cut into sentences; the judge reads what the change says against them — a
  Bash call's summary; for a file change, the statements of its new text, never
  its path (:mod:`desktop.flows.guard.change`). The best few (statement,
  decision sentence) pairs by cosine go to the contradiction judge, and the guard
  warns only when the judge reads one as a contradiction (P at least the judge's
  calibrated ``guard`` threshold, or the vault's ``judge_threshold``). Without a
  judge it falls back to cosine alone (of the summary) at
  :data:`DEFAULT_THRESHOLD`; see there for how that was chosen.
* **Once per session.** A decision warns at most once per agent session:
  markers in ``.antinomy/guard/sessions/``, pruned after 7 days.
* **Where it is on.** Off by default. ``.antinomy/guard/settings.json`` turns it
  on for the vault; a project entry in ``<config dir>/guard-projects.json``
  (matched by the hook's ``cwd``) turns it on or off for one project folder and
  may set its mode.
"""

from __future__ import annotations

from desktop.flows.guard.check import AsyncEmbedFn, Guard, GuardNotReady, JudgeSource
from desktop.flows.guard.constants import (
    DEFAULT_THRESHOLD,
    EMBEDDED_STATEMENTS,
    JUDGED_DECISIONS,
    JUDGED_PAIRS,
    MARKER_MAX_AGE,
    NOT_STANDING,
    SENTENCE_FLOOR,
    SUBJECT_FLOOR,
    SUMMARY_MAX_BYTES,
    SUMMARY_MIN_CHARS,
)
from desktop.flows.guard.decisions import (
    DecisionSet,
    EmbedFn,
    StandingDecision,
    VectorCache,
    decision_fingerprint,
    decision_text,
    is_standing,
    standing_decisions,
)
from desktop.flows.guard.markers import SessionMarkers
from desktop.flows.guard.settings import (
    GuardError,
    GuardMode,
    GuardSettings,
    ProjectSetting,
    describe_thresholds,
    judge_threshold,
    load_guard_settings,
    load_projects,
    project_for,
    projects_path,
    save_guard_settings,
    set_project,
    settings_path,
)
from desktop.flows.guard.switch import Activation, GuardSwitch
from desktop.flows.guard.verdicts import (
    GuardVerdict,
    bound_summary,
    hook_output,
    too_short,
    warning_text,
)

__all__ = [
    "DEFAULT_THRESHOLD",
    "EMBEDDED_STATEMENTS",
    "JUDGED_DECISIONS",
    "JUDGED_PAIRS",
    "MARKER_MAX_AGE",
    "NOT_STANDING",
    "SENTENCE_FLOOR",
    "SUBJECT_FLOOR",
    "SUMMARY_MAX_BYTES",
    "SUMMARY_MIN_CHARS",
    "Activation",
    "AsyncEmbedFn",
    "DecisionSet",
    "EmbedFn",
    "Guard",
    "GuardError",
    "GuardMode",
    "GuardNotReady",
    "GuardSettings",
    "GuardSwitch",
    "GuardVerdict",
    "JudgeSource",
    "ProjectSetting",
    "SessionMarkers",
    "StandingDecision",
    "VectorCache",
    "bound_summary",
    "decision_fingerprint",
    "decision_text",
    "describe_thresholds",
    "hook_output",
    "is_standing",
    "judge_threshold",
    "load_guard_settings",
    "load_projects",
    "project_for",
    "projects_path",
    "save_guard_settings",
    "set_project",
    "settings_path",
    "standing_decisions",
    "too_short",
    "warning_text",
]

"""Recorded file changes (tests/data/hooks/) through the real guard: the hook client as
the agents run it, a real endpoint with both shipped models, the sample vault, and the
judge's calibrated threshold (not a lowered one, as test_hook's plumbing tests use).

Each ``*_against_*`` payload changes the rule of a standing decision of the sample vault
(ADR-0011's release window, ADR-0008's on-call week) with an Edit,
Write, MultiEdit or Codex apply_patch, and must warn, naming that decision (those in
``MISSED``, ADR-0010's review rule and ADR-0013's runners, are known misses); each
``*_unrelated`` one must pass in silence.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.flows.guard import GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service.server import EndpointHandle, start_endpoint
from tests.service_util import TOKEN
from tests.test_hook import SLACK, payload, run_hook, session, write_token

AGAINST = {
    "claude_edit_against_release_window": "ADR-0011",
    "claude_write_against_release_window": "ADR-0011",
    "claude_multiedit_against_oncall": "ADR-0008",
    "codex_apply_patch_against_release_window": "ADR-0011",
}
#: Against a decision, but the shipped judge does not read it so: "Config tweaks and
#: one-line fixes go to main without a review." scores 0.22 against ADR-0010's "Every
#: change to main needs one approving review, with no exceptions." (0.68 against ADR-0007's
#: rule, below 0.9 too); calibrate_guard.py's three Bash calls against ADR-0010 miss as well.
#: "CI runs on GitHub's hosted runners only" (a recorded Write) scores 0.88 against
#: ADR-0013's rule: it warned at the earlier threshold, 0.8, not at the 0.9 chosen on
#: tests/perf/guard_cal_cases.py.
MISSED = {
    "claude_write_against_review_rule": "ADR-0010",
    "claude_write_against_ci_runners": "ADR-0013",
}
UNRELATED = [
    "claude_edit_unrelated",
    "claude_write_unrelated",
    "claude_multiedit_unrelated",
    "codex_apply_patch_unrelated",
]


@pytest.fixture(scope="module")
def endpoint(runtime: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[EndpointHandle]:
    vault = tmp_path_factory.mktemp("recorded") / "vault"
    shutil.copytree(sample_vault_source(), vault)
    save_guard_settings(vault, GuardSettings(enabled=True))  # the judge's own guard threshold
    handle = start_endpoint(runtime=runtime, vault_root=vault, port=0, token=TOKEN, publish=False)
    assert handle.guard is not None
    assert handle.guard.ready.wait(60), handle.guard.error
    yield handle
    handle.stop()


def hook(endpoint: EndpointHandle, name: str) -> tuple[str, Any]:
    write_token()
    data = payload(name, session_id=session(name))
    rc, out, err, _ = run_hook(["pretooluse", *SLACK], data, port=endpoint.port)
    assert (rc, err) == (0, "")
    record = endpoint.guard_log.records()[-1]
    assert record.tool == data["tool_name"] and record.session_id == data["session_id"]
    return out, record


@pytest.mark.model
@pytest.mark.parametrize(
    ("name", "decision"),
    [
        *AGAINST.items(),
        *(pytest.param(n, d, marks=pytest.mark.xfail(reason="MISSED")) for n, d in MISSED.items()),
    ],
)
def test_a_change_against_a_decision_warns(
    endpoint: EndpointHandle, name: str, decision: str
) -> None:
    out, record = hook(endpoint, name)
    assert record.verdict == "warn", (record.decision_id, record.score)
    assert record.decision_id == decision
    assert record.score is not None and record.score >= 0.9
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert f"decision {decision}: " in context


@pytest.mark.model
@pytest.mark.parametrize("name", UNRELATED)
def test_an_unrelated_change_is_silent(endpoint: EndpointHandle, name: str) -> None:
    out, record = hook(endpoint, name)
    assert out == ""
    assert record.verdict == "allow", (record.decision_id, record.score)


def test_every_recorded_file_change_is_in_one_list() -> None:
    folder = Path(__file__).parent / "data" / "hooks"
    names = {p.stem for p in folder.glob("*_against_*.json")}
    names |= {p.stem for p in folder.glob("*_unrelated.json")}
    assert names == set(AGAINST) | set(MISSED) | set(UNRELATED) | {"claude_bash_unrelated"}

"""``Guard.check``: the guard's one entry point (bounding, minimum length, activation,
decision), without HTTP; and the constants the stdlib hook client keeps copies of."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from desktop.flows import guard as guard_flow
from desktop.flows.guard import Guard, GuardNotReady, GuardSettings, save_guard_settings
from desktop.resources import sample_vault_source
from desktop.service import hook, hook_wire
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedJudge, WordEmbedder
from tests.test_guard import LEDGER


class CountingEmbedder(WordEmbedder):
    async def embed_query(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self(texts)


def check(guard: Guard, summary: str, **kwargs: str) -> guard_flow.GuardVerdict:
    return asyncio.run(
        guard.check(summary, session_id=kwargs.get("session_id", "s"), cwd="/", mode=None)
    )


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(sample_vault_source(), root)
    return root


@pytest.fixture
def index(vault: Path) -> Iterator[VaultIndex]:
    idx = VaultIndex(vault)
    idx.update()
    yield idx
    idx.close()


@pytest.fixture
def words() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def guard(vault: Path, index: VaultIndex, words: CountingEmbedder) -> Iterator[Guard]:
    save_guard_settings(vault, GuardSettings(enabled=True, threshold=0.5))
    g = Guard(vault, index=index, embed=words, model_id="words", embed_query=words.embed_query)
    g.refresh()
    words.texts.clear()
    yield g


def test_a_matching_change_warns_then_repeats(guard: Guard, words: CountingEmbedder) -> None:
    first = check(guard, LEDGER)
    assert first.verdict == "warn" and first.decision is not None
    assert first.decision.id == "ADR-0012"
    assert check(guard, LEDGER).verdict == "repeat"
    assert words.texts == [LEDGER, LEDGER]


def test_too_short_is_skipped_and_off_embeds_nothing(
    guard: Guard, vault: Path, words: CountingEmbedder
) -> None:
    assert check(guard, "  ls -la    ").verdict == "skip"
    save_guard_settings(vault, GuardSettings(enabled=False))
    assert check(guard, LEDGER).verdict == "off"
    assert words.texts == []


def test_the_summary_is_bounded_before_it_is_embedded(
    guard: Guard, words: CountingEmbedder
) -> None:
    check(guard, LEDGER + " é" * 5000)
    assert len(words.texts[0].encode("utf-8")) <= guard_flow.SUMMARY_MAX_BYTES


def test_with_a_judge_the_judge_decides(vault: Path, index: VaultIndex) -> None:
    save_guard_settings(vault, GuardSettings(enabled=True, threshold=0.5))
    words = CountingEmbedder()
    judge = ScriptedJudge()  # no pair scripted as a contradiction
    g = Guard(
        vault,
        index=index,
        embed=words,
        model_id="words",
        judge=lambda: judge,
        embed_query=words.embed_query,
    )
    g.refresh()
    verdict = check(g, LEDGER)
    assert verdict.verdict == "allow" and judge.calls  # judged, and not a contradiction


def test_before_the_decisions_are_read_the_check_says_so(vault: Path) -> None:
    save_guard_settings(vault, GuardSettings(enabled=True))
    g = Guard(vault)  # no index nor embedder yet: the models are loading
    assert check(g, "  short  ").verdict == "skip"
    with pytest.raises(GuardNotReady, match="still reading the vault's decisions"):
        check(g, LEDGER)
    save_guard_settings(vault, GuardSettings(enabled=False))
    assert check(g, LEDGER).verdict == "off"  # the cheap gate needs no model


def test_the_hook_clients_copies_of_the_limits_match() -> None:
    """The hook imports only the standard library, so it keeps its own copies."""
    assert hook_wire.SUMMARY_MAX_BYTES == guard_flow.SUMMARY_MAX_BYTES
    assert hook_wire.SUMMARY_MIN_CHARS == guard_flow.SUMMARY_MIN_CHARS


# ---------------------------------------------------------------- what the judge reads

RULE = "Production releases go out every Friday between 14:00 and 16:00."
NEW_RULE = "Production releases go out every Monday between 09:00 and 11:00."
CWD = "/home/dev/ledgerline"
RELEASE_EDITS: dict[str, dict[str, Any]] = {
    "Edit": {"file_path": f"{CWD}/docs/releasing.md", "old_string": RULE, "new_string": NEW_RULE},
    "Write": {"file_path": f"{CWD}/docs/releasing.md", "content": f"# Releasing\n\n{NEW_RULE}\n"},
    "MultiEdit": {
        "file_path": f"{CWD}/docs/releasing.md",
        "edits": [
            {"old_string": RULE, "new_string": NEW_RULE},
            {"old_string": "Staging", "new_string": "Staging keeps deploying on every merge."},
        ],
    },
    "apply_patch": {
        "command": "*** Begin Patch\n*** Update File: docs/releasing.md\n@@\n"
        f"-{RULE}\n+{NEW_RULE}\n*** End Patch\n"
    },
}


def release_judge() -> ScriptedJudge:
    """ADR-0011's rule against the edit that rewrites it, scored as the shipped judge
    scores it: the new sentence alone 1.00; with the hook's path line before it, 0.66."""

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        change = b if a == RULE else a if b == RULE else ""
        p = 0.99 if change == NEW_RULE else 0.66 if NEW_RULE in change else 0.02
        return (p, (1 - p) / 2, (1 - p) / 2)

    return ScriptedJudge(verdict=verdict)


def judged_guard(vault: Path, index: VaultIndex, judge: ScriptedJudge) -> Guard:
    # The shipped judge's calibrated threshold, explicitly (the scripted judge's own is 0.5).
    save_guard_settings(vault, GuardSettings(enabled=True, judge_threshold=0.9))
    words = CountingEmbedder()
    g = Guard(
        vault,
        index=index,
        embed=words,
        model_id="words",
        judge=lambda: judge,
        embed_query=words.embed_query,
    )
    g.refresh()
    return g


def check_tool(guard: Guard, tool: str, tool_input: dict[str, Any], session: str) -> Any:
    summary = hook.summarize(tool, tool_input, CWD)
    return asyncio.run(guard.check(summary, session_id=session, cwd="/", tool_name=tool))


@pytest.mark.parametrize("tool", list(RELEASE_EDITS))
def test_an_edit_that_rewrites_a_decision_warns_whatever_the_tool(
    vault: Path, index: VaultIndex, tool: str
) -> None:
    """The judge reads what the change says, not the hook's ``Edit <path>`` line: with the
    path the shipped judge read ADR-0011's rewritten sentence at 0.66, and nothing warned."""
    judge = release_judge()
    verdict = check_tool(judged_guard(vault, index, judge), tool, RELEASE_EDITS[tool], "s")
    assert verdict.verdict == "warn" and verdict.decision is not None
    assert verdict.decision.id == "ADR-0011" and verdict.score == pytest.approx(0.99)
    assert (NEW_RULE, RULE) in judge.calls
    assert not any("releasing.md" in a or "releasing.md" in b for a, b in judge.calls)


def test_an_older_hooks_summary_is_read_the_same_way(vault: Path, index: VaultIndex) -> None:
    """The request has not changed: a summary from a hook that joined MultiEdit's edits with
    one newline (and a caller that names no tool) still works."""
    judge = release_judge()
    guard = judged_guard(vault, index, judge)
    old = f"Edit docs/releasing.md\n{NEW_RULE}"
    run = asyncio.run
    assert run(guard.check(old, session_id="a", cwd="/", tool_name="MultiEdit")).verdict == "warn"
    # No tool named: the summary is judged whole, as before (its path line included).
    assert run(guard.check(old, session_id="b", cwd="/")).verdict == "allow"
    assert (old, RULE) in judge.calls


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Edit", {"file_path": f"{CWD}/src/parser.py", "new_string": "return [t for t in tokens]"}),
        ("Write", {"file_path": f"{CWD}/src/date.ts", "content": "export const day = 86400;\n"}),
        (
            "Edit",
            {"file_path": f"{CWD}/docs/releasing.md", "new_string": "Fix a typo in the guide."},
        ),
    ],
)
def test_an_unrelated_edit_stays_silent(
    vault: Path, index: VaultIndex, tool: str, tool_input: dict[str, Any]
) -> None:
    judge = release_judge()
    verdict = check_tool(judged_guard(vault, index, judge), tool, tool_input, "u")
    assert verdict.verdict == "allow" and verdict.output is None
    if tool_input["file_path"].endswith((".py", ".ts")):
        assert judge.calls == []  # code that carries no words: nothing to judge


def test_a_long_change_embeds_the_statements_nearest_the_decisions(
    vault: Path, index: VaultIndex
) -> None:
    """A long Write can hold dozens of statements; a few are embedded (each costs ~3 ms):
    those that share the most words with the near decisions' sentences."""
    judge = release_judge()
    save_guard_settings(vault, GuardSettings(enabled=True, judge_threshold=0.8))
    words = CountingEmbedder()
    g = Guard(
        vault,
        index=index,
        embed=words,
        model_id="words",
        judge=lambda: judge,
        embed_query=words.embed_query,
    )
    g.refresh()
    words.texts.clear()
    chatter = [f"Chapter {n} of the style guide covers naming and layout." for n in range(12)]
    content = "# Guide\n\n" + "\n\n".join([*chatter, NEW_RULE]) + "\n"
    tool_input = {"file_path": f"{CWD}/docs/guide.md", "content": content}
    verdict = check_tool(g, "Write", tool_input, "long")
    assert verdict.verdict == "warn" and verdict.decision is not None
    assert verdict.decision.id == "ADR-0011"
    summary, *embedded = words.texts
    assert summary.startswith("Write docs/guide.md\n")
    assert len(embedded) == guard_flow.EMBEDDED_STATEMENTS and embedded[-1] == NEW_RULE


def test_each_statement_that_shares_a_subject_gets_its_nearest_sentence_first() -> None:
    from desktop.flows.guard.check import _pairs_in_turn

    sims = np.asarray(
        [
            [0.70, 0.65, 0.60, 0.10],  # a comment near three sentences
            [0.20, 0.45, 0.10, 0.05],  # a setting: its nearest reaches the floor
            [0.27, 0.25, 0.20, 0.10],  # a line that shares no decision's subject
        ],
        dtype=np.float32,
    )
    assert _pairs_in_turn(sims, 0.3) == [(0, 0), (1, 1), (0, 1)]
    assert _pairs_in_turn(sims[2:], 0.3) == []
    # One statement (a Bash call): its three nearest, the floor on the first only.
    assert _pairs_in_turn(sims[1:2], 0.3) == [(0, 1), (0, 0), (0, 2)]


CAL_VAULT = Path(__file__).parent / "data" / "guard-cal-vault"
PINNED = "Version ranges and unpinned pip installs are not allowed in the services."
NO_REQUESTS = "The requests and aiohttp libraries are not used."


def test_of_the_decisions_read_as_contradicted_the_nearest_is_cited(tmp_path: Path) -> None:
    """The judge may score a sentence of a side decision higher than the rule the change
    goes against (on tests/perf/guard_cal_cases.py, stage 8 read "uv add requests" against
    the pinning rule at 0.92, against "requests is not used" at 0.86): when both are above
    the threshold, the decision nearest the change is the one cited."""
    root = tmp_path / "vault"
    shutil.copytree(CAL_VAULT, root)
    idx = VaultIndex(root)
    idx.update()
    scores = {PINNED: 0.97, NO_REQUESTS: 0.93}

    def verdict(a: str, b: str) -> tuple[float, float, float]:
        p = scores.get(b, scores.get(a, 0.02))
        return (p, (1 - p) / 2, (1 - p) / 2)

    judge = ScriptedJudge(verdict=verdict)
    guard = judged_guard(root, idx, judge)
    summary = hook.summarize(
        "Bash",
        {
            "command": "uv add requests",
            "description": "Add the requests library for the HTTP calls of the Python services",
        },
    )
    verdict_ = asyncio.run(guard.check(summary, session_id="r", cwd="/", tool_name="Bash"))
    idx.close()
    judged = {b for _, b in judge.calls} | {a for a, _ in judge.calls}
    assert PINNED in judged and NO_REQUESTS in judged  # both decisions' rules were read
    assert verdict_.verdict == "warn" and verdict_.decision is not None
    assert verdict_.decision.id == "DR-105" and verdict_.score == pytest.approx(0.93)

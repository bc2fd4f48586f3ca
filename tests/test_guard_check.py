"""``Guard.check``: the guard's one entry point (bounding, minimum length, activation,
decision), without HTTP; and the constants the stdlib hook client keeps copies of."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from desktop.flows import guard as guard_flow
from desktop.flows.guard import Guard, GuardNotReady, GuardSettings, save_settings
from desktop.resources import sample_vault_source
from desktop.service import hook
from desktop.vault.index import VaultIndex
from tests.fakes import ScriptedJudge
from tests.test_guard import LEDGER, WordEmbedder


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
    save_settings(vault, GuardSettings(enabled=True, threshold=0.5))
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
    save_settings(vault, GuardSettings(enabled=False))
    assert check(guard, LEDGER).verdict == "off"
    assert words.texts == []


def test_the_summary_is_bounded_before_it_is_embedded(
    guard: Guard, words: CountingEmbedder
) -> None:
    check(guard, LEDGER + " é" * 5000)
    assert len(words.texts[0].encode("utf-8")) <= guard_flow.SUMMARY_MAX_BYTES


def test_with_a_judge_the_judge_decides(vault: Path, index: VaultIndex) -> None:
    save_settings(vault, GuardSettings(enabled=True, threshold=0.5))
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
    save_settings(vault, GuardSettings(enabled=True))
    g = Guard(vault)  # no index nor embedder yet: the models are loading
    assert check(g, "  short  ").verdict == "skip"
    with pytest.raises(GuardNotReady, match="still reading the vault's decisions"):
        check(g, LEDGER)
    save_settings(vault, GuardSettings(enabled=False))
    assert check(g, LEDGER).verdict == "off"  # the cheap gate needs no model


def test_the_hook_clients_copies_of_the_limits_match() -> None:
    """The hook imports only the standard library, so it keeps its own copies."""
    assert hook.SUMMARY_MAX_BYTES == guard_flow.SUMMARY_MAX_BYTES
    assert hook.SUMMARY_MIN_CHARS == guard_flow.SUMMARY_MIN_CHARS

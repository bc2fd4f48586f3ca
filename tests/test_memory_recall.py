"""Recall: ranking over subject summaries and facts, caching, bad input, hook context."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from desktop.flows.memory import RecallIndex, consolidate, recall
from desktop.flows.memory.errors import RecallInvalid
from inference.embedder import Embedder, Vectors
from tests.fakes import ScriptedGenerator
from tests.memory_helpers import answer, fact, small_batch


class WordEmbedder(Embedder):
    """Bag of hashed words: texts sharing words are close. Counts its calls."""

    dimension = 256
    name = "words"

    def __init__(self) -> None:
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dimension), np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out


def _vault(tmp_path: Path) -> Path:
    small_batch(tmp_path)
    gen = ScriptedGenerator(
        answers=[
            answer(
                fact(
                    "Lisbon trip",
                    "Fly to Lisbon on 12 December with Ana",
                    [1],
                    date="2026-12-12",
                    kind="event",
                ),
                fact("Travel", "Prefers window seats on long flights", [3]),
                fact("Helios", "Helios report is due next Friday", [4]),
            )
        ]
    )
    assert consolidate(tmp_path, gen).status == "ok"
    return tmp_path


def test_recall_ranks_facts_and_summaries_with_citations(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    result = recall(vault, "when is the Helios report due", embedder=WordEmbedder(), k=2)
    assert result.facts[0].subject == "Helios"
    assert result.facts[0].citations == ("2026-11-30#L4",)
    assert result.subjects[0].subject == "Helios"
    assert len(result.facts) == 2
    lisbon = recall(vault, "Lisbon flight with Ana", embedder=WordEmbedder(), k=1).facts[0]
    assert lisbon.date == "2026-12-12" and lisbon.page == "Antinomy/Subjects/Lisbon trip.md"


def test_vectors_are_cached_and_pages_reread_only_on_change(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    embedder = WordEmbedder()
    index = RecallIndex(vault, embedder)
    assert index.refresh() == 6  # 3 summaries + 3 facts
    first = embedder.texts_embedded
    index.recall("Lisbon")
    index.recall("Helios")
    assert embedder.texts_embedded == first + 2  # only the queries
    again = RecallIndex(vault, embedder)  # a new process would find the cache on disk
    again.refresh()
    assert embedder.texts_embedded == first + 2
    small_batch_extra = ScriptedGenerator(answers=[answer(fact("Tea", "Likes green tea", [1]))])
    from desktop.flows.memory import capture_turn

    capture_turn(vault, role="user", text="I like green tea.", session_id="s")
    consolidate(vault, small_batch_extra, force=True)
    assert index.refresh() == 8
    assert embedder.texts_embedded == first + 2 + 2


def test_empty_memory_recalls_nothing(tmp_path: Path) -> None:
    result = recall(tmp_path, "anything", embedder=WordEmbedder())
    assert result.subjects == () and result.facts == ()
    assert result.as_context() == ""


@pytest.mark.parametrize(
    ("query", "k", "message"),
    [
        ("  ", 5, "The recall query is empty — give a few words to look for."),
        ("x" * 8193, 5, "The recall query is 8193 characters; at most 8192."),
        ("ok", 0, "k must be a whole number from 1 to 50, not 0."),
        ("ok", 51, "k must be a whole number from 1 to 50, not 51."),
    ],
)
def test_bad_recall_requests(tmp_path: Path, query: str, k: int, message: str) -> None:
    with pytest.raises(RecallInvalid) as err:
        recall(tmp_path, query, embedder=WordEmbedder(), k=k)
    assert str(err.value) == message


def test_context_block_fits_its_budget(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    result = recall(vault, "Helios report", embedder=WordEmbedder(), k=3)
    block = result.as_context(max_chars=1500)
    assert block.startswith("Relevant memory")
    assert "[2026-11-30#L4]" in block
    assert len(result.as_context(max_chars=120)) <= 120


@pytest.mark.model
def test_recall_with_the_shipped_embedder(tmp_path: Path, runtime: object) -> None:
    vault = _vault(tmp_path)
    embedder = runtime.queued_embedder()  # type: ignore[attr-defined]
    result = recall(vault, "deadline for the quarterly Helios document", embedder=embedder, k=1)
    assert result.facts[0].subject == "Helios"
    result = recall(vault, "airplane seating preference", embedder=embedder, k=1)
    assert result.facts[0].subject == "Travel"


def test_a_page_edited_in_place_is_reread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    recall_module = importlib.import_module("desktop.flows.memory.recall")

    vault = _vault(tmp_path)
    index = RecallIndex(vault, WordEmbedder())
    assert index.recall("Helios", k=1).facts[0].text == "Helios report is due next Friday"
    page = vault / "Antinomy/Subjects/Helios.md"
    page.write_text(page.read_text().replace("next Friday", "on Monday morning"))
    monkeypatch.setattr(recall_module, "FULL_CHECK_SECONDS", 0.0)
    assert index.recall("Helios", k=1).facts[0].text == "Helios report is due on Monday morning"

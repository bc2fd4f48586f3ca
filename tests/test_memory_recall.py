"""Recall: ranking over subject summaries and facts, caching, bad input, hook context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop.flows.memory import RecallIndex, consolidate, recall
from desktop.flows.memory.errors import RecallInvalid
from desktop.flows.memory.recall import RECALL_FLOOR
from tests.fakes import WordEmbedder
from tests.memory_helpers import DATA, RoutingGenerator, route, small_batch

ROUTES = {
    "Lisbon": route("new", new_subject="Lisbon trip"),
    "window": route("Flights"),
    "Helios": route("Helios"),
}


def _vault(tmp_path: Path) -> Path:
    small_batch(tmp_path)
    assert consolidate(tmp_path, RoutingGenerator(routes=dict(ROUTES))).status == "ok"
    return tmp_path


def test_recall_ranks_facts_and_summaries_with_citations(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    result = recall(vault, "when is the Helios report due", embedder=WordEmbedder(), k=2, floor=0)
    assert result.facts[0].subject == "Helios"
    assert result.facts[0].citations == ("2026-11-30#L4",)
    assert result.subjects[0].subject == "Helios"
    assert len(result.facts) == 2
    lisbon = recall(vault, "fly to Lisbon with Ana", embedder=WordEmbedder(), k=1).facts[0]
    assert lisbon.date == "2026-12-12" and lisbon.page == "Antinomy/Subjects/Lisbon trip.md"


def test_vectors_are_cached_and_pages_reread_only_on_change(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    embedder = WordEmbedder()
    index = RecallIndex(vault, embedder)
    assert index.refresh() == 6  # 3 summaries + 3 facts
    first = embedder.texts_embedded
    assert first == 3  # each summary is its page's one fact: the same text, embedded once
    index.recall("Lisbon")
    index.recall("Helios")
    assert embedder.texts_embedded == first + 2  # only the queries
    again = RecallIndex(vault, embedder)  # a new process would find the cache on disk
    again.refresh()
    assert embedder.texts_embedded == first + 2
    from desktop.flows.memory import capture_turn

    capture_turn(vault, role="user", text="I like green tea in the morning.", session_id="s")
    consolidate(vault, RoutingGenerator(), force=True)
    assert index.refresh() == 8
    # One new text: the new page's summary is its only fact (same text, one vector).
    assert embedder.texts_embedded == first + 2 + 1


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
    result = recall(vault, "Helios report", embedder=WordEmbedder(), k=3, floor=0)
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
    assert result.facts[0].subject == "Flights"
    nothing = recall(vault, "how do I bake sourdough bread", embedder=embedder)
    assert nothing.facts == () and nothing.subjects == () and nothing.below_floor == 6


@pytest.mark.model
def test_recall_floor_separates_the_calibration_set(runtime: object) -> None:
    """Recomputes the figures in recall.py's docstring with the shipped embedder."""
    data = json.loads((DATA / "recall_calibration.json").read_text())
    embedder = runtime.queued_embedder()  # type: ignore[attr-defined]
    facts = embedder.embed([f"{f['subject']}: {f['text']}" for f in data["facts"]])
    own = [float(facts[r["fact"]] @ embedder.embed([r["query"]])[0]) for r in data["relevant"]]
    best_unrelated = [float((facts @ embedder.embed([q])[0]).max()) for q in data["unrelated"]]
    assert min(own) > RECALL_FLOOR > max(best_unrelated)
    print(f"\nown facts {min(own):.2f}–{max(own):.2f}; unrelated best {max(best_unrelated):.2f}")


def test_the_floor_leaves_out_unrelated_items_and_says_how_it_ranked(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    result = recall(vault, "quantum entanglement explained", embedder=WordEmbedder())
    assert result.facts == () and result.subjects == ()
    assert result.below_floor == 6 and result.floor == RECALL_FLOOR
    assert "6 of 6 items under the relevance floor 0.30 left out" in result.ranking
    assert result.ranking.startswith("cosine similarity of words embeddings")
    assert result.as_context() == ""


def test_a_page_edited_in_place_is_reread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    recall_module = importlib.import_module("desktop.flows.memory.recall")

    vault = _vault(tmp_path)
    index = RecallIndex(vault, WordEmbedder())
    assert (
        index.recall("Helios report", k=1).facts[0].text == "The Helios report is due next Friday."
    )
    page = vault / "Antinomy/Subjects/Helios.md"
    page.write_text(page.read_text().replace("next Friday", "on Monday morning"))
    monkeypatch.setattr(recall_module, "FULL_CHECK_SECONDS", 0.0)
    assert index.recall("Helios report", k=1).facts[0].text == (
        "The Helios report is due on Monday morning."
    )

"""Search in the Notes panel shows, under each note's title, the sentence that matched,
and leaves out notes under the relevance floor, saying how many and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from desktop.flows import note_search
from desktop.flows.note_search import search_notes
from desktop.flows.sentences import split_sentences
from desktop.ui.panels.notes import PATH_ROLE, QtNotesPanel


def searched(qtbot, window, text: str) -> QtNotesPanel:  # type: ignore[no-untyped-def]
    panel = window.panel("notes")
    assert isinstance(panel, QtNotesPanel)
    qtbot.waitUntil(lambda: panel.list.count() > 0, timeout=15000)  # the vault is listed
    shown: list[int] = []
    panel.sig_notes_listed.connect(shown.append)
    panel.search_box.setText(text)
    # The search's own listing: every row then says how it matched.
    qtbot.waitUntil(
        lambda: bool(shown) and panel.searching() and "match" in panel.count.text(),
        timeout=15000,
    )
    return panel


def items(panel: QtNotesPanel) -> list[tuple[str, str]]:
    out = []
    for i in range(panel.list.count()):
        item = panel.list.item(i)
        out.append((str(item.data(PATH_ROLE)), item.text()))
    return out


def test_each_result_shows_the_sentence_that_matched(qtbot, make_window, vault: Path) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    panel = searched(qtbot, window, "Friday release")
    results = items(panel)
    assert results
    for path, text in results:
        title, _, shown = text.partition("\n    ")
        sentence = shown.replace("«", "").replace("»", "")
        assert sentence, f"no sentence under {title!r}"
        body = (vault / path).read_text(encoding="utf-8")
        own = {" ".join(x.text.split()) for x in split_sentences(body)}
        assert any(o.startswith(sentence.rstrip("…")) for o in own)  # of that very note
        if "words match" in title:
            assert "«" in shown, (title, shown)  # the words searched, marked
    friday = next(t for p, t in results if p.endswith("ADR-0011 Friday release window.md"))
    assert friday.split("\n    ")[1] == (
        "Production «releases» go out every «Friday» between 14:00 and 16:00."
    )


def test_results_under_the_floor_are_left_out_and_counted(
    qtbot, make_window, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    window = make_window()
    index = window.controller.index
    assert index is not None
    everything = search_notes(index, "Friday release", floor=-2.0)
    scores = sorted(m.relevance for m in everything.matches)
    floor = scores[len(scores) // 2]  # half of them under it
    under = sum(s < floor for s in scores)
    assert under > 0
    monkeypatch.setattr(note_search, "RELEVANCE_FLOOR", floor)
    panel = searched(qtbot, window, "Friday release")
    assert panel.list.count() == len(scores) - under
    assert panel.left_out.isVisible()
    assert panel.left_out.text() == (
        f"{under} weak matches not shown: meaning under the {floor:.2f} floor."
    )
    assert panel.left_out.toolTip().startswith(
        f"A match is shown when the note, or its sentence that matched, is within a cosine of "
        f"{floor:.2f} of the search in meaning"
    )
    # A search everything passes says nothing of a floor.
    monkeypatch.setattr(note_search, "RELEVANCE_FLOOR", -2.0)
    panel = searched(qtbot, window, "Friday releases")
    assert not panel.left_out.isVisible()

"""A source's title keeps every character; the files it names keep only the safe ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from desktop.flows.ingest import IngestReport, apply_ingest, plan_ingest
from desktop.flows.ingest.names import offered_names, page_name_problem, tidy_name
from desktop.vault.frontmatter import parse_frontmatter
from desktop.vault.index import VaultIndex
from desktop.vault.names import note_file_name
from desktop.vault.transactions.paths import check_relative_path
from inference.base import Completion, GenerationSettings, Message, StopFlag
from tests.fakes import ScriptedGenerator
from tests.ingest_helpers import SOURCE_MD, answer, make_vault, write_source

#: Characters Windows refuses in a file name, and those that break an Obsidian link.
FORBIDDEN = set('\\/:*?"<>|#^[]')


@dataclass
class GrammarBound(ScriptedGenerator):
    """Answers as any model bound by the plan's grammar can: it titles the plan with the
    first name the grammar offers."""

    def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        settings: GenerationSettings | None = None,
        stop: StopFlag | None = None,
    ) -> Completion:
        assert schema is not None
        self.answers = [answer(title=schema["properties"]["title"]["enum"][0])]
        return super().complete(messages, schema=schema, settings=settings, stop=stop)


def plan(vault: Path, source: Path) -> IngestReport:
    index = VaultIndex(vault)
    try:
        index.update()
        return plan_ingest(vault, source, engine=GrammarBound([]), judge=None, index=index)
    finally:
        index.close()


@pytest.mark.parametrize(
    ("heading", "file"),
    [
        ("Tutorial: First Steps with Rust", "Tutorial - First Steps with Rust"),
        ("Rustup / Cargo basics", "Rustup - Cargo basics"),
        ("Rustup | Cargo", "Rustup - Cargo"),
        ("Rust or Cargo?", "Rust or Cargo"),
        ('The "stable" Rust compiler', "The stable Rust compiler"),
        ("Rustup * Cargo", "Rustup Cargo"),
        ("Vec<T> in Rust", "Vec T in Rust"),
        ("C# and Rust", "C and Rust"),
        ("Installing Rust: Windows/macOS", "Installing Rust - Windows-macOS"),
    ],
)
def test_a_heading_with_characters_no_file_name_may_hold_titles_the_plan(
    tmp_path: Path, heading: str, file: str
) -> None:
    vault = make_vault(tmp_path / "vault")
    source = write_source(
        tmp_path / "downloads", text=SOURCE_MD.replace("# Installing Rust", f"# {heading}")
    )
    report = plan(vault, source)
    assert report.status == "planned", report.errors_first
    assert report.plan is not None
    note, page = report.plan.writes
    assert (note.path, page.path) == (f"Antinomy/Sources/{file}.md", f"Antinomy/Subjects/{file}.md")
    assert f"\n# {heading}\n" in (page.text or "")
    assert parse_frontmatter(note.text or "")["title"] == heading
    assert f"[[{file}]]" in (page.text or "")  # the claims cite the source note by its file


def test_a_second_source_with_the_same_title_updates_the_page_it_made(tmp_path: Path) -> None:
    vault = make_vault(tmp_path / "vault")
    text = SOURCE_MD.replace("# Installing Rust", "# Tutorial: First Steps with Rust")
    first = plan(vault, write_source(tmp_path / "downloads", text=text))
    assert first.preview is not None
    apply_ingest(vault, first, approval=first.preview.approval)
    later = write_source(tmp_path / "downloads", "later.md", text + "\nRustup is fast.\n")
    second = plan(vault, later)
    assert second.status == "planned", second.errors_first
    assert second.plan is not None
    writes = {w.path: w for w in second.plan.writes}
    page = writes["Antinomy/Subjects/Tutorial - First Steps with Rust.md"]
    assert page.action == "replace"  # an update of the page, not a second page


@pytest.mark.parametrize(
    ("title", "file"),
    [
        ("Tutorial: First Steps", "Tutorial - First Steps"),
        ("TCP/IP", "TCP-IP"),
        ("Back\\slash", "Back-slash"),
        ("What is uv?", "What is uv"),
        ("[[Link]] ^block #tag", "Link block tag"),
        ("...hidden", "hidden"),
        ("Ends with a dot.", "Ends with a dot"),
        ("CON", "CON note"),
        ("lpt1.txt", "lpt1.txt note"),
        ("???", ""),
    ],
)
def test_a_title_becomes_a_file_name_every_system_and_link_allows(title: str, file: str) -> None:
    assert note_file_name(title) == file


@given(st.text(max_size=120))
def test_any_title_gives_a_safe_file_name_or_none(title: str) -> None:
    name = note_file_name(title)
    assert len(name) <= 80
    if name:
        assert not FORBIDDEN & set(name) and name == name.strip(" .")
        check_relative_path(f"Antinomy/Subjects/{name}.md")


def test_titles_keep_their_question_mark_quoted_terms_and_word_final_hash() -> None:
    assert tidy_name("Rust or Go?") == "Rust or Go?"
    assert tidy_name("# C# basics #") == "C# basics"
    assert tidy_name("#tagged heading") == "tagged heading"
    assert page_name_problem('The "stable" compiler') is None
    assert page_name_problem("Rust or Go?") is None
    assert page_name_problem('The "stable compiler') == "holds a quote mark"
    assert page_name_problem("What's next?") == "holds a quote mark"
    assert page_name_problem("?Rust") == "starts or ends with punctuation"
    assert offered_names("Tutorial: First Steps", ["Step 1: Install"]) == [
        "Tutorial: First Steps",
        "Step 1: Install",
    ]

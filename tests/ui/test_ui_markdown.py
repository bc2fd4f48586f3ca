"""The preview's Markdown: live wikilinks, the note's own heading first, properties listed."""

from __future__ import annotations

from desktop.ui.markdown import link_target, note_markdown, wikilinks_to_markdown


def test_wikilinks_become_note_links() -> None:
    text = "See [[Easy runs build the base]], [[Folder/Note#Part|the part]] and ![[img.png]]."
    out = wikilinks_to_markdown(text)
    assert "[Easy runs build the base](note:Easy%20runs%20build%20the%20base)" in out
    assert "[the part](note:Folder/Note)" in out
    assert link_target("note:Easy%20runs%20build%20the%20base") == "Easy runs build the base"


def test_heading_first_then_properties_then_body() -> None:
    md = note_markdown("x.md", b"---\nkind: decision\n---\n# Title here\n\nBody [[Other|alias]].\n")
    lines = md.splitlines()
    assert lines[0] == "# Title here" and md.count("# Title here") == 1
    assert md.index("**kind**: decision") < md.index("Body [alias](note:Other).")


def test_a_note_that_cannot_be_parsed_still_previews_as_text() -> None:
    md = note_markdown("bad.md", b"---\nkey: [unclosed\n---\ntext\n")
    assert md.startswith("*This note is not indexed:") and "unclosed" in md

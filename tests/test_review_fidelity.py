"""Property: dismiss changes only ``hunter_false_positives``; undismiss gives the bytes back.

Notes are generated from the layouts users really have: LF or CRLF, a BOM or
not, comments, odd quoting, flow and block lists, an existing dismissal list in
either style, a body with or without a final newline.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from desktop.flows.review import dismiss_pair, undismiss_pair
from desktop.vault.frontmatter import parse_frontmatter, split_frontmatter

LINES = [
    "# a comment",
    "title: 'It''s quoted'",
    'subtitle: "double: quoted"   # trailing comment',
    "type: tension",
    "status: open",
    "tags: [a,  b ,c]",
    "aliases:\n  - One\n  # inside\n  - 'Two'",
    "date: 2024-05-01",
    "empty:",
    "note: >\n  folded\n  text",
]
NAMES = ["Alpha", "'Quoted name'", '"2024-01-08"', "Gamma: colon"]


@st.composite
def notes(draw: st.DrawFn) -> bytes:
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    lines = draw(st.lists(st.sampled_from(LINES), unique=True, max_size=6))
    existing = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=3))
    if existing:
        if draw(st.booleans()):
            entry = "hunter_false_positives: [" + ", ".join(existing) + "]"
        else:
            entry = "hunter_false_positives:\n" + "\n".join(f"  - {n}" for n in existing)
        lines.insert(draw(st.integers(0, len(lines))), entry)
    body = draw(st.sampled_from(["", "Body.", "Body [[Link]]\n\nMore", "x: not yaml"]))
    end = draw(st.sampled_from(["", newline]))
    # (An empty `---`/`---` block is left out: frontmatter.remove_key documents that it
    # loses its fences when the last key goes, so undismiss cannot give it back.)
    if lines:
        text = "---\n" + "\n".join(lines) + ("\n" if lines else "") + "---\n" + body + end
    else:
        text = body + end
    return (bom + text.replace("\n", newline)).encode("utf-8")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(note=notes())
def test_dismiss_touches_one_key_and_undismiss_restores_the_bytes(note: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        (root / "A.md").write_bytes(note)
        (root / "Peer note.md").write_bytes(b"peer\n")
        before = parse_frontmatter(note.decode("utf-8"))

        dismiss_pair(root, "A.md", "Peer note.md")
        after_bytes = (root / "A.md").read_bytes()
        after = parse_frontmatter(after_bytes.decode("utf-8"))
        old = before.get("hunter_false_positives") or []
        assert after["hunter_false_positives"] == [*old, "Peer note"]
        assert {k: v for k, v in after.items() if k != "hunter_false_positives"} == {
            k: v for k, v in before.items() if k != "hunter_false_positives"
        }
        assert list(after)[: len(before)] == list(before)  # key order kept
        original = split_frontmatter(note.decode("utf-8"))
        edited = split_frontmatter(after_bytes.decode("utf-8"))
        assert (edited.bom, edited.body) == (original.bom, original.body)
        if original.has_frontmatter:
            assert edited.newline == original.newline

        undismiss_pair(root, "A.md", "Peer note.md")
        assert (root / "A.md").read_bytes() == note
        assert (root / "Peer note.md").read_bytes() == b"peer\n"

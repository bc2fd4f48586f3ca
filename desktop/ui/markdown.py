"""Turns a note into Markdown that ``QTextBrowser.setMarkdown`` renders well.

Wikilinks become links with the ``note:`` scheme, so a click can be resolved
through the index (ambiguous names included) instead of being guessed here.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

from desktop.vault.notes import parse_note

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]|#]+)(#[^\[\]|]*)?(?:\|([^\[\]]*))?\]\]")
SCHEME = "note"


def link_target(url: str) -> str:
    """The wikilink target of a ``note:`` URL."""
    return unquote(url.split(":", 1)[1])


def wikilinks_to_markdown(body: str) -> str:
    def repl(m: re.Match[str]) -> str:
        target, heading, alias = m.group(2).strip(), m.group(3) or "", m.group(4)
        label = alias or (target + heading)
        return f"[{label}]({SCHEME}:{quote(target)})"

    return _WIKILINK.sub(repl, body)


def wikilinks_as_text(text: str) -> str:
    """Wikilinks as the words a reader sees: ``[[Projects/Staging|Staging]]`` → ``Staging``,
    ``[[Note#Part]]`` → ``Note#Part`` (the label the preview shows, without the link)."""

    def repl(m: re.Match[str]) -> str:
        target, heading, alias = m.group(2).strip(), m.group(3) or "", m.group(4)
        return alias or (target + heading)

    return _WIKILINK.sub(repl, text)


def _value(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def note_markdown(path: str, data: bytes) -> str:
    """A heading, the frontmatter as a short list, then the body with live wikilinks."""
    try:
        note = parse_note(path, data)
    except Exception as exc:  # a skipped note still previews as text
        text = data.decode("utf-8", errors="replace")
        return f"*This note is not indexed: {exc}*\n\n```\n{text[:20000]}\n```\n"
    body = note.body.lstrip()
    if body.startswith("# "):  # the note's own heading goes first, above its properties
        heading, _, body = body.partition("\n")
        lines = [heading, ""]
    else:
        lines = [f"# {note.title}", ""]
    for key, value in note.frontmatter.items():
        if key == "title":
            continue
        lines.append(f"- **{key}**: {wikilinks_to_markdown(_value(value))}")
    if note.frontmatter:
        lines.append("")
        lines.append("---")
        lines.append("")
    lines.append(wikilinks_to_markdown(body))
    lines += ["", f"`{path}`"]
    return "\n".join(lines)

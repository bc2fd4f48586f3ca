"""Subject pages: one Markdown note per subject, facts grouped by section, each cited.

A page as Antinomy writes it (``Antinomy/Subjects/Lisbon trip.md``)::

    ---
    type: subject
    aliases:
      - Portugal trip
    summary: "Lisbon trip: the user flies to Lisbon on 2026-12-12."
    ---
    # Lisbon trip

    ## Plans

    - The flight to Lisbon leaves on 12 December. *(event: 2026-12-12)* — [[…#^L12|2026-11-30#L12]]

(a block reference into the conversation's note, ``Antinomy/Conversations/2026-11-30.md``:
:mod:`.conversations`).

A fact line is a bullet holding at least one citation (a line id as a link's text, see
:mod:`.batches`; pages written before conversation notes existed cite the line id in
brackets, linking to the raw batch, and are read the same way). The user may edit a page
freely: new facts are inserted after the last bullet of their section (or in a new section
at the end), and aliases are added to the frontmatter with the byte-faithful editor, so
nothing else on the page changes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.flows.memory.batches import LINE_ID
from desktop.flows.memory.conversations import citation_link
from desktop.vault.frontmatter import add_to_list, parse_frontmatter, split_frontmatter
from desktop.vault.transactions import sha256_hex

DEFAULT_FOLDER = "Antinomy/Subjects"
KINDS = ("fact", "event", "deadline", "preference")
MAX_NAME_CHARS = 80

#: A citation: ``[[…#^L12|2026-11-30#L12]]``, or ``[2026-11-30#L12](…raw link…)`` as older
#: pages have it.
_CITED = re.compile(r"\[\[[^\]|]*\|(" + LINE_ID.pattern + r")\]\]|\[(" + LINE_ID.pattern + r")\]")
_DATE_NOTE = re.compile(r"\s*\*\((fact|event|deadline|preference): (\d{4}-\d{2}-\d{2})\)\*")
_UNSAFE_NAME = re.compile(r"[\\/:*?\"<>|#^\[\]\x00-\x1f]+")


@dataclass(frozen=True)
class Fact:
    """An accepted fact, ready to be written."""

    subject: str
    section: str
    text: str
    citations: tuple[str, ...]
    kind: str = "fact"
    date: str | None = None


@dataclass(frozen=True)
class PageFact:
    section: str
    text: str
    citations: tuple[str, ...]
    date: str | None
    kind: str


@dataclass(frozen=True)
class SubjectPage:
    #: Vault-relative path.
    path: str
    name: str
    aliases: tuple[str, ...]
    summary: str
    facts: tuple[PageFact, ...]
    sha256: str
    text: str


def subject_key(name: str) -> str:
    """How subject names and aliases are compared: case, accents and spacing ignored."""
    folded = unicodedata.normalize("NFKD", name).casefold()
    folded = "".join(c for c in folded if not unicodedata.combining(c))
    return " ".join(re.sub(r"[^\w]+", " ", folded).split())


def fact_key(text: str) -> str:
    return subject_key(text)


def clean_subject_name(name: str) -> str:
    cleaned = " ".join(_UNSAFE_NAME.sub(" ", name).split()).strip(" .,;:!?-–—'\"")
    return cleaned[:MAX_NAME_CHARS].rstrip(" .,;:!?-–—")


def read_pages(root: Path, folder: str = DEFAULT_FOLDER) -> list[SubjectPage]:
    base = root / folder
    if not base.is_dir():
        return []
    pages = []
    for file in sorted(base.glob("*.md")):
        if file.is_symlink() or not file.is_file():
            continue
        data = file.read_bytes()
        page = parse_page(f"{folder}/{file.name}", data)
        if page is not None:
            pages.append(page)
    return pages


def parse_page(path: str, data: bytes) -> SubjectPage | None:
    """The page, or None if it is not a subject page (``type: subject``)."""
    try:
        text = data.decode("utf-8")
        meta = parse_frontmatter(text)
    except Exception:  # an unreadable page is not ours to rewrite
        return None
    if meta.get("type") != "subject":
        return None
    raw_aliases = meta.get("aliases") or []
    aliases: list[object] = (
        [raw_aliases]
        if isinstance(raw_aliases, str)
        else (list(raw_aliases) if isinstance(raw_aliases, list) else [])
    )
    body = split_frontmatter(text).body
    facts: list[PageFact] = []
    section = ""
    for line in body.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("- ") and _CITED.search(line):
            facts.append(_parse_fact_line(section, line))
    return SubjectPage(
        path=path,
        name=Path(path).stem,
        aliases=tuple(str(a) for a in aliases if isinstance(a, str | int | float)),
        summary=str(meta.get("summary") or ""),
        facts=tuple(facts),
        sha256=sha256_hex(data),
        text=text,
    )


def _parse_fact_line(section: str, line: str) -> PageFact:
    citations = tuple(m.group(1) or m.group(4) for m in _CITED.finditer(line))
    first = _CITED.search(line)
    head = line[2 : first.start() if first else len(line)]
    date_match = _DATE_NOTE.search(head)
    kind, date = (date_match.group(1), date_match.group(2)) if date_match else ("fact", None)
    text = _DATE_NOTE.sub("", head).rstrip(" —-")
    return PageFact(section, text.strip(), citations, date, kind)


def fact_line(fact: Fact, *, page_folder: str) -> str:
    """A fact's bullet, its citations block references into the conversation notes."""
    note = f" *({fact.kind}: {fact.date})*" if fact.date else ""
    links = ", ".join(citation_link(c) for c in fact.citations)
    return f"- {fact.text}{note} — {links}"


def render_new_page(
    *, name: str, aliases: Sequence[str], summary: str, facts: Sequence[Fact], folder: str
) -> str:
    lines = ["---", "type: subject"]
    if aliases:
        lines.append("aliases:")
        lines.extend(f"  - {_yaml_str(a)}" for a in aliases)
    lines.append(f"summary: {_yaml_str(summary)}")
    lines += ["---", f"# {name}", ""]
    for section, group in _by_section(facts):
        lines += [f"## {section}", ""]
        lines += [fact_line(f, page_folder=folder) for f in group]
        lines.append("")
    return "\n".join(lines)


def append_to_page(
    text: str, *, facts: Sequence[Fact], new_aliases: Iterable[str], folder: str
) -> str:
    """``text`` with ``facts`` inserted in their sections and ``new_aliases`` added."""
    for alias in new_aliases:
        text = add_to_list(text, "aliases", alias)
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(nl)
    for section, group in _by_section(facts):
        new = [fact_line(f, page_folder=folder) for f in group]
        at = _section_end(lines, section)
        if at is None:
            while lines and lines[-1] == "":
                lines.pop()
            lines += ["", f"## {section}", "", *new, ""]
        else:
            lines[at:at] = new
    out = nl.join(lines)
    return out if out.endswith(nl) else out + nl


def _section_end(lines: list[str], section: str) -> int | None:
    """Index after the last bullet of ``## section`` (after its heading if it has none)."""
    start = None
    for i, line in enumerate(lines):
        if line.startswith("## ") and subject_key(line[3:]) == subject_key(section):
            start = i
            break
    if start is None:
        return None
    end = start + 1
    last_bullet = None
    while end < len(lines) and not lines[end].startswith("#"):
        if lines[end].startswith("- "):
            last_bullet = end
        end += 1
    if last_bullet is not None:
        return last_bullet + 1
    return start + 2 if start + 1 < len(lines) and lines[start + 1] == "" else start + 1


def _by_section(facts: Sequence[Fact]) -> list[tuple[str, list[Fact]]]:
    groups: dict[str, list[Fact]] = {}
    names: dict[str, str] = {}
    for fact in facts:
        key = subject_key(fact.section) or "notes"
        names.setdefault(key, fact.section.strip() or "Notes")
        groups.setdefault(key, []).append(fact)
    return [(names[k], g) for k, g in groups.items()]


def _yaml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped}"'

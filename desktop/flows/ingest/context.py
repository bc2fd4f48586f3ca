"""Which existing pages the model sees: relevant ones from the index, within its window.

Only pages ingest may update (subject pages) are shown to the model; related
read-only notes (decisions, principles, …) are compared with the new claims by
the judge. Relevance comes from the vault index (full text and, when the index has an
embedder, meaning: :func:`desktop.vault.search.search`) for a query made of the
source's title and key sentences; without an index, the subject pages are
ranked by shared words. Each page is shown as its name, type and a bounded
excerpt. Pages that do not fit the token budget are left out, and the report
names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from desktop.flows.ingest.sentences import (
    Sentence,
    content_words,
    lexical_overlap,
    plain,
    split_sentences,
    strip_citations,
)
from desktop.vault.frontmatter import parse_frontmatter, split_frontmatter
from desktop.vault.index import VaultIndex
from desktop.vault.layout import PROTECTED_DIRS
from desktop.vault.names import note_file_name
from desktop.vault.notes import note_type
from desktop.vault.search import search
from desktop.vault.transactions import sha256_hex
from inference.base import Generator

#: Search hits read before the budget decides (more are not worth the time).
MAX_CANDIDATES = 12
#: Distinct content words a page must share with the source's key sentences to be related.
MIN_SHARED_WORDS = 3


@dataclass(frozen=True)
class ContextPage:
    path: str
    name: str
    type: str | None
    #: The page as read now: its text and hash (an update is guarded by this hash).
    text: str
    sha256: str
    excerpt: str
    updatable: bool

    def sentences(self) -> list[Sentence]:
        body = strip_citations(split_frontmatter(self.text).body)
        return [Sentence(s.number, s.text.strip("“”\"'"), s.section) for s in split_sentences(body)]


@dataclass(frozen=True)
class LeftOut:
    name: str
    why: str


@dataclass(frozen=True)
class Context:
    pages: tuple[ContextPage, ...]
    left_out: tuple[LeftOut, ...]
    tokens: int

    @property
    def shown(self) -> tuple[ContextPage, ...]:
        """The pages the model sees and may route to (the updatable ones)."""
        return tuple(p for p in self.pages if p.updatable)

    def page_named(self, name: str) -> ContextPage | None:
        """The page shown under ``name``: its file name, its path, or a title whose file
        name it has ("Tutorial: First Steps" is ``Tutorial - First Steps.md``)."""
        key = name.strip().casefold().removesuffix(".md")
        as_file = note_file_name(name).casefold()
        for page in self.pages:
            if key in (page.name.casefold(), page.path.casefold().removesuffix(".md")):
                return page
        for page in self.pages:
            if as_file and as_file == page.name.casefold():
                return page
        return None


def select_context(
    root: Path,
    query: str,
    *,
    engine: Generator,
    index: VaultIndex | None,
    budget_tokens: int,
    max_pages: int,
    excerpt_chars: int,
    update_types: Sequence[str],
    pages_folder: str,
    skip_folders: Sequence[str],
) -> Context:
    candidates = _candidates(root, query, index, pages_folder, skip_folders)
    query_words = set(content_words(query))
    pages: list[ContextPage] = []
    left_out: list[LeftOut] = []
    used = 0
    for rel in candidates:
        page = _read_page(root, rel, excerpt_chars, update_types)
        if page is None:
            continue
        # A search hit on one shared word is not a related page: it would only offer the
        # model a wrong name to copy.
        if len(query_words & set(content_words(page.text))) < MIN_SHARED_WORDS:
            continue
        if len(pages) >= max_pages:
            left_out.append(LeftOut(page.name, f"more than {max_pages} related pages"))
            continue
        if page.updatable:  # read-only pages are compared by the judge, not shown to the model
            cost = engine.count_tokens(render_page(page)) + 2
            if used + cost > budget_tokens:
                left_out.append(LeftOut(page.name, "does not fit the model's context window"))
                continue
            used += cost
        pages.append(page)
    return Context(tuple(pages), tuple(left_out), used)


def render_page(page: ContextPage) -> str:
    kind = page.type or "note"
    can = "" if page.updatable else " (read only)"
    return f"PAGE {page.name} [{kind}{can}]\n{page.excerpt}"


def _candidates(
    root: Path,
    query: str,
    index: VaultIndex | None,
    pages_folder: str,
    skip_folders: Sequence[str],
) -> list[str]:
    def allowed(rel: str) -> bool:
        parts = rel.split("/")
        return not any(p in PROTECTED_DIRS for p in parts) and not any(
            rel.startswith(folder.rstrip("/") + "/") for folder in skip_folders
        )

    if index is not None:
        hits = search(index, query, k=MAX_CANDIDATES * 2)
        return [h.note.path for h in hits if allowed(h.note.path)][:MAX_CANDIDATES]
    base = root / pages_folder
    if not base.is_dir():
        return []
    ranked = []
    for file in base.rglob("*.md"):
        rel = file.relative_to(root).as_posix()
        if file.is_symlink() or not file.is_file() or not allowed(rel):
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        score = lexical_overlap(query, text[:4000])
        if score > 0:
            ranked.append((-score, rel))
    return [rel for _, rel in sorted(ranked)[:MAX_CANDIDATES]]


def _read_page(
    root: Path, rel: str, excerpt_chars: int, update_types: Sequence[str]
) -> ContextPage | None:
    file = root / rel
    if file.is_symlink() or not file.is_file():
        return None
    try:
        data = file.read_bytes()
        text = data.decode("utf-8")
        meta = parse_frontmatter(text)
    except Exception:  # unreadable notes are listed by the index coverage, not here
        return None
    kind = note_type(meta)
    body = split_frontmatter(text).body
    lines = [plain(line) for line in body.splitlines() if line.strip()]
    excerpt = "\n".join(lines)
    if len(excerpt) > excerpt_chars:
        excerpt = excerpt[:excerpt_chars].rsplit(" ", 1)[0] + " …"
    return ContextPage(
        path=rel,
        name=Path(rel).stem,
        type=kind,
        text=text,
        sha256=sha256_hex(data),
        excerpt=excerpt,
        updatable=kind in update_types,
    )

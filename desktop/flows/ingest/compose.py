"""From the model's routing to full pages: the deterministic skeleton, filled and routed.

The model names a title, writes a summary and routes claim numbers to pages;
code writes the Markdown. Every problem found in the answer (a number out of
range, a page name that is a path, a read-only page, an empty summary) is a
validation error that goes to the repair request; nothing is silently fixed.

A new page::

    ---
    type: subject
    summary: "…"
    sources:
      - "[[Source note]]"
    ---
    # Title

    <summary> — [[Source note]]

    ## Key points

    - “<sentence quoted from the source>” — [[Source note]]

An existing subject page gets the source added to ``sources`` (byte-faithful
frontmatter edit) and a section ``## From <source note>`` at its end.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.flows.ingest.context import Context, ContextPage
from desktop.flows.ingest.prompt import SEVERITIES
from desktop.flows.ingest.sentences import Sentence, content_words, lexical_overlap, plain
from desktop.flows.ingest.source_note import SourceNote
from desktop.vault.frontmatter import FrontmatterError, add_to_list

_BAD_NAME = re.compile(r"[\\/:*?\"<>|#^\[\]\x00-\x1f]|\.\.")
MAX_NAME_CHARS = 80
#: An existing claim "occurs" in its page when this share of its words is in one sentence.
QUOTE_OVERLAP = 0.8
#: At most this share of the summary's content words may be absent from the sentences.
MAX_FOREIGN_SHARE = 0.4


@dataclass(frozen=True)
class PageDraft:
    """One page of an ingest plan, as full Markdown."""

    path: str
    action: Literal["create", "replace"]
    content: str
    #: For ``replace``: the page as it was read at planning time, and its hash.
    before: str | None = None
    expected_sha256: str | None = None
    claims: tuple[int, ...] = ()


@dataclass(frozen=True)
class ClaimedContradiction:
    page: str
    existing_claim: str
    claim: str
    severity: str


@dataclass(frozen=True)
class DroppedContradiction:
    reason: str
    detail: str


@dataclass(frozen=True)
class Composed:
    title: str
    summary: str
    pages: tuple[PageDraft, ...]
    contradictions: tuple[ClaimedContradiction, ...]
    dropped: tuple[DroppedContradiction, ...]
    #: Problems in the answer itself; validation adds the page-level ones.
    errors: tuple[str, ...] = field(default=())


def compose_plan(
    answer: dict[str, Any],
    *,
    sentences: Sequence[Sentence],
    context: Context,
    source: SourceNote,
    default_title: str,
    pages_folder: str,
) -> Composed:
    errors: list[str] = []
    n = len(sentences)
    title = _text(answer.get("title"))
    if not title:
        title = default_title
    elif _BAD_NAME.search(title) or title.startswith("."):
        errors.append(f"title {title!r} is not a plain name: no / \\ : [ ] # or '..' in it")
    elif not _shares_words(title, [default_title, *(x.text for x in sentences)]):
        errors.append(f"title {title!r} shares no word with the source: name what it is about")
    title = " ".join(title.split())[:MAX_NAME_CHARS]
    summary = _text(answer.get("summary"))
    if summary:
        errors += _check_summary(summary, sentences)
    elif sentences:
        # The skeleton's own summary: the lead sentence, quoted (the model may leave it empty).
        summary = f"“{sentences[0].text}”"
    routes: dict[str, list[int]] = {}
    routed: set[int] = set()
    raw_pages = answer.get("pages")
    if raw_pages is not None and not isinstance(raw_pages, list):
        errors.append("pages must be a list of {page, claims}")
        raw_pages = []
    for i, item in enumerate(raw_pages or [], 1):
        if not isinstance(item, dict):
            errors.append(f"pages[{i}] is not an object with page and claims")
            continue
        name = _text(item.get("page"))
        if not name:
            errors.append(f"pages[{i}] has no page name")
            continue
        if _BAD_NAME.search(name) or name.startswith("."):
            errors.append(f"pages[{i}]: page name {name!r} is not a plain name (no / \\ [ ] # ..)")
            continue
        numbers = _numbers(item.get("claims"), n, f"pages[{i}]", errors)
        if (
            numbers
            and context.page_named(name) is None
            and not _shares_words(name, [default_title, *(sentences[k - 1].text for k in numbers)])
        ):
            errors.append(
                f"pages[{i}]: new page {name!r} shares no word with the sentences routed to it "
                "or the source: name it after them, or leave them to the title page"
            )
            continue
        fresh = [k for k in numbers if k not in routed]
        routed.update(fresh)
        if fresh:
            routes.setdefault(" ".join(name.split())[:MAX_NAME_CHARS], []).extend(fresh)
    rest = [k for k in range(1, n + 1) if k not in routed]
    if rest or not routes:
        routes.setdefault(title, []).extend(rest)
    drafts: list[PageDraft] = []
    for name, numbers in routes.items():
        claims = [sentences[k - 1] for k in sorted(numbers)]
        existing = context.page_named(name)
        is_main = name == title
        if existing is not None:
            if not existing.updatable:
                errors.append(
                    f"page {name!r} is a {existing.type or 'plain'} note, which ingest does not "
                    "update: route those claims to a subject page or a new page"
                )
                continue
            draft = _update(existing, claims, source, summary if is_main else "", errors)
        else:
            draft = _create(name, claims, source, summary if is_main else "", pages_folder)
        if draft is not None:
            drafts.append(draft)
    claimed, dropped = _contradictions(answer.get("contradictions"), sentences, context, errors)
    return Composed(title, summary, tuple(drafts), claimed, dropped, tuple(errors))


def _shares_words(name: str, texts: Sequence[str]) -> bool:
    words = set(content_words(name))
    return any(words & set(content_words(t)) for t in texts)


def _check_summary(summary: str, sentences: Sequence[Sentence]) -> list[str]:
    """The summary's content words must come from the key sentences (no invented facts)."""
    words = content_words(summary)
    known = {w for s in sentences for w in content_words(s.text)}
    if not words:
        return ["summary says nothing: use words from the numbered sentences, or leave it empty"]
    foreign = [w for w in dict.fromkeys(words) if w not in known and w[:-1] not in known]
    if len(foreign) > MAX_FOREIGN_SHARE * len(set(words)):
        shown = ", ".join(foreign[:6])
        return [
            f"summary uses words that are not in the sentences ({shown}): keep to the "
            "source's words, or leave summary empty"
        ]
    return []


def claim_line(sentence: Sentence, source: SourceNote) -> str:
    return f"- “{sentence.text}” — {source.link}"


def _create(
    name: str, claims: Sequence[Sentence], source: SourceNote, summary: str, folder: str
) -> PageDraft:
    lines = [
        "---",
        "type: subject",
        f"summary: {_yaml_str(summary or plain(claims[0].text))}",
        "sources:",
        f'  - "{source.link}"',
        "---",
        f"# {name}",
        "",
    ]
    if summary:
        lines += [f"{summary} — {source.link}", ""]
    lines += ["## Key points", "", *(claim_line(s, source) for s in claims), ""]
    return PageDraft(
        path=f"{folder}/{name}.md",
        action="create",
        content="\n".join(lines),
        claims=tuple(s.number for s in claims),
    )


def _update(
    page: ContextPage,
    claims: Sequence[Sentence],
    source: SourceNote,
    summary: str,
    errors: list[str],
) -> PageDraft | None:
    try:
        text = add_to_list(page.text, "sources", source.link)
    except FrontmatterError as exc:
        errors.append(f"page {page.name!r}: its frontmatter cannot take the source ({exc})")
        return None
    nl = "\r\n" if "\r\n" in text else "\n"
    body = text.rstrip("\r\n")
    section = [f"## From {source.name}", ""]
    if summary:
        section += [f"{summary} — {source.link}", ""]
    section += [claim_line(s, source) for s in claims]
    content = body + nl + nl + nl.join(section) + nl
    return PageDraft(
        path=page.path,
        action="replace",
        content=content,
        before=page.text,
        expected_sha256=page.sha256,
        claims=tuple(s.number for s in claims),
    )


def _contradictions(
    raw: Any, sentences: Sequence[Sentence], context: Context, errors: list[str]
) -> tuple[tuple[ClaimedContradiction, ...], tuple[DroppedContradiction, ...]]:
    if raw is None:
        return (), ()
    if not isinstance(raw, list):
        errors.append("contradictions must be a list (use [] when there are none)")
        return (), ()
    kept: list[ClaimedContradiction] = []
    dropped: list[DroppedContradiction] = []
    for i, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            dropped.append(DroppedContradiction("malformed", f"contradictions[{i}] not an object"))
            continue
        page = context.page_named(_text(item.get("page")))
        claim_no = item.get("claim")
        existing = _text(item.get("existing_claim"))
        severity = _text(item.get("severity")).lower() or "medium"
        if page is None:
            dropped.append(
                DroppedContradiction("unknown_page", f"{item.get('page')!r} was not shown")
            )
            continue
        if (
            not isinstance(claim_no, int)
            or isinstance(claim_no, bool)
            or not 1 <= claim_no <= len(sentences)
        ):
            dropped.append(DroppedContradiction("bad_claim", f"claim {claim_no!r} out of range"))
            continue
        quote = _find_in_page(existing, page)
        if quote is None:
            dropped.append(
                DroppedContradiction(
                    "quote_not_found", f"{existing[:80]!r} does not occur in {page.name}"
                )
            )
            continue
        if severity not in SEVERITIES:
            severity = "medium"
        kept.append(ClaimedContradiction(page.path, quote, sentences[claim_no - 1].text, severity))
    return tuple(kept), tuple(dropped)


def _find_in_page(claim: str, page: ContextPage) -> str | None:
    if not claim:
        return None
    best, score = None, 0.0
    for sentence in page.sentences():
        if " ".join(claim.split()).casefold() in sentence.text.casefold():
            return sentence.text
        s = lexical_overlap(claim, sentence.text)
        if s > score:
            best, score = sentence.text, s
    return best if score >= QUOTE_OVERLAP else None


def _numbers(raw: Any, n: int, where: str, errors: list[str]) -> list[int]:
    if not isinstance(raw, list):
        errors.append(f"{where}: claims must be a list of sentence numbers 1–{n}")
        return []
    out = []
    for value in raw:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= n:
            errors.append(f"{where}: claim {value!r} is not a sentence number 1–{n}")
            continue
        if value not in out:
            out.append(value)
    return out


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _yaml_str(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped}"'

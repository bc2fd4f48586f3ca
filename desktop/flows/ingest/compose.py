"""From the model's routing to full pages: the deterministic skeleton, filled and routed.

The model names a title, writes a summary and routes claim numbers to pages;
code writes the Markdown. Every problem found in the answer (a number out of
range, a page name that is not a name (:func:`.names.page_name_problem`), a read-only
page) is a validation error that goes to the repair request; nothing is
silently fixed.

Every claim line is checked against the source before it is written
(:mod:`.support`): one the source does not support — in practice a summary the
model made up — is dropped with its reason, and a page left with no claim is not
written.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from desktop.flows.ingest.context import Context, ContextPage
from desktop.flows.ingest.names import MAX_NAME_CHARS, page_name_problem
from desktop.flows.ingest.prompt import SEVERITIES
from desktop.flows.ingest.sentences import Sentence, content_words, lexical_overlap, plain
from desktop.flows.ingest.source_note import SourceNote
from desktop.flows.ingest.support import DroppedClaim, Verdict
from desktop.vault.frontmatter import FrontmatterError, add_to_list
from desktop.vault.names import note_file_name

#: A name that walks folders ("../x", "/etc/x", "C:\\x"); "Rust / Cargo" is a title.
_PATH_LIKE = re.compile(r"^[/\\.]|(^|[/\\])\.\.([/\\]|$)|^[A-Za-z]:[/\\]")
#: An existing claim "occurs" in its page when this share of its words is in one sentence.
QUOTE_OVERLAP = 0.8
#: Checks one claim line's text against the source (:meth:`.support.SourceSupport.check`).
ClaimCheck = Callable[[str], Verdict]


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
    #: Claim lines the source does not support: not written.
    dropped_claims: tuple[DroppedClaim, ...] = field(default=())
    #: Names of new pages refused (not a name, or naming nothing routed to them).
    refused_pages: tuple[str, ...] = field(default=())


def compose_plan(
    answer: dict[str, Any],
    *,
    sentences: Sequence[Sentence],
    context: Context,
    source: SourceNote,
    default_title: str,
    pages_folder: str,
    check: ClaimCheck,
    source_words: frozenset[str] | None = None,
) -> Composed:
    errors: list[str] = []
    n = len(sentences)
    title = _text(answer.get("title"))
    if not title:
        title = default_title
    elif context.page_named(title) is None:
        problem = _name_problem(title, source_words)
        if problem:
            errors.append(f"title {title!r} {problem}")
        elif not _shares_words(title, [default_title, *(x.text for x in sentences)]):
            errors.append(f"title {title!r} shares no word with the source: name what it is about")
    title = " ".join(title.split())[:MAX_NAME_CHARS]
    routes: dict[str, list[int]] = {}
    routed: set[int] = set()
    refused: list[str] = []
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
        existing = context.page_named(name)
        problem = _name_problem(name, source_words) if existing is None else None
        if problem:
            errors.append(f"pages[{i}]: page name {name!r} {problem}")
            refused.append(name)
            continue
        numbers = _numbers(item.get("claims"), n, f"pages[{i}]", errors)
        if (
            numbers
            and existing is None
            and not _shares_words(name, [default_title, *(sentences[k - 1].text for k in numbers)])
        ):
            errors.append(
                f"pages[{i}]: new page {name!r} shares no word with the sentences routed to it "
                "or the source: name it after them, or leave them to the title page"
            )
            refused.append(name)
            continue
        fresh = [k for k in numbers if k not in routed]
        routed.update(fresh)
        if fresh:
            routes.setdefault(" ".join(name.split())[:MAX_NAME_CHARS], []).extend(fresh)
    rest = [k for k in range(1, n + 1) if k not in routed]
    if rest or not routes:
        routes.setdefault(title, []).extend(rest)
    main = context.page_named(title)
    main_path = main.path if main is not None else new_page_path(pages_folder, title)
    dropped_claims: list[DroppedClaim] = []

    def supported(text: str, page: str) -> bool:
        verdict = check(text)
        if not verdict.supported:
            dropped_claims.append(DroppedClaim(page, text, verdict.reason, verdict.detail))
        return verdict.supported

    summary = _text(answer.get("summary"))
    if summary and not supported(summary, main_path):
        summary = ""
    if not summary and sentences:
        # The skeleton's own summary: the lead sentence, quoted (the model may leave it empty).
        lead = f"“{sentences[0].text}”"
        summary = lead if supported(lead, main_path) else ""
    drafts: list[PageDraft] = []
    for name, numbers in routes.items():
        existing = context.page_named(name)
        is_main = name == title
        path = existing.path if existing is not None else new_page_path(pages_folder, name)
        claims = [sentences[k - 1] for k in sorted(numbers)]
        claims = [s for s in claims if supported(s.text, path)]
        if is_main:  # a sentence the summary repeats (quoted or not) is not listed again
            claims = [s for s in claims if s.text != summary.strip("“”")]
        if not claims and not (is_main and summary):
            continue  # every claim of it was dropped: the page is not written
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
    return Composed(
        title, summary, tuple(drafts), claimed, dropped, tuple(errors), tuple(dropped_claims),
        tuple(refused),
    )  # fmt: skip


def _name_problem(name: str, source_words: frozenset[str] | None) -> str | None:
    if _PATH_LIKE.search(name):
        return "is a path, not a name"
    if not note_file_name(name, max_chars=MAX_NAME_CHARS):
        return "has no letter a file name can keep"
    problem = page_name_problem(name, source_words=source_words)
    return f"is not a page name: it {problem}" if problem else None


def new_page_path(folder: str, name: str) -> str:
    """Where a new page titled ``name`` is written: its title keeps every character (the
    page's heading), its file name only those every system and link allow."""
    return f"{folder}/{note_file_name(name, max_chars=MAX_NAME_CHARS)}.md"


def _shares_words(name: str, texts: Sequence[str]) -> bool:
    words = set(content_words(name))
    return any(words & set(content_words(t)) for t in texts)


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
    if claims:
        lines += ["## Key points", "", *(claim_line(s, source) for s in claims), ""]
    return PageDraft(
        path=new_page_path(folder, name),
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

"""Reading a source: a local Markdown, text, HTML or PDF file becomes clean text.

Chosen by measuring on real documents nobody on the team wrote
(``tests/perf/bench_ingest.py --compare``):

- PDF: **pypdfium2** (PDFium, the engine of Chrome's viewer). On two Debian
  manuals it found the same words as pdfminer.six (99.9–100 % agreement),
  20–25× faster (0.12 s against 2.99 s for 36 pages), without the broken
  line-end hyphens of pdfminer's layout pass (20 in one manual). A page
  without a text layer gives no text: a scanned PDF is refused.
- HTML: **trafilatura** (main-content extraction with Markdown output). On
  three Debian HTML manuals and three rustdoc pages it kept 97–100 % of the
  main element's words and 0–0.5 % of text from outside it; readability-lxml
  + markdownify kept 52–98 % (it dropped whole sections of texinfo pages) and
  up to 3.3 % from outside, at similar speed, and needs two packages.

Markdown and text may open with front matter (YAML between ``---`` lines, or TOML
between ``+++`` lines, as Jekyll, Hugo and MkDocs pages do): it is metadata, not
text. It is cut from the text (no sentence, no claim comes from it) and kept in
:attr:`SourceText.meta`, which the source note stores under ``source_meta``.

The title is the source's own: its front matter's ``title``, else its first H1
(HTML: its ``<title>``), else its first heading of another level; a generic heading
("Description", "Overview", "Introduction": :data:`~.names.GENERIC`) is skipped, and
the file's name is the last resort.

Every refusal is a :class:`SourceRefused` with a stable ``reason`` and a
message that names the file and what to do.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from desktop.flows.ingest.errors import SourceRefused
from desktop.flows.ingest.names import heading_text, is_generic
from desktop.flows.ingest.sentences import plain
from desktop.vault.frontmatter import FrontmatterError, parse_frontmatter, split_frontmatter

#: Larger files are refused: the model reads a few thousand words at most anyway.
MAX_SOURCE_BYTES = 20 * 1024 * 1024
#: Clean text kept in the source note (the rest is cut, and the note says so).
MAX_TEXT_CHARS = 400_000
#: HTML whose main content is shorter than this many words is "mostly navigation".
MIN_HTML_WORDS = 40
#: A line with fewer words is a menu entry or an index term, not prose.
MIN_PROSE_LINE_WORDS = 6
#: A PDF with fewer words than this per page on average has no usable text layer.
MIN_PDF_WORDS_PER_PAGE = 3

KINDS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
}

_WORD = re.compile(r"\w{2,}", re.UNICODE)
_TITLE_TAG = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_ATX = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_BLANKS = re.compile(r"\n{3,}")
_TOML = re.compile(r"\A\+\+\+[ \t]*\n(.*?)\n\+\+\+[ \t]*(?:\n|\Z)", re.DOTALL)
_KEY_LINE = re.compile(r"^[A-Za-z_][\w-]*\s*:")

#: Front matter: a mapping, or its raw text when it is not valid YAML / TOML.
Meta = dict[str, object] | str


@dataclass(frozen=True)
class SourceText:
    """A source file read into clean text."""

    origin: str
    kind: str
    title: str
    text: str
    sha256: str
    size_bytes: int
    #: Words in the raw document (HTML: all visible text) and in the clean text.
    words_raw: int
    words_kept: int
    seconds: float
    pages: int = 0
    truncated: bool = False
    #: The source's own front matter (never part of ``text``); {} when it has none.
    meta: Meta = field(default_factory=dict)

    @property
    def boilerplate_removed(self) -> float:
        """Share of the raw words that extraction dropped (navigation, menus, footers)."""
        if self.words_raw <= 0:
            return 0.0
        return round(max(0.0, 1.0 - self.words_kept / self.words_raw), 4)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def read_source(path: str | Path, *, max_bytes: int = MAX_SOURCE_BYTES) -> SourceText:
    """Read ``path`` into clean text, or raise :class:`SourceRefused` saying why."""
    started = time.perf_counter()
    file = Path(path).expanduser()
    shown = str(file)
    if not file.exists():
        raise SourceRefused("missing", f"{shown} does not exist — check the path.")
    if not file.is_file():
        raise SourceRefused("not_a_file", f"{shown} is not a file — give one document to ingest.")
    kind = KINDS.get(file.suffix.lower())
    if kind is None:
        raise SourceRefused(
            "unsupported",
            f"{shown}: {file.suffix or 'no extension'} files are not supported — ingest a "
            "Markdown (.md), text (.txt), HTML (.html) or PDF (.pdf) file.",
        )
    size = file.stat().st_size
    if size > max_bytes:
        raise SourceRefused(
            "too_large",
            f"{shown} is {size / 1048576:.1f} MiB; the limit is {max_bytes / 1048576:.0f} MiB — "
            "split it, or ingest the chapter you need.",
        )
    data = file.read_bytes()
    if not data.strip():
        raise SourceRefused("empty", f"{shown} is empty — there is nothing to ingest.")
    digest = hashlib.sha256(data).hexdigest()
    pages = 0
    if kind == "pdf":
        text, words_raw, pages = _read_pdf(data, shown)
    elif kind == "html":
        text, words_raw = _read_html(data, shown)
    else:
        text = _decode(data, shown)
        words_raw = word_count(text)
    text = _tidy(text)
    meta: Meta = {}
    if kind in ("markdown", "text"):
        meta, text = split_source_meta(text)
    truncated = len(text) > MAX_TEXT_CHARS
    if truncated:
        text = text[:MAX_TEXT_CHARS].rsplit("\n", 1)[0]
    if not word_count(text):
        raise SourceRefused("empty", f"{shown} has no words in it — there is nothing to ingest.")
    return SourceText(
        origin=str(file.resolve()),
        kind=kind,
        title=_title(kind, data, text, file, meta),
        text=text,
        sha256=digest,
        size_bytes=size,
        words_raw=words_raw,
        words_kept=word_count(text),
        seconds=round(time.perf_counter() - started, 4),
        pages=pages,
        truncated=truncated,
        meta=meta,
    )


def _decode(data: bytes, shown: str) -> str:
    if b"\x00" in data[:8192]:
        raise SourceRefused(
            "not_text", f"{shown} is binary, not text — save it as Markdown, text, HTML or PDF."
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceRefused(
            "not_text",
            f"{shown} is not UTF-8 text (byte {exc.start} cannot be read) — re-save it as UTF-8.",
        ) from None


def _read_pdf(data: bytes, shown: str) -> tuple[str, int, int]:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise SourceRefused(
                "pdf_encrypted",
                f"{shown} is encrypted (password-protected) — save an unprotected copy and "
                "ingest that.",
            ) from None
        raise SourceRefused(
            "pdf_unreadable", f"{shown} is not a readable PDF ({exc}) — check the file."
        ) from None
    try:
        pages = len(pdf)
        texts = []
        for i in range(pages):
            page = pdf[i]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_bounded())
            textpage.close()
            page.close()
    finally:
        pdf.close()
    text = "\n\n".join(t.replace("\r\n", "\n").replace("\r", "\n") for t in texts)
    words = word_count(text)
    if pages == 0 or words < MIN_PDF_WORDS_PER_PAGE * pages:
        raise SourceRefused(
            "pdf_no_text",
            f"{shown} has no text layer ({words} words on {pages} pages): it looks scanned — "
            "run OCR on it first (e.g. ocrmypdf), then ingest the result.",
        )
    return text, words, pages


def _read_html(data: bytes, shown: str) -> tuple[str, int]:
    import lxml.html
    import trafilatura

    raw = _decode_html(data, shown)
    try:
        # From bytes: lxml refuses a str that carries an XML encoding declaration (XHTML).
        tree = lxml.html.fromstring(data)
        for node in tree.xpath("//script|//style|//noscript|//template"):
            node.drop_tree()
        words_raw = word_count(tree.text_content())
        anchors = {_squash(a.text_content()) for a in tree.iter("a")}
    except Exception:  # lxml refuses odd documents; trafilatura still tries
        words_raw = word_count(raw)
        anchors = set()
    text = (
        trafilatura.extract(
            raw,
            output_format="markdown",
            include_links=False,
            include_tables=True,
            include_comments=False,
            favor_recall=True,
        )
        or ""
    )
    # Menus, link lists and indexes are short lines or a link's text: not prose.
    prose = sum(
        n
        for line in text.splitlines()
        if (n := word_count(line)) >= MIN_PROSE_LINE_WORDS
        and _squash(line.lstrip("-*# ")) not in anchors
    )
    if prose < MIN_HTML_WORDS:
        raise SourceRefused(
            "html_navigation",
            f"{shown} is mostly navigation: no main text found ({prose} words of prose among "
            f"{words_raw}) — save the article itself (reader view or print to PDF) and "
            "ingest that.",
        )
    return text, words_raw


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def _decode_html(data: bytes, shown: str) -> str:
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise SourceRefused("not_text", f"{shown} is not readable text — re-save it as UTF-8.")


def _tidy(text: str) -> str:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANKS.sub("\n\n", "\n".join(lines)).strip() + "\n"


def split_source_meta(text: str) -> tuple[Meta, str]:
    """``(front matter, the rest)``; ``({}, text)`` when the text opens with none.

    A block that does not parse is kept as its raw text, but only when it reads as
    ``key: value`` lines: a document that merely opens with a horizontal rule keeps it.
    """
    toml = _TOML.match(text)
    if toml is not None:
        body = text[toml.end() :].lstrip("\n")
        try:
            return _plain_data(tomllib.loads(toml.group(1))), body
        except tomllib.TOMLDecodeError:
            return toml.group(1), body
    split = split_frontmatter(text)
    if not split.has_frontmatter:
        return {}, text
    body = split.body.lstrip("\n")
    try:
        return _plain_data(parse_frontmatter(text)), body
    except FrontmatterError:
        first = next((line for line in split.yaml_text.splitlines() if line.strip()), "")
        raw = split.yaml_text.rstrip("\r\n")
        return (raw, body) if _KEY_LINE.match(first) else ({}, text)


def _plain_data(data: dict[str, object]) -> dict[str, object]:
    """Values YAML can write back: anything but mappings, lists, text, numbers, booleans
    and dates becomes text (TOML's times, for one)."""

    def fix(value: object) -> object:
        if isinstance(value, dict):
            return {str(k): fix(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [fix(v) for v in value]
        if value is None or isinstance(value, str | int | float | bool | dt.date):
            return value
        return str(value)

    return {str(k): fix(v) for k, v in data.items()}


def headings(text: str) -> list[tuple[int, str]]:
    """``(level, text)`` of each ATX or setext heading outside code blocks, in order."""
    out: list[tuple[int, str]] = []
    in_code = False
    previous = ""
    for line in text.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
            previous = ""
            continue
        if in_code:
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line)
        if atx is not None:
            out.append((len(atx.group(1)), atx.group(2)))
        elif setext is not None and previous.strip() and not _ATX.match(previous):
            out.append((1 if setext.group(1)[0] == "=" else 2, previous.strip()))
        previous = line
    return out


def _title(kind: str, data: bytes, text: str, file: Path, meta: Meta) -> str:
    candidates: list[str] = []
    if isinstance(meta, dict) and isinstance(meta.get("title"), str):
        candidates.append(str(meta["title"]))
    if kind == "html":
        match = _TITLE_TAG.search(data[:65536].decode("utf-8", "replace"))
        if match:
            candidates.append(re.sub(r"<[^>]+>", "", match.group(1)))
    if kind in ("markdown", "html"):
        found = headings(text)
        candidates += [h for level, h in found if level == 1]
        candidates += [h for level, h in found if level > 1]
    if kind in ("text", "pdf"):
        first = next((line for line in text.splitlines() if line.strip()), "")
        if len(first) <= 60 and first[-1:] not in ",.;:":
            candidates.append(first)
    names = [_clean_title(c) for c in candidates]
    for name in names:
        if name and not is_generic(name):
            return name
    stem = _clean_title(file.stem.replace("_", " ").replace("-", " "))
    if is_generic(stem) and file.parent.name:
        stem = _clean_title(file.parent.name.replace("_", " ").replace("-", " ")) or stem
    return stem or next((n for n in names if n), file.stem)


def _clean_title(candidate: str) -> str:
    candidate = heading_text(plain(heading_text(candidate))).strip(" -–—|")
    return candidate[:100]

"""Sentences of a source and of existing pages: splitting, key sentences, nearest ones.

The skeleton of every plan is built here, by code: the key sentences of the
source, quoted verbatim, are the claims the model routes to pages. A small
model copies badly; quoting in code keeps each claim true to its source.

Only sentences that claim something are key sentences: a lead-in ("… the following
information:"), a ``Key: value`` line, a command, code, a placeholder, markup, a link
list or a line too short to say anything is never a claim
(:func:`desktop.flows.sentences.evidence_reason`, the rule the scan's judge reads by).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from desktop.flows import sentences as prose
from desktop.vault.stopwords import STOP_WORDS, word_set

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_WIKI = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
#: Inline HTML a Markdown page uses for emphasis or definitions; its text is kept.
_INLINE_HTML = re.compile(
    r"</?(?:kbd|br|em|strong|code|span|sup|sub|b|i|a|u|s|img|small|mark|abbr|del|ins|wbr|q|"
    r"cite|var|samp|dfn|p|div)\b[^<>]*>",
    re.IGNORECASE,
)
_COMMENT = re.compile(r"<!--.*?-->")
_MARKS = re.compile(r"(\*\*|__|`|\*(?=\S)|(?<=\S)\*|(?<!\w)_(?=\S)|(?<=\S)_(?!\w))")
#: A link reference definition ("[label]: https://…"): where a shortcut link points.
_LINK_DEF = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*\S")
_SHORTCUT = re.compile(r"(?<!\])\[([^\[\]]+)\](?![(\[:])")
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_TABLE = re.compile(r"^\s*\|")
#: A citation tail: " — [[Source]]" or " — [2026-11-30#L4](…)", as ingest and memory write them.
_CITATION_TAIL = re.compile(r"\s*[—–-]\s*(?:(?:\[\[[^\]]+\]\]|\[[^\]]*\]\([^)]*\))(?:,\s*)?)+\s*$")

MIN_WORDS = 6
MAX_WORDS = 60
MAX_SENTENCE_CHARS = 400

#: Ingest compares a source's claims with pages by the words they share (key sentences,
#: overlap, support). "use" and its forms are in 11–17% of the sentences of documentation
#: (the Jekyll and FastAPI docs), so two claims sharing only "use" would look related.
STOPWORDS = STOP_WORDS | word_set("use used using")


@dataclass(frozen=True)
class Sentence:
    number: int
    text: str
    #: The heading above it in the source ("" before the first heading).
    section: str
    #: As written in the source (Markdown kept); "" when not known.
    quote: str = ""

    def not_a_claim(self) -> str | None:
        """Why this sentence claims nothing (``question``, ``lead_in``, ``key_value``, ``code``,
        …), or None."""
        quote = self.quote or self.text
        if self.text.rstrip().endswith("?"):
            return "question"
        text = prose.plain(quote)
        content = prose.content_words(text)
        return prose.evidence_reason(
            prose.Sentence(quote, text, content, prose.link_words(quote) & content)
        )


def content_words(text: str) -> list[str]:
    return [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS]


def strip_citations(text: str) -> str:
    """Each line without its citation tail (the claim alone, for comparing with others)."""
    return "\n".join(_CITATION_TAIL.sub("", line) for line in text.splitlines())


def plain(line: str) -> str:
    """Markdown inline syntax removed: links keep their text; emphasis marks, inline HTML
    tags and comments go."""
    line = _WIKI.sub(lambda m: m.group(2) or m.group(1), line)
    line = _MD_LINK.sub(r"\1", line)
    line = _REF_LINK.sub(r"\1", line)
    line = _INLINE_HTML.sub("", _COMMENT.sub("", line))
    return " ".join(_MARKS.sub("", line).split())


def split_sentences(text: str) -> list[Sentence]:
    """Prose sentences of Markdown or plain text (code blocks and tables skipped)."""
    out: list[Sentence] = []
    section = ""
    in_code = False
    paragraph: list[str] = []
    labels = {m.group(1).casefold() for m in map(_LINK_DEF.match, text.splitlines()) if m}

    def flush() -> None:
        if not paragraph:
            return
        joined = _SHORTCUT.sub(
            lambda m: m.group(1) if m.group(1).casefold() in labels else m.group(0),
            " ".join(paragraph),
        )
        paragraph.clear()
        for quote in prose.split_block(joined):
            piece = plain(quote)
            n = len(piece.split())
            if MIN_WORDS <= n <= MAX_WORDS and len(piece) <= MAX_SENTENCE_CHARS:
                out.append(Sentence(len(out) + 1, piece, section, quote.strip()))

    for line in text.splitlines():
        if _FENCE.match(line):
            flush()
            in_code = not in_code
            continue
        if in_code or _TABLE.match(line):
            continue
        if _LINK_DEF.match(line):
            flush()
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            section = plain(heading.group(1))[:80]
            continue
        stripped = line.strip()
        if not stripped or (stripped.startswith(">") and not stripped[1:].strip()):
            flush()
            continue
        if _LIST.match(line):
            flush()
            paragraph.append(_LIST.sub("", line))
            flush()
            continue
        paragraph.append(stripped.lstrip("> "))
    flush()
    return out


def key_sentences(sentences: Sequence[Sentence], k: int) -> list[Sentence]:
    """The ``k`` most central sentences that claim something, in source order.

    Centrality is the summed document frequency of a sentence's content words,
    damped by its length, with a bonus for the first sentence of a section
    (where authors put the point) and for the opening of the document.
    """
    sentences = [s for s in sentences if s.not_a_claim() is None]
    if len(sentences) <= k:
        return list(sentences)
    freq = Counter(w for s in sentences for w in set(content_words(s.text)))
    seen_sections: set[str] = set()
    scored = []
    for s in sentences:
        words = content_words(s.text)
        if not words:
            continue
        score = sum(math.log1p(freq[w]) for w in set(words)) / math.sqrt(len(words) + 4)
        if s.section not in seen_sections:
            score *= 1.3
            seen_sections.add(s.section)
        if s.number <= 3:
            score *= 1.2
        scored.append((score, s))
    best = sorted(scored, key=lambda t: (-t[0], t[1].number))[:k]
    return sorted((s for _, s in best), key=lambda s: s.number)


def lexical_overlap(a: str, b: str) -> float:
    """Share of the shorter text's content words found in the other (0…1)."""
    wa, wb = set(content_words(a)), set(content_words(b))
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / min(len(wa), len(wb))


# The subject gate of ingest's judge check is content-word overlap (the scan's is cosine):
# the existing pages' sentences are not embedded at plan time, and overlap is enough to
# pick which few sentence pairs deserve the judge's time.
def nearest_sentences(
    claim: str, candidates: Sequence[tuple[str, str]], k: int = 3, *, min_overlap: float = 0.25
) -> list[tuple[str, str, float]]:
    """The ``k`` candidates ``(page, sentence)`` sharing most content words with ``claim``."""
    scored = [(page, text, lexical_overlap(claim, text)) for page, text in candidates]
    scored = [t for t in scored if t[2] >= min_overlap and t[1].strip() != claim.strip()]
    return sorted(scored, key=lambda t: (-t[2], t[0], t[1]))[:k]

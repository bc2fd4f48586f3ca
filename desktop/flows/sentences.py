"""Notes cut into the sentences the judge compares: Markdown-aware, English, French, Italian.

What is *not* a sentence here: frontmatter (callers pass the body), fenced and
indented code, HTML comments, tables (with or without outer pipes), headings (a
heading names a subject, it asserts nothing), horizontal rules, link reference
definitions, and lines that are only a tag. Only prose is evidence
(:func:`evidence_reason`): a line of code or a command, a template placeholder,
markup, a line made mostly of identifiers or links, a ``Key: value`` line, a
lead-in that ends with a colon, or a cross-reference is a sentence the judge
never reads.
List items and block quotes are sentences of their own; wikilinks and Markdown
links are read as their visible text.

Each :class:`Sentence` keeps ``quote``, the text as it stands in the note
(so a quote shown to the user is found in the file), and ``text``, the same
with the Markdown taken out, which is what the embedder and judge read.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from desktop.vault.stopwords import STOP_WORDS

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE = re.compile(r"^\s*\|.*\|\s*$")
#: A table row without outer pipes ("a | b | c") or a delimiter row ("--- | :---:").
_TABLE_BARE = re.compile(r"^[^|`]*\S\s+\|\s+\S[^|`]*\|\s+\S|^\s*\|?\s*:?-{3,}:?\s*\|")
#: "[label]: https://…" — a link reference definition.
_LINK_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*\S")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s+")
#: A task item's box ("[ ]", "[x]", "[/]", "[-]"), kept in the quote: a task is not a claim.
_TASK = re.compile(r"^\[[ xX/\-]\]\s")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WIKILINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`|~~|==)")
#: Inline HTML tags and kramdown attribute lists ("{: .note}") read as nothing.
_INLINE_MARKUP = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|\{:[^}]*\}")
_TAG_ONLY = re.compile(r"^(#[\w/-]+\s*)+$")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?|\d+(?:[.,:h]\d+)?", re.UNICODE)
#: Abbreviations after which a full stop does not end a sentence.
_ABBREV_TEXT = """
    e.g i.e vs cf dr mr mrs ms st no nr fig approx p pp ca mme mlle m sig dott es ad
    art cap vol ed jan feb mar apr jun jul aug sep sept oct nov dec
"""
_ABBREV = frozenset(_ABBREV_TEXT.split())
#: "[...]", "(…)": a cut in a quotation, not the end of a sentence.
_ELISION = re.compile(r"[\[(](?:\.{3}|…)[\])]$")
#: Display math ("$$ … $$") belongs to the sentence around it ("… is given by $$ F_n = … $$
#: where φ is …"); a capital after its closing marks opens the next sentence.
_DISPLAY = re.compile(r"\$\$")
_CAPITAL_NEXT = re.compile(r"\s+[\"'“«(\[*_]?[A-ZÀ-ÖØ-Þ]")
#: A sentence's end: the next one opens with a capital or a digit, after a quote, a bracket
#: or Markdown emphasis ("**Snell's law** …"), or with a wikilink ("[[threads|Threads]] are
#: …", whatever the case of its target) or display math ("$$ n_1 … $$").
_END = re.compile(
    r"(?<=[.!?…])([\"'”»)\]]*)\s+"
    r"(?=(?:[\"'“«(\[]|\*{1,2}|_{1,2})?[A-ZÀ-ÖØ-Þ0-9¿¡]|\[\[|\$\$)"
)

#: How a cross-reference opens ("See also", "Voir aussi", "Vedi anche", "Cf.", "Cfr.").
SEE_WORDS = r"see|voir|vedi|cfr|cf"
_SEE = re.compile(rf"^\W*(?:{SEE_WORDS})\b", re.IGNORECASE)

#: Sentences longer than this are cut for the judge (it reads 128 tokens per pair).
MAX_WORDS = 60


@dataclass(frozen=True)
class Sentence:
    #: As written in the note (Markdown kept), so it is found in the file.
    quote: str
    #: Markdown removed: what the embedder and the judge read.
    text: str
    #: Words that are not stop words (lower case).
    content: frozenset[str]
    #: Those of ``content`` that come only from the visible text of its links.
    linked: frozenset[str] = frozenset()
    #: A task item ("- [ ] …", "- [x] …"): what to do or what was done, not what holds.
    task: bool = False

    @property
    def content_words(self) -> int:
        return len(self.content)

    @property
    def own_words(self) -> int:
        """Content words the sentence says itself, outside its links."""
        return len(self.content - self.linked)


def plain(text: str) -> str:
    """Markdown inline syntax removed: links read as their visible text."""
    text = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _INLINE_MARKUP.sub(" ", text)
    text = _EMPHASIS.sub("", text)
    return " ".join(text.split())


def link_words(quote: str) -> frozenset[str]:
    """Content words found only inside the links of ``quote`` (their visible text)."""
    shown = [m.group(2) or m.group(1) for m in _WIKILINK.finditer(quote)]
    shown += [m.group(1) for m in _MDLINK.finditer(quote)]
    if not shown:
        return frozenset()
    outside = _MDLINK.sub(" ", _WIKILINK.sub(" ", quote))
    return content_words(" ".join(shown)) - content_words(plain(outside))


def content_words(text: str) -> frozenset[str]:
    """Words of three letters or more that are not stop words, and numbers (case folded,
    elided articles cut: "l'acqua" is "acqua"); a sentence needs a few to be evidence."""
    words = (w.casefold().replace("’", "'") for w in _WORD.findall(text))
    out = set()
    for w in words:
        w = w.split("'")[-1] if "'" in w else w  # l'acqua -> acqua, j'ai -> ai
        if (len(w) >= 3 and w not in STOP_WORDS) or w.isdigit():
            out.add(w)
    return frozenset(out)


def _blocks(body: str) -> list[tuple[str, bool]]:
    """Paragraphs, list items and quotes as single-line texts; code, tables, headings out."""
    body = _COMMENT.sub(" ", body)
    blocks: list[str] = []
    tasks: set[int] = set()  # blocks that are task items
    current: list[str] = []
    in_fence = False

    def flush() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in body.splitlines():
        line = raw.rstrip()
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        if (
            not line.strip()
            or _HEADING.match(line)
            or _RULE.match(line)
            or _TABLE.match(line)
            or _TABLE_BARE.match(line)
            or _LINK_DEF.match(line)
        ):
            flush()
            continue
        if raw.startswith(("    ", "\t")) and not current and not _ITEM.match(line):
            continue  # an indented code block
        stripped = _QUOTE.sub("", line)
        if _ITEM.match(stripped):
            flush()
            stripped = _ITEM.sub("", stripped)
            box = _TASK.match(stripped)
            if box:
                tasks.add(len(blocks))
                stripped = stripped[box.end() :]
        current.append(stripped.strip())
    flush()
    return [(b, i in tasks) for i, b in enumerate(blocks)]


def split_block(block: str) -> list[str]:
    """One paragraph of prose cut into its sentences: the one sentence rule of the scan,
    ingest and memory.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (a closing quote or bracket after it
    stays in the sentence) before a capital or a digit, except after an abbreviation
    ("e.g.", "Dr.", "approx.") or an initial ("J. Smith"), an elision in brackets
    ("[...] I'm") or a question or exclamation in an aside ("most (or all?) Python types").
    Display math is part of its sentence; a capital after it opens the next one.
    """
    marks = list(_DISPLAY.finditer(block))
    cuts = [m.end() for m in marks[1::2] if _CAPITAL_NEXT.match(block, m.end())]
    if cuts:  # "… defined as $$ (Df)(x) = … $$ Higher derivatives are …": two sentences
        bounds = [0, *cuts, len(block)]
        return [s for a, b in itertools.pairwise(bounds) for s in split_block(block[a:b])]
    parts: list[str] = []
    start = 0
    for m in _END.finditer(block):
        before = block[start : m.start()]
        last = before.rsplit(None, 1)[-1] if before.split() else ""
        token = last.rstrip(".").casefold()
        if block[m.start() - 1] == "." and (
            token in _ABBREV or (len(token) == 1 and token.isalpha())
        ):
            continue
        ended = block[start : m.end(1)]  # the closing quote or bracket stays with its sentence
        if _ELISION.search(ended):
            continue
        if ")" in m.group(1) and "(" in ended and not ended.lstrip().startswith("("):
            continue  # "(or all?) Python types": an aside inside the sentence
        parts.append(ended.strip())
        start = m.end()
    parts.append(block[start:].strip())
    return [p for p in parts if p]


#: The source a remembered fact cites at its end, which is not part of what it says:
#: "… — [[Antinomy/Conversations/2026-11-30#^L12|2026-11-30#L12]]" (memory's pages),
#: "… — [2026-11-30#L12](…)" (older pages), "… — raw/2024-06-30.md L7–9" (Antinomia's).
CITATION_TAIL = re.compile(
    r"\s+[—–]\s+(?:\[\[[^\]]*#\^[^\]]*\]\]|\[[^\]]*#L\d+[^\]]*\]\([^)]*\)"
    r"|[^\s\[\]()]+\.md(?:\s+L\d+(?:[-–]\d+)?)?)\s*$"
)


def without_citation(quote: str) -> str:
    """``quote`` less the citation it ends with, if any."""
    return CITATION_TAIL.sub("", quote)


def split_sentences(body: str) -> list[Sentence]:
    """The sentences of a note body, in order, duplicates removed. What the embedder and the
    judge read (``text``) leaves out a citation at the sentence's end; the quote keeps it."""
    out: list[Sentence] = []
    seen: set[str] = set()
    for block, task in _blocks(body):
        if _TAG_ONLY.match(block):
            continue
        for quote in split_block(block):
            text = plain(without_citation(quote))
            words = text.split()
            if not any(ch.isalnum() for ch in text):
                continue  # punctuation alone ("'", "…") is not a sentence
            if len(words) > MAX_WORDS:
                text = " ".join(words[:MAX_WORDS])
            key = text.casefold()
            if key in seen:
                continue
            seen.add(key)
            content = content_words(text)
            out.append(Sentence(quote, text, content, link_words(quote) & content, task))
    return out


#: Markup and templates: a line that opens with an HTML tag, Jinja / Liquid / Handlebars
#: ("{{ … }}", "{% … %}"), an admonition ("!!! note", "??? example", a callout's
#: "> [!bug] Title"), a property ("key:: v").
_MARKUP_LINE = re.compile(
    r"^\s*(?:</?[A-Za-z][\w-]*[\s>/]|<!|!!!|\?\?\?|===|\w[\w-]*::\s|!\[|\[![\w-]+\])"
)
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{\*.*?\*\}|<%.*?%>|\$\{[^}]*\}")
#: A placeholder a reader replaces: "<package>", "<file-name>", "{name}", "[options]" in a
#: command, "YOUR_TOKEN".
_PLACEHOLDER = re.compile(
    r"<(?!(?:kbd|br|em|strong|code|span|sup|sub|b|i|a|u|s|img|small|mark|abbr|del|ins|wbr|"
    r"q|cite|var|samp|details|summary|p|div)\b)[a-z][\w.-]*(?:[ _-][\w.-]+)*>"
    r"|\{[a-z_][\w-]*\}|\b(?:YOUR|MY)_[A-Z_]+\b"
)
_CODE_SPAN = re.compile(r"`+([^`]+)`+")
_URL = re.compile(r"\b(?:https?|ftp|file)://\S+|\bwww\.\S+")
#: Words that read as code: snake_case, camelCase, dotted.names, paths, flags, calls().
_IDENTIFIER = re.compile(
    r"^(?:-{1,2}[A-Za-z][\w-]*|\$\w+|[\w-]*[_/\\][\w./\\-]*|\w+\.\w[\w.]*|"
    r"[a-z]+[A-Z]\w*|\w+\(\S*\)?|[A-Z][A-Z0-9]*_[A-Z0-9_]+)[.,;:!?)]*$"
)
#: A command line: a lower-case program name then arguments, at least one a flag, a
#: placeholder or a path, and no full stop of a sentence.
_COMMAND = re.compile(
    r"^\s*(?:[$%#>]\s+)?[a-z][\w.+-]*(?:\s+\S+)*?\s+(?:-{1,2}[A-Za-z][\w-]*|<[^>]+>|\S*/\S*)"
    r"(?:\s+\S+)*\s*$"
)


def is_command_line(text: str) -> bool:
    """A shell command ("git rebase -i HEAD~3", "$ uv add --dev ruff"), not a sentence."""
    return bool(_COMMAND.match(text)) and not text.rstrip().endswith(".")


#: "Key: value" — a label and a short value (or a list of quoted / code values).
_KEY_VALUE = re.compile(r"^\s*([^:.!?]{1,40}?)\s*:\s+(.+)$")


def _identifier_share(quote: str) -> float:
    """Share of a line's words that are code: inside backticks, URLs, or shaped like
    identifiers (snake_case, camelCase, dotted.names, paths, --flags, calls())."""
    code_words = sum(len(m.group(1).split()) for m in _CODE_SPAN.finditer(quote))
    rest = _URL.sub(lambda m: " \x00 ", _CODE_SPAN.sub(" ", quote))
    rest = _MDLINK.sub(lambda m: m.group(1), _WIKILINK.sub(lambda m: m.group(1), rest))
    words = rest.split()
    code_words += sum(1 for w in words if w == "\x00" or _IDENTIFIER.match(w))
    total = code_words + sum(1 for w in words if w != "\x00" and not _IDENTIFIER.match(w))
    return code_words / total if total else 0.0


def evidence_reason(sentence: Sentence, *, min_content_words: int = 3) -> str | None:
    """Why ``sentence`` is not evidence of a claim, or None when it is prose that claims.

    Only prose is evidence. Not evidence:

    * ``code``: a line that is all code (one inline-code span), a command line
      ("cargo build --release", "$ make install"), or a line whose words are mostly
      identifiers, paths, flags or URLs;
    * ``placeholder``: a template ("{{ page.title }}", "{% if %}") or a placeholder a
      reader fills in ("<package>", "{name}");
    * ``markup``: a line that opens with an HTML tag, an admonition or a ``key:: value``
      property;
    * ``key_value``: "Status: accepted", "Type: `dev`, `optional`" — a label and a short
      value, not a sentence;
    * ``lead_in``: a line that ends with a colon introduces what follows;
    * ``task``: a task item ("- [ ] Renew the passport", "- [x] …") says what to do or
      what was done, not what holds;
    * ``links``: a line made mostly of links, or a cross-reference ("See [[X]]…");
    * ``too_short``: fewer than ``min_content_words`` content words of its own
      ("The point is contact.");
    * ``math``: a line that is mostly LaTeX ("$\\sum_{n=m}^\\infty a_n$ is absolute
      convergent iff …"): formulas are not read as sentences;
    * ``question``: a question asks, it does not claim ("Why does the brain not do this
      when we are awake?").
    """
    quote = sentence.quote.strip()
    if sentence.task:
        return "task"
    if _math_share(quote) >= MATH_SHARE:
        return "math"
    if _MARKUP_LINE.match(quote):
        return "markup"
    if _TEMPLATE.search(quote) or _PLACEHOLDER.search(quote):
        return "placeholder"
    bare = quote.rstrip(" .;")
    if _CODE_SPAN.fullmatch(bare) or (
        not bare.endswith((".", "!", "?", "…")) and _COMMAND.match(plain(bare))
    ):
        return "code"
    if _identifier_share(quote) >= 0.5:
        return "code"
    if quote.endswith(":"):
        return "lead_in"
    kv = _KEY_VALUE.match(plain(quote))
    if kv is not None:
        key, value = kv.group(1), kv.group(2)
        values = [
            v.strip(" \"'.") for v in re.split(r",|\bor\b|\band\b|\bou\b|\bet\b|\bo\b|\be\b", value)
        ]
        listed = len(values) > 1 and all(len(v.split()) <= 2 for v in values)
        if len(key.split()) <= 4 and (len(value.split()) <= 3 or listed):
            return "key_value"
    has_link = _WIKILINK.search(sentence.quote) or _MDLINK.search(sentence.quote)
    if has_link and _SEE.match(sentence.text):
        return "links"
    own = sentence.own_words
    if own <= len(sentence.linked) or (own < min_content_words and sentence.linked):
        return "links"
    if own < min_content_words:
        return "too_short"
    if sentence.text.rstrip(" \"'”»)*_").endswith("?"):
        return "question"
    return None


#: LaTeX math: "$$…$$", "$…$" as Pandoc reads it (no space inside the dollars, no digit
#: after the closing one, so "$5 and $10" is money), "\\(…\\)", "\\[…\\]".
_MATH = re.compile(
    r"\$\$.+?\$\$|\$(?=\S)[^$\n]*?[^\s$]\$(?!\d)|\$[^\s$]\$(?!\d)|\\\(.+?\\\)|\\\[.+?\\\]",
    re.DOTALL,
)
#: A line whose characters are this much math or more is a formula, not a sentence.
MATH_SHARE = 0.3


def _math_share(quote: str) -> float:
    if "$" not in quote and "\\" not in quote:
        return 0.0
    return sum(len(m.group(0)) for m in _MATH.finditer(quote)) / max(1, len(quote))


def is_evidence(sentence: Sentence, *, min_content_words: int = 3) -> bool:
    """Short, generic lines ("The point is contact.") are not evidence of anything, and
    neither is a line that points to other notes:

    * mostly links: "[[Il pane di casa]], [[Lievito madre]]." or "Method questions live
      in [[Write daily]] and [[On revision]]." assert nothing of their own. A line counts
      when the words it says outside its links reach ``min_content_words`` and outnumber
      the words of its links ("[[Staging]] keeps deploying on every merge." does);
    * a cross-reference: a line with a link that opens with "See", "Voir", "Vedi" or "Cf."
      ("Voir aussi [[Nourrir le sol]] pour la préparation des planches.").
    """
    return evidence_reason(sentence, min_content_words=min_content_words) is None

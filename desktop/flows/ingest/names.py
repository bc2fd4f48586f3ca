"""Names in an ingest: which headings may title a source, and which page names are names.

**Generic words** (:data:`GENERIC`): a heading such as "Description", "Overview" or
"Introduction" says where in a document a passage sits, not what the document is
about; it never titles a source note or a page.

**The names offered** (:func:`offered_names`): the source's title and its own
headings that pass the rules below. A title that is not a name because a date, year or
edition qualifies it ("Winter bird count, 2026", "Minutes of the board, 18 October",
"Field guide (2nd edition)") is offered without that qualifier; with no name at all, the
file's own name is offered when it is one ("bird-count-notes.md" → "bird count notes").
When there are any, the model's grammar only lets it pick among them (and the existing
pages shown): a 135M model asked for a name writes "When the environment is synced it
doesn t", "the title and new pages take" or copies its instructions.

**Page names** the model proposes are checked in code all the same, and each problem
is a repair error sent back to the model (:func:`page_name_problem`). A page name is
refused when:

- it is longer than :data:`MAX_NAME_CHARS` characters, or has more than
  :data:`MAX_NAME_WORDS` words;
- it holds a quote (other than a quoted term: a pair of double quotes), a comma or a
  semicolon (a phrase cut out of a sentence);
- it holds a run of 6 or more digits (an id, not a name);
- it starts with punctuation, or ends with punctuation other than "?" or "!", or ends
  with a function word ("… which includes a");
- it is a clause: it holds an auxiliary or modal verb ("is", "needs", "can") or opens
  with a word that starts a clause ("when", "this", "if");
- it holds a broken word: a lower-case single letter other than "a" ("doesn t");
- it is a generic word;
- a word of it is token-like — key material, long hex, a masked secret (memory's rule,
  :func:`desktop.flows.memory.secret_rules.token_like`) — or it is a slug: words joined
  by two or more hyphens or underscores with no space ("lock-and-sync",
  "scope-section-2345…");
- given the source's words, a word of it is in none of them (by its first 5 letters)
  nor a common title word (:data:`TITLE_WORDS`): a glued or invented word
  ("whensyncing").

Existing pages are not renamed: a name that is an existing page's is never refused.
"""

from __future__ import annotations

import re

from desktop.flows.ingest.sentences import content_words
from desktop.flows.memory.secret_rules import token_like


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


MAX_NAME_CHARS = 80
MAX_NAME_WORDS = 6
#: Names offered to the model at most (the title first, then headings in order).
MAX_OFFERED = 16

#: Headings and names that place a passage in a document, not a subject.
GENERIC = _words(
    """
    about abstract appendix background contents description details example examples faq
    general home index intro introduction misc miscellaneous notes overview preface
    readme summary synopsis toc untitled usage welcome document page source title
    subject claims sentences
    """
) | frozenset(
    [
        "table of contents",
        "key points",
        "new page",
        "read me",
        "getting help",
        "see also",
        "further reading",
        "untitled document",
    ]
)

#: Words a title may add to the source's own ("Rust installation guide").
TITLE_WORDS = _words(
    """
    guide basics overview introduction notes tips reference setup usage tutorial concepts
    features options faq summary explained howto policy
    """
)
#: A name holding one of these is a clause ("the lockfile needs to match …").
_AUXILIARIES = _words(
    """
    is are was were be been being am do does did doesn don didn has have had will would
    shall should can could may might must need needs isn aren wasn won wouldn
    """
)
#: A name opening with one of these is a clause ("When the environment is synced").
_CLAUSE_OPENERS = _words(
    """
    when while if because although though since unless whether this that these those it
    there here we you they he she i what which who how why where
    """
)
_QUOTES = "'\"‘’“”`´"
_EDGE_PUNCT = ".,;:!?-–—_/\\()[]{}*&+=|<>~^%$#@" + _QUOTES
_DIGIT_RUN = re.compile(r"\d{6,}")
_SLUG = re.compile(r"^[\w.]+(?:[-_][\w.]+){2,}$")
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[IVXLC]+\.|[A-Za-z]\))\s+")
_ATTR_LIST = re.compile(r"\s*\{[^{}]*\}\s*$")
_CLOSING_HASHES = re.compile(r"(?:^|\s)#+\s*$")
_LOOSE_HASH = re.compile(r"(?<!\w)#+")
#: A quoted term in a heading ('The "stable" compiler') is not a phrase cut out of a sentence.
_QUOTED_TERM = re.compile(r'"[^"\s][^"]*"|“[^”\s][^”]*”')
#: A title may end as a question or an exclamation ("Rust or Go?").
_FINAL_MARKS = "?!"
#: What qualifies a title with a number — a date, a year, an edition — after a comma, a
#: semicolon or a spaced dash, or in brackets: "…, 18 October", "… – 2026", "… (2nd ed.)".
_NUMBERED_QUALIFIER = re.compile(
    r"(?:\s*[,;]\s+|\s+[-–—]\s+|\s*\()[^,;()\[\]–—]*\d[^,;()\[\]–—]*\)?\s*$"
)
#: A name does not end on these: it was cut out of a phrase.
_TRAILING_FUNCTION = _words(
    "a an the of to in on at by for with from and or but as into than that which who is are"
)


def heading_text(heading: str) -> str:
    """A heading as a name: an attribute list (``{ #id }``), closing hashes and a hash that
    opens a word (``#tag``) removed; a hash that ends a word stays ("C# basics")."""
    text = _CLOSING_HASHES.sub("", _ATTR_LIST.sub("", heading.strip()))
    return " ".join(_LOOSE_HASH.sub(" ", text).split())


def is_generic(name: str) -> bool:
    """Whether ``name`` (numbering such as "1." or "II." ignored) is a generic word."""
    key = _NUMBERING.sub("", " ".join(name.split())).strip(_EDGE_PUNCT + " ").casefold()
    return not key or key in GENERIC


def page_name_problem(name: str, *, source_words: frozenset[str] | None = None) -> str | None:
    """Why ``name`` is not a page name (a phrase for a repair error), or None.

    ``source_words``: the source's content words (:func:`word_keys`); when given, every
    word of the name must be one of them or a title word.
    """
    cleaned = " ".join(name.split())
    if not cleaned:
        return "is empty"
    if len(cleaned) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if any(q in _QUOTED_TERM.sub("", cleaned) for q in _QUOTES):
        return "holds a quote mark"
    if "," in cleaned or ";" in cleaned:
        return "holds a comma or a semicolon"
    if _DIGIT_RUN.search(cleaned):
        return "holds a run of 6 or more digits (an id, not a name)"
    bare = cleaned.rstrip(_FINAL_MARKS)
    if not bare or bare[0] in _EDGE_PUNCT or bare[-1] in _EDGE_PUNCT + " ":
        return "starts or ends with punctuation"
    words = bare.split()
    if len(words) > MAX_NAME_WORDS:
        return f"has more than {MAX_NAME_WORDS} words (a sentence, not a name)"
    folded = [w.casefold() for w in words]
    if len(words) > 1 and folded[-1] in _TRAILING_FUNCTION:
        return f"ends with {words[-1]!r} (cut out of a phrase)"
    clause = [w for w in folded if w in _AUXILIARIES]
    if clause or (len(words) > 1 and folded[0] in _CLAUSE_OPENERS):
        return f"is a clause, not a name (it holds {(clause or folded)[0]!r})"
    broken = [w for w in words if len(w) == 1 and w.islower() and w != "a"]
    if broken:
        return f"holds a broken word ({broken[0]!r})"
    if is_generic(cleaned):
        return "is a generic word, not a subject"
    if any(token_like(w) for w in words) or (len(words) == 1 and _SLUG.match(cleaned)):
        return "looks like a token or a slug: write words separated by spaces"
    named = content_words(cleaned)
    if not named:
        return "names nothing (only small words or numbers)"
    if source_words is not None:
        foreign = [w for w in named if w not in TITLE_WORDS and w[:5] not in source_words]
        if foreign:
            return f"holds a word the source does not use ({foreign[0]!r})"
    return None


def word_keys(*texts: str) -> frozenset[str]:
    """The words of ``texts`` as :func:`page_name_problem` compares them: each word's
    first 3, 4 and 5 letters (a name's "sync" is the source's "syncing")."""
    keys = set()
    for text in texts:
        for word in content_words(text):
            keys.add(word[:5])
            keys.update(word[:n] for n in (3, 4) if len(word) > n)
    return frozenset(keys)


def tidy_name(name: str) -> str:
    """A title or heading as a page name: its attribute list and edge punctuation go, and
    a slug's hyphens and underscores become spaces ("npm-package-registry" →
    "npm package registry")."""
    cleaned = heading_text(name)
    if _SLUG.match(cleaned):
        cleaned = " ".join(re.split(r"[-_]+", cleaned))
    name = cleaned.strip(_EDGE_PUNCT + " ")[:MAX_NAME_CHARS]
    if name and cleaned[-1] in _FINAL_MARKS and len(name) < MAX_NAME_CHARS:
        name += cleaned[-1]
    return name


def offered_names(
    title: str,
    headings: list[str],
    *,
    source_words: frozenset[str] | None = None,
    limit: int = MAX_OFFERED,
    file_name: str = "",
) -> list[str]:
    """The source's title and headings that are page names (tidied), each once, in order.

    A title that is not a name is offered without its numbered qualifier
    (:func:`title_head`); ``file_name`` (a file's name without its suffix) is offered
    when nothing else is a name."""

    def name_of(raw: str) -> str:
        name = tidy_name(raw)
        return name if name and page_name_problem(name, source_words=source_words) is None else ""

    out: dict[str, str] = {}
    for name in [name_of(title) or name_of(title_head(title)), *map(name_of, headings)]:
        if name:
            out.setdefault(name.casefold(), name)
    if not out and name_of(file_name):
        out[file_name.casefold()] = name_of(file_name)
    return list(out.values())[:limit]


def title_head(title: str) -> str:
    """``title`` without a trailing qualifier that holds a number (a date, a year, an
    edition): "Winter bird count, 2026" → "Winter bird count"; otherwise ``title``."""
    head = _NUMBERED_QUALIFIER.sub("", title.strip())
    return head if head.strip() else title

"""What a pending change says: the statements of its new text that the judge reads.

The hook client's summary of a file change opens with a header it writes
itself — ``Write <path>`` or ``Edit <path>`` (Edit and MultiEdit) on the first
line; for Codex's ``apply_patch``, ``Add|Update|Delete <path>`` before each
file's added lines. The path helps cosine find the decisions near the change
(the whole summary is embedded for that), but it is not something the change
says: judged with its path line, an edit that rewrites ADR-0011's release
window scored 0.66 against it; its new sentence alone, 1.00. So for those tools
the judge reads only the new text, cut into statements:

* prose (Markdown, plain text: by the file's suffix) into sentences, as notes are
  (:func:`desktop.flows.sentences.split_sentences`);
* anything else line by line, where a line is judged only when it carries words:
  a comment, a setting whose key and value say something (``runs-on:
  [self-hosted, office]``, ``LEDGER_URL = "postgresql://…"``), or a line of prose.
  Code is not: on the sample vault the judge read ``export function
  formatDate(d: Date)`` as against the release window (0.89) and ``branches:
  [main]`` as against the feature-flag rule (0.92).

Any other tool (Bash: the agent's description and the command) is judged as its
summary, whole. The header's form is pinned by tests over the recorded payloads
(tests/data/hooks/), as the hook client's copies of the limits are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from desktop.flows.sentences import MAX_WORDS, content_words, split_sentences

#: Tools whose summary is a file change with a header line (the hook's ``summarize``).
FILE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "apply_patch"})
#: Files read as prose (cut into sentences); anything else is read line by line.
PROSE_SUFFIXES = frozenset(
    {".md", ".markdown", ".mdx", ".txt", ".text", ".rst", ".adoc", ".asciidoc", ".org"}
)
#: Words (three letters or more, not stop words, not numbers) a statement needs: a
#: sentence or a comment two ("hosted runners only"); any other line of a code file three,
#: a setting's key and value together ("weekends: none", "name: deploy" say too little).
MIN_WORDS = 2
MIN_LINE_WORDS = 3

_PATCH_HEADER = re.compile(r"^(?:Add|Update|Delete) (\S+)$")
_FRONTMATTER = re.compile(r"\A---\s*\n.*?\n---\s*(?:\n|\Z)", re.S)
#: A comment: ``#``, ``//`` or ``--`` at the start of a line or after a space (so not
#: ``postgresql://`` nor ``color: '#fff'``), a block comment's ``/*``, `` * `` lines, ``<!--``.
_COMMENT = re.compile(r"(?:^|\s)(?:#(?![!{])|//|--\s|/\*+|<!--)\s*(.*)$|^\*+\s+(.*)$")
_COMMENT_END = re.compile(r"\s*(?:\*+/|-->)\s*$")
#: ``key: value`` or ``key = value`` (YAML, TOML, INI, .env, JSON, a constant).
_SETTING = re.compile(
    r"""^(?:-\s+)?["']?(?P<key>[A-Za-z_][\w.\-]*)["']?\s*(?P<sep>[:=])\s*(?P<value>.+?)\s*[,;]?$"""
)
_QUOTED = re.compile(r"""^(["'`]).*\1$""")
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$")
_CODE_CHARS = re.compile(r"[(){};]|=>|==|&&|\|\||::")
#: How a line of code opens (case matters: "If the…" is prose, "if x" is not).
_CODE_START = re.compile(
    r"^(?:import|from|def|class|return|if|elif|else|for|while|try|except|with|const|let|var|"
    r"export|function|async|await|public|private|protected|static|package|use|fn|func|impl|"
    r"struct|enum|interface|type|raise|throw|assert|print|echo|sudo|cd|"
    r"SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|GRANT)\b"
)
_DECORATION = re.compile(r"""^(?:[-*+>]\s+|\d{1,3}[.)]\s+|"{3}|'{3}|["'`])|(?:"{3}|'{3}|["'`])$""")


def statements_of(tool_name: str, summary: str) -> tuple[str, ...]:
    """What the judge reads of a change whose hook summary is ``summary``.

    A file change (:data:`FILE_TOOLS`): its statements, without the header — none
    when the new text carries no words (code only), and then nothing is judged.
    Any other tool: the summary itself.
    """
    if tool_name not in FILE_TOOLS:
        return (summary,) if summary.strip() else ()
    out: list[str] = []
    seen: set[str] = set()
    for path, text in file_texts(tool_name, summary):
        for statement in _statements(path, text):
            key = statement.casefold()
            if key not in seen:
                seen.add(key)
                out.append(statement)
    return tuple(out)


def file_texts(tool_name: str, summary: str) -> list[tuple[str, str]]:
    """``(path, new text)`` for each file of a file change's summary (path ``""`` when
    the summary has no header line the hook would write)."""
    lines = summary.splitlines()
    if tool_name == "apply_patch":
        files: list[tuple[str, list[str]]] = [("", [])]
        for line in lines:
            header = _PATCH_HEADER.match(line)
            if header:
                files.append((header.group(1), []))
            else:
                files[-1][1].append(line)
        return [(path, "\n".join(body)) for path, body in files if body]
    verb = "Write " if tool_name == "Write" else "Edit "
    if lines and lines[0].startswith(verb):
        return [(lines[0][len(verb) :].strip(), "\n".join(lines[1:]))]
    return [("", summary)]


def _statements(path: str, text: str) -> Iterator[str]:
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    if suffix in PROSE_SUFFIXES:
        body = _FRONTMATTER.sub("", text.lstrip())
        for sentence in split_sentences(body):
            if _words(sentence.text) >= MIN_WORDS:
                yield sentence.text
        return
    for raw in text.splitlines():
        code, comment = _split_comment(raw.strip())
        if comment and _words(comment) >= MIN_WORDS:
            yield _bounded(comment)
        if code and _is_setting(code):
            yield _bounded(code)
        elif code and (prose := _prose(code)):
            yield _bounded(prose)


def _split_comment(line: str) -> tuple[str, str]:
    m = _COMMENT.search(line)
    if not m:
        return line, ""
    comment = _COMMENT_END.sub("", m.group(1) if m.group(1) is not None else m.group(2))
    return line[: m.start()].strip(), comment.strip()


def _is_setting(code: str) -> bool:
    """A setting whose key and value say something: not code, not a bare reference."""
    m = _SETTING.match(code)
    if not m:
        return False
    value = m.group("value")
    if _CODE_CHARS.search(value) or value[0] in "{|>&*" or "=" in value:
        return False
    if m.group("sep") == "=" and not (_QUOTED.match(value) or m.group("key").isupper()):
        return False  # `x = y` in code is an assignment, not a setting
    if _DOTTED.match(value) or not _words(value):
        return False
    return _words(code) >= MIN_LINE_WORDS


def _prose(code: str) -> str:
    """The line's prose, if it is prose in a code file (a docstring's line, a YAML string,
    a list item), without its quotes or list marker; else ``""``."""
    text = _DECORATION.sub("", code).strip()
    if len(text.split()) < MIN_LINE_WORDS or text.endswith(":"):
        return ""  # an identifier, a label ("required_pull_request_reviews:") asserts nothing
    if _CODE_START.match(text) or _CODE_CHARS.search(text) or "=" in text:
        return ""
    return text if _words(text) >= MIN_LINE_WORDS else ""


def _words(text: str) -> int:
    return sum(1 for w in content_words(text) if w.isalpha())


def _bounded(text: str) -> str:
    words = text.split()
    return " ".join(words[:MAX_WORDS]) if len(words) > MAX_WORDS else text

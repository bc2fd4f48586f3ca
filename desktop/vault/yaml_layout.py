"""Where things are in a YAML text, and YAML text for new values.

Helpers of :mod:`desktop.vault.frontmatter`, which edits frontmatter by
splicing new text into the user's text instead of re-dumping it: re-dumping
(even with ruamel.yaml's round-trip mode) re-indents, re-wraps and re-quotes
keys nobody asked to change. Here we only *read* positions from ruamel.yaml's
parser events and *write* small, verified snippets.

Safe to call from any thread: each thread has its own parsers.
"""

from __future__ import annotations

import datetime
import functools
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from ruamel.yaml import YAML
from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

#: A value Antinomy writes as one YAML scalar.
Scalar = str | bool | int | datetime.date | None


_loaders = threading.local()


def loader(*, version: tuple[int, int] | None = None) -> YAML:
    """This thread's safe, pure-Python loader (YAML 1.2 unless ``version`` says).

    A YAML instance keeps parser state, so each thread gets its own; reusing
    it within the thread saves much of the cost of a parse.
    """
    cache: dict[tuple[int, int] | None, YAML] | None = getattr(_loaders, "cache", None)
    if cache is None:
        cache = _loaders.cache = {}
    if version not in cache:
        yaml = YAML(typ="safe", pure=True)
        if version is not None:
            yaml.version = version
        cache[version] = yaml
    return cache[version]


# --- positions ---------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One YAML node as written: where its text starts and ends.

    ``end`` is exclusive. For a block collection it is the end of its last
    content (the parser's own end mark runs on over trailing comments). An
    ``empty`` scalar (``key:`` with nothing after it) has no text: its
    ``start``/``end`` are meaningless.
    """

    kind: Literal["scalar", "alias", "sequence", "mapping"]
    start: int
    end: int
    flow: bool = False
    block_scalar: bool = False
    empty: bool = False
    value: str | None = None
    children: tuple[Node, ...] = ()


def layout(yaml_text: str) -> Node | None:
    """The root node of ``yaml_text`` with positions, or None when it has none.

    Raises what ruamel.yaml raises for text it cannot parse.
    """
    # Materialized, so that the parser is done (and reusable) before we walk.
    events: Iterator[Any] = iter(list(loader().parse(yaml_text)))
    for event in events:
        if isinstance(event, ScalarEvent | AliasEvent | SequenceStartEvent | MappingStartEvent):
            return _node(yaml_text, event, events)
    return None


def _node(text: str, event: Any, events: Iterator[Any]) -> Node:
    start: int = event.start_mark.index
    end: int = event.end_mark.index
    if isinstance(event, AliasEvent):
        return Node("alias", start, end)
    if isinstance(event, ScalarEvent):
        value = str(event.value)
        block = event.style in ("|", ">")
        header = text[start : after_line(text, start + 1)] if block else ""
        if block and "+" not in header.split("#", 1)[0]:
            # Trailing blank lines are not part of a clipped or stripped block
            # scalar; leave them to the neighbours.
            end = start + len(text[start:end].rstrip(" \t\r\n"))
        return Node(
            "scalar",
            start,
            end,
            block_scalar=block,
            empty=value == "" and event.style is None and start == end,
            value=value,
        )
    children: list[Node] = []
    for child in events:
        if isinstance(child, SequenceEndEvent | MappingEndEvent):
            end = child.end_mark.index
            break
        children.append(_node(text, child, events))
    kind: Literal["sequence", "mapping"] = (
        "sequence" if isinstance(event, SequenceStartEvent) else "mapping"
    )
    flow = bool(event.flow_style)
    if not flow:
        content_end = max([start + 1, *(c.end for c in children if not c.empty)])
        if kind == "sequence":
            content_end = _last_dash_end(text, content_end, end)
        end = content_end
    return Node(kind, start, end, flow=flow, children=tuple(children))


def _last_dash_end(text: str, content_end: int, sequence_end: int) -> int:
    """Extend a block sequence over trailing empty items (``-`` lines).

    An empty item has no text of its own; between the last real content and
    the sequence's end event only comments, blank lines and such ``-`` lines
    can occur.
    """
    offset = after_line(text, content_end)
    for line in text[offset:sequence_end].split("\n"):
        indent = len(line) - len(line.lstrip(" \t"))
        if line[indent : indent + 1] == "-":
            content_end = offset + indent + 1
        offset += len(line) + 1
    return content_end


def line_start(text: str, pos: int) -> int:
    """Offset of the start of the line holding ``pos``."""
    return text.rfind("\n", 0, pos) + 1


def after_line(text: str, end: int) -> int:
    """Offset just after the line break that ends the line where ``end`` falls.

    ``end`` is an exclusive end; when it already sits at a line start, it is
    returned as is.
    """
    if end == 0 or text[end - 1] == "\n":
        return end
    newline = text.find("\n", end)
    return len(text) if newline < 0 else newline + 1


def dash_before(text: str, pos: int) -> int | None:
    """Offset of the ``-`` that introduces the block sequence item at ``pos``."""
    i = pos - 1
    while i >= 0 and text[i] in " \t\r\n":
        i -= 1
    return i if i >= 0 and text[i] == "-" else None


def colon_after(text: str, pos: int) -> int | None:
    """Offset of the ``:`` following a mapping key that ends at ``pos``."""
    i = pos
    while i < len(text) and text[i] in " \t":
        i += 1
    return i if i < len(text) and text[i] == ":" else None


def is_blank(text: str) -> bool:
    """Only spaces and tabs (indentation)."""
    return text.strip(" \t") == ""


def flow_separator(text: str, node: Node) -> str:
    """The separator the flow list already uses between its items, else ``", "``."""
    if len(node.children) >= 2:
        between = text[node.children[0].end : node.children[1].start]
        if re.fullmatch(r"[ \t]*,[ \t]*", between):
            return between
    return ", "


def block_item_prefix(text: str, node: Node) -> str:
    """The indentation and dash of the block list's last simple item, e.g. ``"  - "``."""
    for child in reversed(node.children):
        dash = None if child.empty else dash_before(text, child.start)
        if dash is None:
            continue
        start, gap = line_start(text, dash), text[dash + 1 : child.start]
        if gap and is_blank(gap) and is_blank(text[start:dash]):
            return text[start : child.start]
    return " " * (node.start - line_start(text, node.start)) + "- "


def item_span(text: str, node: Node, position: int) -> tuple[int, int] | None:
    """The text to cut to remove item ``position`` from a list, or None if unsure."""
    items = node.children
    item = items[position]
    if item.empty:
        return None
    if node.flow:
        if position == len(items) - 1 and position > 0:
            return items[position - 1].end, item.end
        if position + 1 < len(items):
            return item.start, items[position + 1].start
        return None
    dash = dash_before(text, item.start)
    if dash is None:
        return None
    start = line_start(text, dash)
    if not is_blank(text[start:dash]):
        return None
    return start, after_line(text, item.end)


# --- new text ------------------------------------------------------------------

_ESCAPES = {
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    '"': '\\"',
    "\\": "\\\\",
}

# Printable for YAML, minus characters some parsers read as line breaks or
# strip as a byte-order mark: those are always escaped.
_UNSAFE = frozenset("\x85\u2028\u2029\ufeff")


def _printable(ch: str) -> bool:
    code = ord(ch)
    return ch not in _UNSAFE and (
        0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or 0xE000 <= code <= 0xFFFD
        or 0x10000 <= code <= 0x10FFFF
    )


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar on one line."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _printable(ch):
            out.append(ch)
        elif ord(ch) <= 0xFF:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    out.append('"')
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def is_plain(text: str, context: Literal["value", "flow", "key"]) -> bool:
    """Whether ``text`` may be written unquoted and still read back as this string.

    Checked by parsing, under YAML 1.2 *and* 1.1, so that `yes`, `on` or
    `0755` get quoted for older readers too.
    """
    if not text or text != text.strip(" ") or not all(_printable(ch) for ch in text):
        return False
    expected: dict[str, object]
    if context == "flow":
        # Also with a line break after it: in a multi-line flow list "0:" followed by a
        # newline reads as a mapping, though "[0:]" reads as the string.
        probes, expected = [f"k: [{text}]\n", f"k: [\n  {text}\n]\n"], {"k": [text]}
    elif context == "key":
        probes, expected = [f"{text}: v\n"], {text: "v"}
    else:
        probes, expected = [f"k: {text}\n"], {"k": text}
    for version in (None, (1, 1)):
        for probe in probes:
            try:
                if loader(version=version).load(probe) != expected:
                    return False
            except Exception:
                return False
    return True


def scalar_text(value: Scalar, *, flow: bool = False) -> str:
    """One scalar as YAML text, quoted only when YAML requires it.

    ``flow`` is for an item inside ``[...]``, where commas and brackets count.
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    return value if is_plain(value, "flow" if flow else "value") else double_quoted(value)


def key_text(key: str) -> str:
    """A mapping key as YAML text."""
    return key if is_plain(key, "key") else double_quoted(key)


def flow_list_text(items: list[Scalar], *, separator: str = ", ") -> str:
    """``[a, b]``."""
    return "[" + separator.join(scalar_text(item, flow=True) for item in items) + "]"

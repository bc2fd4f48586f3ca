"""Reading and faithfully editing a note's YAML frontmatter.

Editing one key changes only the bytes of that key. Every edit is a
splice: the touched key's text is located with the parser's positions and
replaced by a freshly written snippet; every other byte (key order, comments,
quoting, flow or block list style, the body, the final newline, CRLF, a BOM)
is copied as it was. The result is parsed again and must hold exactly the
expected data, else :class:`FrontmatterError` is raised: broken text is never
returned. These functions produce text only; writing it to disk is the
transaction engine's job.

Scope and documented choices:

* Only top-level keys are edited, matched by their string value (a quoted key
  matches too). Frontmatter written as one flow mapping (``{a: 1}``) can be
  read but not edited.
* A new key is appended after the last line of the frontmatter; a new list is
  written in block style (``key:`` then ``  - item``), as Obsidian does.
* ``remove_key`` deletes the key's own lines (from the key to the last line
  of its value, inline comment included); comment and blank lines around it
  stay. When nothing at all is left between the fences, the fences go too, so
  that a key added to a note without frontmatter and removed again gives the
  original bytes back. (The one asymmetry: an originally *empty* ``---``
  block loses its fences the same way.)
* A note whose first line opens a frontmatter that is never closed reads as
  having no frontmatter (as in Obsidian), but cannot be edited. Fences are
  recognised on ``\n`` and ``\r\n`` lines (not lone ``\r``).
* Whatever cannot be done byte-faithfully (a value referenced by an alias,
  merge keys, ``? complex`` keys, a flow-mapping frontmatter) raises
  :class:`FrontmatterError` naming the key; nothing is ever "fixed" silently.

Safe to call from any thread.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from desktop.vault.errors import VaultError
from desktop.vault.yaml_layout import (
    Node,
    Scalar,
    after_line,
    block_item_prefix,
    colon_after,
    flow_list_text,
    flow_separator,
    is_blank,
    item_span,
    key_text,
    layout,
    line_start,
    loader,
    scalar_text,
)

#: Frontmatter starts on line 1 with ``---``; its YAML starts on line 2.
_FIRST_YAML_LINE = 2
_CLOSING = re.compile(r"^(?:---|\.\.\.)\r?$", re.MULTILINE)
_OPENING = re.compile(r"---\r?\n")
_BLANK_LINES = re.compile(r"(?:[ \t]*\r?\n)*")


class FrontmatterError(VaultError):
    """The frontmatter cannot be read, or cannot be edited without damage.

    ``line`` is the 1-based line of the note the problem is on, when known.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


@dataclass(frozen=True)
class Split:
    """A note cut into ``bom + opening + yaml_text + closing + body``.

    ``opening`` and ``closing`` are the fence lines with their line breaks
    (the closing fence may lack one at the end of the file); both are empty
    when there is no frontmatter. ``newline`` is the note's line break, used
    for every line Antinomy inserts. ``unclosed`` means the first line is
    ``---`` but no closing fence follows.
    """

    has_frontmatter: bool
    bom: str
    newline: str
    opening: str
    yaml_text: str
    closing: str
    body: str
    yaml_start: int
    body_start: int
    unclosed: bool = False

    def with_yaml(self, yaml_text: str) -> str:
        """The whole note with ``yaml_text`` between the fences."""
        return self.bom + self.opening + yaml_text + self.closing + self.body


def split_frontmatter(text: str) -> Split:
    """Cut ``text`` into BOM, frontmatter and body. Never raises."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    start = len(bom)
    opening = _OPENING.match(text, start)
    if opening is not None:
        closing = _CLOSING.search(text, opening.end())
        if closing is not None:
            body_start = closing.end() + 1 if closing.end() < len(text) else closing.end()
            return Split(
                has_frontmatter=True,
                bom=bom,
                newline="\r\n" if opening.group().endswith("\r\n") else "\n",
                opening=opening.group(),
                yaml_text=text[opening.end() : closing.start()],
                closing=text[closing.start() : body_start],
                body=text[body_start:],
                yaml_start=opening.end(),
                body_start=body_start,
            )
    first_break = text.find("\n")
    return Split(
        has_frontmatter=False,
        bom=bom,
        newline="\r\n" if first_break > 0 and text[first_break - 1] == "\r" else "\n",
        opening="",
        yaml_text="",
        closing="",
        body=text[start:],
        yaml_start=start,
        body_start=start,
        unclosed=opening is not None,
    )


def parse_frontmatter(text: str) -> dict[str, object]:
    """The note's frontmatter as plain Python data (``{}`` when it has none).

    Top-level keys that YAML reads as something else (``1:``, ``true:``) are
    given as strings. Raises :class:`FrontmatterError` for anything else.
    """
    return {str(key): value for key, value in _load(split_frontmatter(text)).items()}


# --- editing ---------------------------------------------------------------------


def set_key(text: str, key: str, value: object) -> str:
    """``text`` with top-level ``key`` set to ``value``; every other byte unchanged.

    ``value`` is a string, boolean, integer, date, None or a list of the
    first four. An existing list keeps its flow or block style; an existing
    scalar keeps its key spelling and inline comment. Returns ``text`` itself
    when the key already holds that value.
    """
    new_value = _normalized(value)
    doc = _open(text)
    expected = dict(doc.data)
    expected[key] = new_value
    index = doc.index_of(key)
    if index is not None and _same(doc.data[key], new_value):
        return text
    split, nl = doc.split, doc.split.newline
    if not split.has_frontmatter:
        if split.unclosed:
            raise FrontmatterError(
                "The frontmatter opened on line 1 is never closed. Add a line `---` "
                "after it, then try again.",
                line=1,
            )
        entry = _fresh_entry(key_text(key), new_value, indent="", nl=nl)
        return doc.verified(f"{split.bom}---{nl}{entry}---{nl}{split.body}", expected, key)
    if index is None:
        new_yaml = split.yaml_text + _fresh_entry(
            key_text(key), new_value, indent=doc.indent, nl=nl
        )
    else:
        new_yaml = _replaced(doc, index, new_value)
    return doc.verified(split.with_yaml(new_yaml), expected, key)


def remove_key(text: str, key: str) -> str:
    """``text`` without top-level ``key`` (unchanged when there is no such key)."""
    doc = _open(text)
    index = doc.index_of(key)
    if index is None:
        return text
    expected = {k: v for k, v in doc.data.items() if k != key}
    y = doc.yaml
    start, end = doc.entry_span(index)
    try:
        return doc.verified(_note_with(doc.split, y[:start] + y[end:]), expected, key)
    except FrontmatterError:
        blanks = _BLANK_LINES.match(y, end)
        blank_end = blanks.end() if blanks else end
        if blank_end == end:
            raise
    # The blank lines after the key would join a `|+` block scalar before it: take them along.
    return doc.verified(_note_with(doc.split, y[:start] + y[blank_end:]), expected, key)


def add_to_list(text: str, key: str, item: str) -> str:
    """``text`` with ``item`` appended to the list under ``key``.

    No duplicates: unchanged when the item is already there. Creates the key
    when missing. A flow list ``[a, b]`` gets the item inside its brackets; a
    block list gets a new ``- item`` line indented like its other items. A
    single string value becomes a list of it and the item.
    """
    doc = _open(text)
    index = doc.index_of(key)
    old = doc.data.get(key)
    if index is None or old is None:
        return set_key(text, key, [item])
    if not isinstance(old, list):
        if not isinstance(old, str | bool | int | datetime.date):
            raise FrontmatterError(
                f"`{key}` in the frontmatter holds {_describe(old)}, not a list; "
                "Antinomy left it as it is. Make it a list by hand.",
                line=doc.line_of(index),
            )
        return text if _same(old, item) else set_key(text, key, [old, item])
    if any(_same(existing, item) for existing in old):
        return text
    node = doc.values[index]
    if node.kind != "sequence":  # e.g. an alias to a list defined elsewhere
        return set_key(text, key, [*old, item])
    y = doc.yaml
    if node.flow:
        if node.children:
            at = node.children[-1].end
            new_yaml = y[:at] + flow_separator(y, node) + scalar_text(item, flow=True) + y[at:]
        else:
            at = node.start + 1
            new_yaml = y[:at] + scalar_text(item, flow=True) + y[at:]
    else:
        at = after_line(y, node.end)
        line = block_item_prefix(y, node) + scalar_text(item) + doc.split.newline
        new_yaml = y[:at] + line + y[at:]
    expected = dict(doc.data)
    expected[key] = [*old, item]
    return doc.verified(doc.split.with_yaml(new_yaml), expected, key)


def remove_from_list(text: str, key: str, item: str) -> str:
    """``text`` with every ``item`` removed from the list under ``key``.

    Removes the key entirely when the list becomes empty (or when the key
    holds just that string). Unchanged when the item is not there.
    """
    doc = _open(text)
    index = doc.index_of(key)
    old = doc.data.get(key)
    if index is None:
        return text
    if not isinstance(old, list):
        return remove_key(text, key) if _same(old, item) else text
    remaining = [existing for existing in old if not _same(existing, item)]
    if len(remaining) == len(old):
        return text
    if not remaining:
        return remove_key(text, key)
    node, position = doc.values[index], old.index(item)
    span = None
    if node.kind == "sequence" and len(node.children) == len(old):
        span = item_span(doc.yaml, node, position)
    if span is None:  # a layout we cannot cut safely: rewrite the list in its style
        return set_key(text, key, remaining)
    expected = dict(doc.data)
    expected[key] = old[:position] + old[position + 1 :]
    new_text = doc.verified(
        doc.split.with_yaml(doc.yaml[: span[0]] + doc.yaml[span[1] :]), expected, key
    )
    # One occurrence at a time, so that each cut is computed on fresh positions.
    return remove_from_list(new_text, key, item) if len(remaining) < len(old) - 1 else new_text


# --- internals -------------------------------------------------------------------


@dataclass(frozen=True)
class _Doc:
    """A parsed note: its split, its data and the positions of its top-level keys."""

    split: Split
    data: dict[Any, Any]
    keys: tuple[Node, ...]
    values: tuple[Node, ...]
    indent: str

    @property
    def yaml(self) -> str:
        return self.split.yaml_text

    def index_of(self, key: str) -> int | None:
        for index, existing in enumerate(self.data):
            if isinstance(existing, str) and existing == key:
                return index
        return None

    def line_of(self, index: int) -> int:
        return self.yaml.count("\n", 0, self.keys[index].start) + _FIRST_YAML_LINE

    def entry_span(self, index: int) -> tuple[int, int]:
        """From the key's line start to the end of its value's last line."""
        key, value = self.keys[index], self.values[index]
        start = line_start(self.yaml, key.start)
        if not is_blank(self.yaml[start : key.start]):
            raise self.failure(str(list(self.data)[index]), "the key does not start its line")
        return start, after_line(self.yaml, key.end if value.empty else max(key.end, value.end))

    def failure(self, key: str, reason: str) -> FrontmatterError:
        return FrontmatterError(
            f"Antinomy could not change `{key}` in the frontmatter without disturbing "
            f"the rest of it ({reason}); the note was left as it is. Edit that key by hand."
        )

    def verified(self, new_text: str, expected: dict[Any, Any], key: str) -> str:
        """``new_text`` if it reads back as ``expected`` with the body untouched."""
        try:
            new_split = split_frontmatter(new_text)
            data = _load(new_split)
        except FrontmatterError as exc:
            raise self.failure(key, f"the result would not parse: {exc}") from exc
        if new_split.body != self.split.body or new_split.bom != self.split.bom:
            raise self.failure(key, "the body would change")
        if not _same(data, expected):
            raise self.failure(key, "other values would change")
        return new_text


def _note_with(split: Split, yaml_text: str) -> str:
    """The note with new YAML; without fences when nothing is left between them."""
    if yaml_text == "" and _OPENING.match(split.body) is None:
        return split.bom + split.body
    return split.with_yaml(yaml_text)


def _open(text: str) -> _Doc:
    split = split_frontmatter(text)
    data = _load(split)
    try:
        root = layout(split.yaml_text) if split.has_frontmatter else None
    except Exception as exc:  # it parsed once already; a surprise is reported, not raised raw
        raise FrontmatterError(f"The frontmatter cannot be edited: {exc}") from exc
    if root is None:
        return _Doc(split, data, (), (), "")
    if root.kind != "mapping":  # e.g. a lone tag or anchor, which reads as empty
        raise FrontmatterError(
            "The frontmatter holds a single value, not `key: value` lines; "
            "rewrite it as `key: value` lines to edit it.",
            line=_FIRST_YAML_LINE,
        )
    if root.flow:
        raise FrontmatterError(
            "The frontmatter is written as one flow mapping `{...}`; Antinomy edits only "
            "frontmatter written as `key: value` lines. Rewrite it that way to edit it.",
            line=_FIRST_YAML_LINE,
        )
    keys, values = root.children[0::2], root.children[1::2]
    if len(keys) != len(data) or any(k.value == "<<" and k.kind == "scalar" for k in keys):
        raise FrontmatterError(
            "The frontmatter uses merge keys (`<<`); Antinomy cannot edit it safely. "
            "Edit that note by hand.",
            line=_FIRST_YAML_LINE,
        )
    indent = split.yaml_text[line_start(split.yaml_text, keys[0].start) : keys[0].start]
    return _Doc(split, data, keys, values, indent if is_blank(indent) else "")


def _load(split: Split) -> dict[Any, Any]:
    """The frontmatter's data as a dict (keys as YAML read them)."""
    if not split.has_frontmatter:
        return {}
    try:
        if "*" in split.yaml_text:  # no alias, no expansion to bound: skip the extra pass
            _check_aliases(split.yaml_text)
        data = loader().load(split.yaml_text)
    except FrontmatterError:
        raise
    except Exception as exc:  # ruamel raises more than YAMLError (e.g. bad dates)
        raise _invalid_yaml(split.yaml_text, exc) from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"The frontmatter is {_describe(data)}, not `key: value` lines "
            f"(line {_FIRST_YAML_LINE}). Rewrite it as one `key: value` per line.",
            line=_FIRST_YAML_LINE,
        )
    return data


#: The most nodes a frontmatter may stand for once its aliases are expanded. A real
#: note has a few dozen; nested ``&a [*a, *a, …]`` lines ("billion laughs") reach
#: billions from a few hundred bytes and would take minutes and gigabytes to read.
MAX_EXPANDED_NODES = 10_000


def _check_aliases(yaml_text: str) -> None:
    """Refuse aliases that refer to themselves or expand beyond :data:`MAX_EXPANDED_NODES`.

    Walks the parser's events (cheap: nothing is built), sizing each anchored
    node with the aliases inside it counted at their full expanded size.
    """
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = []  # [anchor, expanded size so far]
    for event in loader().parse(yaml_text):
        if isinstance(event, AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise _alias_refused(
                    event, f"the alias *{event.anchor} refers to the node that contains it"
                )
            size = sizes.get(str(event.anchor), 1)
        elif isinstance(event, ScalarEvent):
            size = 1
            if event.anchor is not None:
                sizes[str(event.anchor)] = 1
        elif isinstance(event, SequenceStartEvent | MappingStartEvent):
            stack.append([event.anchor, 1])
            continue
        elif isinstance(event, SequenceEndEvent | MappingEndEvent) and stack:
            anchor, size = stack.pop()
            if anchor is not None:
                sizes[str(anchor)] = size
        else:
            continue
        if stack:
            stack[-1][1] += size
            size = stack[-1][1]
        if size > MAX_EXPANDED_NODES:
            raise _alias_refused(
                event,
                f"its aliases expand to more than {MAX_EXPANDED_NODES:,} values (an alias bomb?)",
            )


def _alias_refused(event: Any, reason: str) -> FrontmatterError:
    mark = getattr(event, "start_mark", None)
    line = mark.line + _FIRST_YAML_LINE if mark is not None else None
    where = f" at line {line}" if line is not None else ""
    return FrontmatterError(
        f"Invalid YAML in the frontmatter{where}: {reason}. Antinomy does not expand it — "
        "write the values out (or remove the anchors) and the note will be read again.",
        line=line,
    )


def _invalid_yaml(yaml_text: str, exc: Exception) -> FrontmatterError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line: int | None = None
    if mark is not None and isinstance(getattr(mark, "line", None), int):
        line = mark.line + _FIRST_YAML_LINE
    elif isinstance(getattr(exc, "position", None), int):
        line = yaml_text.count("\n", 0, getattr(exc, "position", 0)) + _FIRST_YAML_LINE
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None)
    detail = str(problem) if problem else (str(exc).splitlines() or [type(exc).__name__])[0]
    where = f" at line {line}" if line is not None else ""
    return FrontmatterError(
        f"Invalid YAML in the frontmatter{where}: {detail}. Fix the frontmatter "
        "(or remove it) and the note will be read again.",
        line=line,
    )


def _describe(value: object) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a single value ({type(value).__name__})"


def _normalized(value: object) -> Scalar | list[Scalar]:
    if isinstance(value, list | tuple):
        return [_scalar(item, in_list=True) for item in value]
    return _scalar(value, in_list=False)


def _scalar(value: object, *, in_list: bool) -> Scalar:
    if isinstance(value, datetime.datetime) or not isinstance(
        value, str | bool | int | datetime.date | None
    ):
        raise TypeError(
            "Antinomy writes strings, booleans, ints, dates, None and lists of those to "
            f"frontmatter, not {type(value).__name__} (give a datetime as an ISO string)."
        )
    if value is None and in_list:
        raise TypeError("A list written to frontmatter cannot hold None.")
    return value


def _same(a: object, b: object) -> bool:
    """Equal data, telling `1` from `true` and `"1"`; safe on shared or cyclic data."""
    try:
        return _same_in(a, b, set())
    except RecursionError:
        return False


def _same_in(a: object, b: object, seen: set[tuple[int, int]]) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, list | dict):
        if (id(a), id(b)) in seen:
            return True
        seen.add((id(a), id(b)))
        if isinstance(a, list) and isinstance(b, list):
            return len(a) == len(b) and all(_same_in(x, y, seen) for x, y in zip(a, b, strict=True))
        if isinstance(a, dict) and isinstance(b, dict):
            return len(a) == len(b) and all(
                _same_in(ka, kb, seen) and _same_in(va, vb, seen)
                for (ka, va), (kb, vb) in zip(a.items(), b.items(), strict=True)
            )
    return bool(a == b)


def _fresh_entry(key: str, value: Scalar | list[Scalar], *, indent: str, nl: str) -> str:
    """The lines of a newly written ``key: value``."""
    return indent + key + _entry_tail(value, indent=indent, nl=nl)


def _entry_tail(value: Scalar | list[Scalar], *, indent: str, nl: str) -> str:
    """Everything after the key: the colon, the value and the final line break."""
    if value is None:
        return ":" + nl
    if isinstance(value, list):
        if not value:
            return ": []" + nl
        return ":" + nl + "".join(f"{indent}  - {scalar_text(item)}{nl}" for item in value)
    return ": " + scalar_text(value) + nl


def _replaced(doc: _Doc, index: int, value: Scalar | list[Scalar]) -> str:
    """The YAML text with the existing entry ``index`` holding ``value``."""
    y, nl = doc.yaml, doc.split.newline
    key, node = doc.keys[index], doc.values[index]
    start, end = doc.entry_span(index)
    if isinstance(value, list) and node.kind == "sequence":
        if node.flow:
            new_list = flow_list_text(value, separator=flow_separator(y, node))
            return y[: node.start] + new_list + y[node.end :]
        if value:
            # Keep the key line (and its comment); write the items in the list's own indent.
            first, prefix = line_start(y, node.start), block_item_prefix(y, node)
            return y[:first] + "".join(prefix + scalar_text(item) + nl for item in value) + y[end:]
    if value is not None and not isinstance(value, list):
        one_line = not node.empty and "\n" not in y[node.start : node.end]
        if one_line and not node.block_scalar and (node.flow or node.kind in ("scalar", "alias")):
            # In place: the key as written, the spacing and any inline comment stay.
            return y[: node.start] + scalar_text(value) + y[node.end :]
        colon = colon_after(y, key.end) if node.empty else None
        if colon is not None and colon < end:
            return y[: colon + 1] + " " + scalar_text(value) + y[colon + 1 :]
    # Otherwise rewrite the whole entry, keeping the key as written.
    return y[: key.end] + _entry_tail(value, indent=y[start : key.start], nl=nl) + y[end:]

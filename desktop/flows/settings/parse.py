"""Settings read from JSON into frozen dataclasses, checked against the fields' own types.

No table of types to keep in step: a field's annotation says what the file may
hold (``int``, ``bool``, ``float``, ``str``, ``X | None``, ``tuple[str, ...]``
from a JSON list, a ``Literal`` of strings, a nested settings dataclass). Values
are then checked by the dataclass itself (``__post_init__``), which names the
allowed range.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")

ErrorFactory = Callable[[str], Exception]


def from_mapping(cls: type[T], data: Any, *, where: str, error: ErrorFactory) -> T:
    """``cls`` built from ``data`` (a JSON object); ``None`` gives the defaults.

    Keys ``cls`` does not have are ignored (a newer version may have written
    them); a value of the wrong type raises ``error("<where>.<key> has the wrong
    type: <value>.")``.
    """
    if data is None:
        return cls()
    if not isinstance(data, Mapping):
        raise error(f"'{where}' must be a table of settings, not {data!r}.")
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            continue
        values[f.name] = _value(hints[f.name], data[f.name], f"{where}.{f.name}", error)
    return cls(**values)


def _value(annotation: Any, value: Any, where: str, error: ErrorFactory) -> Any:
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        return from_mapping(annotation, value, where=where, error=error)
    if isinstance(value, list):
        value = tuple(value)
    if not _fits(annotation, value):
        raise error(f"{where} has the wrong type: {value!r}.")
    return value


def _fits(annotation: Any, value: Any) -> bool:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(arm, value) for arm in typing.get_args(annotation))
    if origin is typing.Literal:
        # The kind of value only: the dataclass names the allowed ones in its own message.
        return any(type(v) is type(value) for v in typing.get_args(annotation))
    if origin is tuple:
        return isinstance(value, tuple)
    if annotation is type(None):
        return value is None
    if annotation is bool:
        return isinstance(value, bool)
    if annotation is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if annotation is Any:
        return True
    return isinstance(value, annotation)

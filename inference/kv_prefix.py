"""Saved KV states of fixed prompt prefixes, so a run pays for its instructions once.

A scan sends many requests that open with the same system message (the pair
describer's instructions, the hunter's rules). llama.cpp keeps the KV cache of
the last prompt, and :class:`~inference.llama_backend.LlamaGenerator` reuses its
common prefix — but one request with another opening (a memory summary, an
ingest, a warm-up) in between wipes it: measured here, a 291-token system prompt
took 10.7 s again after one unrelated call, against 0.6–1.6 s reused (one thread
on a loaded machine). So the generator saves the KV state of sequence 0 right
after a leading system message (``llama_state_seq_get_data``: the cells only, no
logits — a few MB for the shipped model) and restores it when a later prompt
starts with the same tokens.

This module holds the states and picks the one to restore; the generator does
the llama.cpp calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Prefixes shorter than this are cheaper to recompute than to save and restore.
MIN_TOKENS = 32
#: States kept, most recently used last (each ~23 KB a token for SmolLM2-135M).
MAX_STATES = 4


@dataclass
class PrefixStats:
    saved: int = 0
    restored: int = 0
    #: Prompt tokens not decoded thanks to a restored state or the live cache.
    tokens_reused: int = 0


class PrefixStates:
    """At most :data:`MAX_STATES` (prefix tokens, KV bytes), least recently used dropped.

    Not thread-safe: the generator's lock covers it."""

    def __init__(self, max_states: int = MAX_STATES) -> None:
        self.max_states = max_states
        self._states: list[tuple[tuple[int, ...], bytes]] = []
        self.stats = PrefixStats()

    def __len__(self) -> int:
        return len(self._states)

    def has(self, prefix: Sequence[int]) -> bool:
        key = tuple(prefix)
        return any(k == key for k, _ in self._states)

    def best(self, tokens: Sequence[int], *, longer_than: int) -> tuple[int, bytes] | None:
        """The longest saved prefix of ``tokens`` (shorter than ``tokens`` itself) that
        beats the ``longer_than`` tokens the live cache already shares, marked used."""
        found: tuple[int, int] | None = None
        for i, (key, _) in enumerate(self._states):
            n = len(key)
            fits = longer_than < n < len(tokens) and tuple(tokens[:n]) == key
            if fits and (found is None or n > found[1]):
                found = (i, n)
        if found is None:
            return None
        entry = self._states.pop(found[0])
        self._states.append(entry)
        return found[1], entry[1]

    def add(self, prefix: Sequence[int], state: bytes) -> None:
        key = tuple(prefix)
        self._states = [(k, s) for k, s in self._states if k != key]
        self._states.append((key, state))
        del self._states[: -self.max_states]
        self.stats.saved += 1

    def clear(self) -> None:
        self._states.clear()


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n

"""Recognising a user's "leave this out" instruction (English, French, Italian).

Two scopes:

* ``previous`` — "forget what I just said", "oublie ce que je viens de dire",
  "dimentica quello che ho appena detto": the user's previous turn in the same
  session and the assistant's replies to it are withdrawn.
* ``this`` — "don't remember this", "off the record", "ne retiens pas ça",
  "non ricordare questo": the turn that carries it is withdrawn; when that turn
  says nothing else (a bare instruction), it points back, like ``previous``.

The instruction turn itself is always withdrawn: it is not a fact.
"""

from __future__ import annotations

import re
from typing import Literal

Scope = Literal["this", "previous"]

_APOS = "['’]"

_PREVIOUS = [
    r"(?<!n't )(?<!not )(?<!never )\bforget (?:what|everything) i "
    r"(?:just |have just )?(?:said|told you|wrote)\b",
    r"(?<!n't )(?<!not )(?<!never )(?<!n’t )\bforget (?:that|the last (?:message|thing i said))\b",
    rf"\b(?:don{_APOS}?t|do not) (?:remember|keep|store|save) (?:what i just said|that)\b",
    r"\bscratch that\b",
    rf"\boublie(?:z)? (?:ce que (?:je viens de dire|j{_APOS}ai dit)|ça|cela|tout ça)\b",
    rf"\bne (?:retiens|retenez|mémorise|mémorisez) pas ce que "
    rf"(?:je viens de dire|j{_APOS}ai dit)\b",
    r"\bdimentica (?:quello che|ciò che|cosa) (?:ho appena detto|ti ho detto|ho detto)\b",
    r"\bdimentica(?:lo)?\b(?= *[.!]?$)",
    r"\bnon (?:ricordare|memorizzare|salvare) (?:quello che|ciò che) ho (?:appena )?detto\b",
]
_THIS = [
    rf"\b(?:don{_APOS}?t|do not|never) (?:remember|memori[sz]e|store|save|keep|record) "
    r"(?:this|it|any of this)\b",
    r"\boff the record\b",
    rf"\b(?:ne|n{_APOS}) ?(?:retiens|retenez|mémorise|mémorisez|enregistre|garde) pas "
    r"(?:ça|cela|ceci)\b",
    r"\bne (?:le|la) (?:retiens|mémorise|garde) pas\b",
    r"\bnon (?:ricordare|memorizzare|salvare|registrare) (?:questo|questa cosa|niente di questo)\b",
    r"\bnon ricordarlo\b",
]
_PREVIOUS_RE = re.compile("|".join(_PREVIOUS), re.IGNORECASE)
_THIS_RE = re.compile("|".join(_THIS), re.IGNORECASE)
_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)
_FILLER = {
    "please",
    "plz",
    "ok",
    "okay",
    "and",
    "also",
    "but",
    "actually",
    "just",
    "by",
    "the",
    "way",
    "s'il",
    "te",
    "vous",
    "plaît",
    "plait",
    "et",
    "per",
    "favore",
    "e",
    "anyway",
}


def withdrawal_scope(text: str) -> Scope | None:
    """``previous``, ``this`` or None for a user turn's text."""
    if _PREVIOUS_RE.search(text):
        return "previous"
    match = _THIS_RE.search(text)
    if match is None:
        return None
    rest = (text[: match.start()] + " " + text[match.end() :]).lower()
    words = [w for w in _WORD.findall(rest) if w not in _FILLER]
    return "this" if len(words) >= 3 else "previous"

"""Words too common to highlight: small lists for the vault's languages (en, fr, it).

A snippet that marks «the» and «and» hides the words the user searched for.
The lists hold articles, pronouns, prepositions, conjunctions and auxiliaries
only — a word that can carry meaning in a note ("not", "never", "pas") stays.
"""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


EN = _words(
    """a an the and or but if of to in on at by for with from as into onto about over under
    is are was were be been being am do does did have has had will would shall should can
    could may might must this that these those it its it's i me my we us our you your he him
    his she her they them their there here what which who whom whose when where why how
    than then so such too very also just there's let's"""
)
FR = _words(
    """le la les l un une des du de d au aux et ou mais donc or ni car que qu qui quoi dont
    où ce cet cette ces se sa son ses leur leurs mon ma mes ton ta tes notre nos votre vos
    je j tu il elle on nous vous ils elles me m te t lui y en à a dans par pour sur sous
    avec sans chez vers est sont était être avoir ai as avons avez ont été fait c s"""
)
IT = _words(
    """il lo la i gli le l un uno una e ed o ma se che chi cui di del dello della dei
    degli delle da dal dallo dalla dai dagli dalle a al allo alla ai agli alle in nel nello
    nella nei negli nelle su sul sullo sulla sui sugli sulle con per tra fra è sono era
    essere ho hai ha abbiamo avete hanno mi ti si ci vi lui lei noi voi loro questo questa
    questi queste quello quella come anche più"""
)

#: Every list together: a vault mixes languages note by note.
STOP_WORDS = EN | FR | IT

_WORD = re.compile(r"\w+(?:'\w+)?", re.UNICODE)


def is_stop_word(word: str) -> bool:
    return word.casefold() in STOP_WORDS


def content_words(text: str) -> list[str]:
    """The words of ``text`` that are worth highlighting; all of them if none is."""
    words = _WORD.findall(text)
    kept = [w for w in words if not is_stop_word(w)]
    return kept or words

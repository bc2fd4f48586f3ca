"""The sentence's own subject, read in code: "Clara starts her new job at the hospital" is
about Clara, not about the hospital.

A statement whose grammatical subject is one name is filed under that name without asking
the model which subject it is about (the shipped 135M model filed such lines under a place
or a thing the sentence mentions further on). The subject phrase is what comes before the
first verb; it is read by rules of English word order:

* it opens the sentence, after any article or possessive ("The Atlas service …", "My
  cousin Ana …", "The landlord of Elm Court …");
* it ends at the first verb: an auxiliary or a common verb (:mod:`.wordclass`'s list), a
  word ending in "-ed", "cannot", or a word ending in "-s" right after the name (the third
  person of the present: "Ana bakes …", "Kiln only fires …" — adverbs between are skipped);
* a word opening the sentence is a name when :mod:`.wordclass` reads it as one (a verb
  follows, or it is shaped as a name), when a verb in "-s" and its object follow ("Ana
  bakes the bread", "Kiln only fires two …": an adjective before a plural noun is followed
  by a preposition or a verb, never an article — "Quick notes about …"), or when the
  conversation uses it as a name elsewhere: capitalised inside a sentence ("my cousin
  Ana", then "Ana bakes bread.") or opening another sentence as a name does ("Ana bakes
  the bread." then "Ana hides under the table.");
* a verb before any name, or more than four words before the first, means the subject
  is no name ("Gardening takes most of my Sundays") — but a description that "is" names
  one gives that name ("My dentist is Dr Okafor", "The best bakery in town is Crumbs");
* a pronoun opening the sentence ("I", "we", "she") gives no subject: the model chooses
  among the names the line holds, as it does when the phrase holds two names ("Ana and
  Ben share a flat") or none.

Months, weekdays and the pronoun "I" are never names here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from desktop.flows.memory.names import _CALENDAR
from desktop.flows.memory.support import fold
from desktop.flows.memory.wordclass import (
    _MODALS,
    _SENTENCE_END,
    _SUBJECTS,
    _TOKEN,
    _VERBS,
    NAME,
    _base,
    _is_word,
    _name_shaped,
    word_roles,
)
from desktop.vault.stopwords import word_set

_DETERMINERS = word_set("the a an this that these those my our your his her their its")
#: Adverbs that may stand between a subject and its verb ("Ana only eats …").
_ADVERBS = word_set(
    """
    only also still just always never often usually sometimes already now really rarely
    currently finally soon
    """
)
_NOT_NAMES = word_set("i i'm i've i'd i'll")
_COPULAS = word_set("is are was were")
#: Words before the first name that a subject phrase may hold ("the contact person at").
MAX_LEADING_WORDS = 4


def conversation_names(texts: Iterable[str]) -> frozenset[str]:
    """Folded words the conversation uses as names: inside a sentence ("my cousin Ana" gives
    "ana"), or opening one as a name does (a verb follows: "Ana bakes the bread"); a capital
    on a first word alone proves nothing."""
    names: set[str] = set()
    for text in texts:
        start = True
        for token, role in word_roles(text):
            if not _is_word(token):
                start = start or token in _SENTENCE_END or token == "\n"
                continue
            word = _base(token)
            if not start and role == NAME and word not in _CALENDAR and word not in _NOT_NAMES:
                names.add(word)
            start = False
        # A first word the sentence's own shape makes a name ("Ana bakes the bread").
        for sentence in re.split(r"(?<=[.!?;])\s+|\n", text):
            tokens = _TOKEN.findall(sentence)
            if tokens and _is_name(tokens, 0, set()):
                names.add(_base(tokens[0]))
    return frozenset(names)


def sentence_subject(sentence: str, *, known: Iterable[str] = ()) -> str | None:
    """The one name the sentence's subject phrase holds ("Ana", "Atlas service" → "Atlas"),
    or None (a pronoun subject, no name, two names, or no subject phrase found).

    ``known``: folded names the conversation or the user's pages use (:func:`conversation_names`).
    """
    known_names = {fold(k) for k in known}
    tokens = _TOKEN.findall(" ".join(sentence.split()))
    runs: list[str] = []
    run: list[str] = []
    leading = 0
    for i, token in enumerate(tokens):
        if not _is_word(token):
            if run:
                runs.append(" ".join(run))
                run = []
            if token in _SENTENCE_END:
                break
            continue
        word = _base(token)
        if i == 0 and word in _SUBJECTS:
            return None
        if _is_name(tokens, i, known_names):
            run.append(re.sub(r"['’]s$", "", token))
            continue
        after_name = bool(run)
        if run:
            runs.append(" ".join(run))
            run = []
        if runs and _verb_like(word, after_name=after_name or _adverbs_since_name(tokens, i)):
            break
        if not runs and word not in _DETERMINERS:
            leading += 1
            # A verb before any name: the subject phrase holds none ("Gardening takes …"),
            # unless it is a description the verb "to be" names ("My dentist is Dr Okafor").
            if word in _COPULAS and _base(tokens[0]) in _DETERMINERS:
                return _complement_name(tokens, i + 1, known_names)
            if leading > MAX_LEADING_WORDS or _verb_like(word, after_name=leading > 1):
                return None
    if run:
        runs.append(" ".join(run))
    distinct = list(dict.fromkeys(runs))
    return distinct[0] if len(distinct) == 1 else None


def _complement_name(tokens: list[str], start: int, known: set[str]) -> str | None:
    """The name run right after "is" (an article before it skipped): "… is Neovim with …"."""
    i = start
    while i < len(tokens) and _base(tokens[i]) in _DETERMINERS:
        i += 1
    run: list[str] = []
    while i < len(tokens) and _is_word(tokens[i]) and _is_name(tokens, i, known):
        run.append(re.sub(r"['’]s$", "", tokens[i]))
        i += 1
    return " ".join(run) or None


def _is_name(tokens: list[str], i: int, known: set[str]) -> bool:
    token = tokens[i]
    word = _base(token)
    if word in _CALENDAR or word in _NOT_NAMES or word in _DETERMINERS or not token[:1].isalnum():
        return False
    if word in known or _name_shaped(token):
        return True
    if not token[:1].isupper():
        return False
    if i > 0:
        return True
    # The first word: a name only when the sentence goes on as after its subject.
    roles = list(word_roles(" ".join(tokens[:3])))
    # "Then I asked …": the pronoun "I" is capitalised, but it is no name after a name.
    if roles and roles[0][1] == NAME and (len(tokens) < 2 or _base(tokens[1]) not in _NOT_NAMES):
        return True
    # … or a verb in "-s" with its object follows ("Ana bakes the bread", "Ana takes 2"),
    # or an adverb and such a verb ("Ana only eats …"); an adjective before a plural noun is
    # followed by a preposition or a verb, not by an article ("Quick notes about …").
    after = [_base(t) for t in tokens[1:4]]
    if after and after[0] in _ADVERBS:
        after = after[1:]
    return (
        len(after) >= 2
        and tokens[1][:1].islower()
        and _verb_like(after[0], after_name=True)
        and (after[1] in _DETERMINERS or after[1].isdigit())
    )


def _adverbs_since_name(tokens: list[str], i: int) -> bool:
    """Whether only adverbs stand between the last name before ``tokens[i]`` and it."""
    j = i - 1
    while j >= 0 and _base(tokens[j]) in _ADVERBS:
        j -= 1
    return j < i - 1 and j >= 0 and tokens[j][:1].isupper()


def _verb_like(word: str, *, after_name: bool) -> bool:
    if word in _VERBS or word in _MODALS or word == "cannot":
        return True
    if word.endswith("ed") and len(word) > 4:
        return True
    # The third person of the present, right after its subject: "Ana bakes", "Kiln fires".
    return after_name and word.endswith("s") and not word.endswith(("ss", "us", "is", "ous"))

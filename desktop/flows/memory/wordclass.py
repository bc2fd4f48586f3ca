"""How the user used a word: as a name, or as a verb, an adjective or a sentence's opener.

A sentence's first word is capitalised whatever it is, so a capital there is no evidence
of a name. The first word is read as a name only when the sentence goes on as it does
after its subject: it ends there ("Porto."), a capitalised word follows ("Atlas API"), or
a verb does ("Marco is", "Marco said", "Marco moved", "Marco's moving"). Followed by a
pronoun, a comma or colon, an article or any other word, it opens the sentence as a verb,
an adjective or an adverb does ("Let me know", "Let's plan the offsite", "Quick note: …",
"Honestly, …", "Maybe we …").

Inside a sentence, a word keeps the class its place gives it: a capitalised word or one
shaped as a name ("PostgreSQL", "API", "S3", "Fly.io") is a name; a lowercase word after a
subject pronoun, a modal or an infinitive's "to" is a verb ("we deploy", "should try",
"want to migrate"); after a copula or an intensifier it is an adjective ("was slow", "very
quick"); between an article and another content word it modifies that word ("a quick
fix"); anywhere else it is a noun ("use uv for the builds").
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from desktop.flows.memory.support import fold
from desktop.vault.stopwords import word_set

#: The roles a word may have in what the user wrote; a subject is used as NAME or NOUN.
NAME, NOUN, VERB, ADJECTIVE, MODIFIER, OPENER, MARK = (
    "name", "noun", "verb", "adjective", "modifier", "opener", "mark"
)  # fmt: skip
SUBJECT_ROLES = frozenset({NAME, NOUN})

_TOKEN = re.compile(r"[^\W_][\w.'’&+-]*[^\W_]|[^\W_]|[,;:.!?()\"“”]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;:")
#: "Fly.io", "Node.js" (not "e.g" or "i.e").
_DOTTED = re.compile(r"[^\W\d_]{2,}\.[^\W\d_]{2,}")
_SUBJECTS = word_set("i we you they he she it one nous vous ils elles je tu noi voi io")
_MODALS = word_set(
    """
    will would shall should can could may might must do does did don't doesn't didn't won't
    can't please let's let lets
    """
)
#: "to" before a verb after these ("want to deploy"); elsewhere it is a preposition
#: ("allergic to penicillin").
_BEFORE_INFINITIVE = word_set(
    """
    want wants wanted need needs needed have has had going try tries tried plan plans planned
    decide decides decided like likes liked used able ought start started hope hopes
    """
)
_COPULAS = word_set(
    """
    is are was were be been being am seems seem seemed looks look looked feels feel felt gets
    get got become becomes became stays stay remains remain isn't aren't wasn't weren't
    """
)
_INTENSIFIERS = word_set("very too so quite really pretty rather more most less least fairly")
_DETERMINERS = word_set("the a an this that these those my our your his her their its")
_SMALL = word_set(
    """
    the a an this that these those my our your his her their its of to in on at by for with
    from into about as and or but than then so if not no me us him them you it
    """
)
#: Verbs a subject is often followed by (the rest are recognised by "-ed" or "'s …ing").
_VERBS = word_set(
    """
    is are was were will would has have had can could should must may might does did do
    said says told asks asked wants needs likes prefers prefer uses use goes went runs leads
    owns works lives arrives leaves starts joins moves thinks knows makes keeps stays
    est sont a ont sera était è sono ha hanno
    """
)


def _is_word(token: str) -> bool:
    return token[:1].isalnum()


def _name_shaped(token: str) -> bool:
    """Whether ``token`` is shaped as a name whatever its place: "PostgreSQL", "API", "S3",
    "Fly.io", "GPT-4"."""
    core = token[:-2] if token.endswith(("'s", "’s")) else token
    inner_capital = any(c.isupper() for c in core[1:]) and not core.isupper()
    return (
        inner_capital
        or (core.isupper() and len(core) >= 2)
        or (any(c.isdigit() for c in core) and any(c.isalpha() for c in core))
        or _DOTTED.search(core) is not None
    )


def _base(token: str) -> str:
    """The word as compared: folded, a contraction or possessive cut ("Let's" → "let")."""
    return re.split(r"['’]", fold(token))[0]


def word_roles(text: str) -> Iterator[tuple[str, str]]:
    """Each token of ``text`` with the role its place gives it (one of the constants above;
    punctuation is a MARK, and each line ends with one)."""
    for line in text.splitlines():
        tokens = _TOKEN.findall(line)
        start = 0
        for i, token in enumerate(tokens):
            if token in _SENTENCE_END:
                start = i + 1
            if not _is_word(token):
                yield token, MARK
                continue
            before = fold(tokens[i - 1]) if i > start else ""
            if before == "to":
                infinitive = i - 1 > start and fold(tokens[i - 2]) in _BEFORE_INFINITIVE
                before = "let" if infinitive else ""
            after = tokens[i + 1 : i + 3]
            yield token, _role(token, i == start, before, after)
        yield "\n", MARK


def _role(token: str, first: bool, before: str, after: list[str]) -> str:
    if _name_shaped(token):
        return NAME
    if first:
        return NAME if token[:1].isupper() and _subject_follows(token, after) else OPENER
    if token[:1].isupper():
        return NAME
    if before in _SUBJECTS or before in _MODALS:
        return VERB
    if before in _COPULAS or before in _INTENSIFIERS:
        return ADJECTIVE
    nxt = fold(after[0]) if after else ""
    if before in _DETERMINERS and nxt and _is_word(nxt) and nxt not in _SMALL:
        return MODIFIER  # "a quick fix": the noun is the next word
    return NOUN


def _subject_follows(token: str, after: list[str]) -> bool:
    """Whether the sentence goes on after ``token`` as it does after its subject."""
    nxt = after[0] if after else ""
    if not nxt or nxt in _SENTENCE_END:
        return True
    if not _is_word(nxt):
        return False  # "Honestly, …", "Quick note: …"
    if nxt[:1].isupper():
        return True  # "Atlas API"
    folded = fold(nxt)
    if token.endswith(("'s", "’s")):
        # "Marco's moving" (is) or "Marco's team is" (possessive); not "Let's plan the …".
        then = fold(after[1]) if len(after) > 1 else ""
        return folded.endswith("ing") or then in _VERBS
    return _verb_like(folded)


def _verb_like(word: str) -> bool:
    return word in _VERBS or (word.endswith("ed") and len(word) > 4)


def used_as_subject(word: str, text: str) -> bool | None:
    """Whether ``text`` uses ``word`` as a name or a noun somewhere; None when it never
    uses the word at all (nothing to judge by)."""
    key = _base(word)
    roles = {role for token, role in word_roles(text) if _base(token) == key}
    if not roles:
        return None
    return bool(roles & SUBJECT_ROLES)

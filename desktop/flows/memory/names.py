"""Subject names: suggested in code from the user's words, and refused when they are not names.

A subject name is a short noun phrase: 1–4 words, 2–40 characters, letters,
digits and ``. ' & + -`` only. Refused in code, whatever proposed it:

``sentence``   more than 4 words, or a verb/auxiliary word ("is", "decided", "will")
``pronoun``    a pronoun or the speaker ("we", "I", "the user", "this")
``fragment``   starts or ends with a function word ("to small world", "the"), holds
               ``_`` or ``…``, or none of its words was said ("thetosmallworld")
``common``     one word the user used only as a verb, an adjective or a sentence's opener,
               never as a name ("Let" of "Let me know", "Quick" of "Quick note: …",
               "slow" of "it was slow"; :mod:`.wordclass`)
``token``      a word of it is a credential or an id, not a name: masked text, long
               hex, key material ("Zp3Kq8Lm2Nx7…"); checked first, even against
               existing subjects, so no page is ever named after a secret

:func:`suggest_subjects` proposes names from the statement itself, best first:
existing subjects the statement names, proper names (words whose place in the sentence
makes them names, :mod:`.wordclass`; months and weekdays left out), the noun phrase after a
determiner ("my running plan" → "Running plan"), then its longest content words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from desktop.flows.memory.pages import SubjectPage, clean_subject_name, subject_key
from desktop.flows.memory.secret_rules import token_like
from desktop.flows.memory.support import content_words, fold
from desktop.flows.memory.wordclass import NAME, used_as_subject, word_roles
from desktop.vault.stopwords import STOP_WORDS, word_set

MAX_WORDS = 4
MAX_CHARS = 40
NAME_PATTERN = r"^[A-Za-zÀ-ÖØ-öø-ÿ0-9][A-Za-zÀ-ÖØ-öø-ÿ0-9 .'&+-]{1,39}$"
_NAME_RE = re.compile(NAME_PATTERN)

PRONOUNS = word_set(
    """
    i me my mine we us our ours you your yours he him his she her hers it its they them
    their theirs this that these those someone something everyone everything user users
    assistant je moi nous vous il elle ils elles on ça cela ceci io noi voi lui lei loro
    questo quello
    """
)
#: Words a subject name neither starts nor ends with (it would be a piece of a sentence):
#: the function words, and "always", "often", "never", "instead", "new", "old".
_FUNCTION = STOP_WORDS | word_set("never always instead often new old")
#: One word that names no one thing a person would look up: "Team", "Work", "Stuff".
_GENERIC = word_set(
    """
    team teams work job company office project projects meeting meetings life stuff things
    thing notes note misc miscellaneous general other others personal info information
    various topic topics subject subjects facts fact memory memories preferences details
    equipe équipe travail boulot projet réunion vie trucs choses divers squadra lavoro
    progetto riunione vita cose varie
    """
)
_VERBS = word_set(
    """
    is are was were be been am do does did has have had will would shall should can could
    may might must decided decide chose choose switched switch moved move prefer prefers
    preferred want wants wanted like likes liked need needs needed arrives arrive arrived
    stays stay stayed going goes went picks pick signed sign migrating migrate keep keeps
    told said says est sont était sera ont ai avons è sono ha hanno
    """
)
_CALENDAR = word_set(
    """
    monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays
    thursdays fridays saturdays sundays january february march april may june july august
    september october november december today tomorrow yesterday
    """
)
_ADJECTIVES = {"new", "old", "next", "last", "first", "favourite", "favorite"}
_DETERMINER = re.compile(r"\b(?:the|my|our|his|her|their|a|an)\s+", re.IGNORECASE)


def name_problem(name: str, *, said: str = "", known: Sequence[str] = ()) -> str | None:
    """Why ``name`` is not a subject name (``token``, ``generic``, ``sentence``, ``pronoun``,
    ``fragment``, ``common``), or None.

    ``said``: the user's words; every word of a new name must occur there (by its
    first 5 letters) unless the name is one of ``known`` (existing subjects).
    """
    cleaned = " ".join(name.split())
    if not cleaned:
        return "fragment"
    if any(token_like(w) for w in cleaned.split()):
        return "token"
    if any(subject_key(cleaned) == subject_key(k) for k in known):
        return None
    if "_" in cleaned or "…" in cleaned or "..." in cleaned:
        return "fragment"
    # A contraction counts as its first part: "I'm" is the pronoun "I", "we're" is "we".
    words = [re.split(r"['’]", fold(w).strip(".'’-"))[0] for w in cleaned.split()]
    if len(words) == 1 and words[0] in _GENERIC:
        return "generic"
    if len(words) > MAX_WORDS or len(cleaned) > MAX_CHARS:
        return "sentence"
    if any(w in _VERBS for w in words):
        return "sentence"
    if all(w in PRONOUNS or w in _FUNCTION for w in words) or words[0] in PRONOUNS:
        return "pronoun"
    if words[0] in _FUNCTION - {"the"} or words[-1] in _FUNCTION:
        return "fragment"
    if not _NAME_RE.match(cleaned):
        return "fragment"
    if said:
        # Grounded: at least one of its words was said ("Lisbon trip" for "fly to Lisbon"),
        # so a glued or invented word ("thetosmallworld") is refused.
        have = {w[:5] for w in content_words(said)}
        words_in = [w for w in content_words(cleaned) if not w.isdigit()]
        if words_in and not any(w[:5] in have for w in words_in):
            return "fragment"
        if len(words) == 1 and used_as_subject(cleaned, said) is False:
            return "common"
    return None


def tidy_name(name: str) -> str:
    """Leading article dropped, first letter capitalised, unsafe characters gone."""
    cleaned = clean_subject_name(name)
    cleaned = re.sub(r"^(?:the|a|an)\s+", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"^(?:my|our|his|her|their)\s+", "", cleaned, flags=re.IGNORECASE)
    return cleaned[:1].upper() + cleaned[1:] if cleaned else ""


def suggest_subjects(
    text: str, pages: Sequence[SubjectPage], *, context: str = "", limit: int = 6
) -> tuple[list[str], list[str]]:
    """(existing subjects the text names, new names from the text), each best first."""
    key = f" {subject_key(context + ' ' + text)} "
    named = [
        p.name for p in pages if any(f" {subject_key(n)} " in key for n in (p.name, *p.aliases))
    ]
    fresh: list[str] = []
    phrases: list[str] = []
    # The user's own words first, then the question they answer (``context``).
    for part in (text, context):
        found = _proper_names(part) + _determiner_phrases(part)
        phrases += found + (_long_words(part) if len(found) < 2 else [])
    for phrase in phrases:
        name = tidy_name(phrase)
        if (
            name
            and name_problem(name, said=f"{context}\n{text}") is None
            and all(subject_key(name) != subject_key(n) for n in fresh + named)
        ):
            fresh.append(name)
    return named[:limit], fresh[:limit]


def _proper_names(text: str) -> list[str]:
    """Runs of words used as names ("Atlas API", "Fly.io"): :func:`.wordclass.word_roles`."""
    out: list[str] = []
    run: list[str] = []
    for token, role in word_roles(text):
        word = re.split(r"['’]", fold(token))[0]
        if role == NAME and word not in _CALENDAR and word not in PRONOUNS:
            run.append(re.sub(r"['’]s$", "", token).rstrip(".'’"))
            continue
        if run:
            out.append(" ".join(run))
            run = []
    if run:
        out.append(" ".join(run))
    return [r for r in out if len(r) >= 2]


def _determiner_phrases(text: str) -> list[str]:
    """Up to 3 words after a determiner, cut at a function word or a verb-like word."""
    out = []
    for m in _DETERMINER.finditer(text):
        words: list[str] = []
        for tok in text[m.end() :].split()[:4]:
            w = fold(tok).strip(".,;:!?'’\"()")
            if not words and w in _ADJECTIVES:
                continue
            if not w or w in _FUNCTION or w in _VERBS or w in _CALENDAR or not w.isalpha():
                break
            if words and (w.endswith("ed") or (w.endswith("s") and not w.endswith("ss"))):
                break
            words.append(tok.strip(".,;:!?'’\"()"))
            if tok[-1:] in ",;:.":
                break
        if words and len(words) <= 3:
            out.append(" ".join(words))
    return out


def _long_words(text: str) -> list[str]:
    words = [
        w
        for w in content_words(text)
        if len(w) >= 5
        and w not in _VERBS
        and w not in _CALENDAR
        and w not in _FUNCTION
        and not w.isdigit()
    ]
    return sorted(dict.fromkeys(words), key=len, reverse=True)[:3]


_ALIAS_MARK = r"(?:also known as|also called|a\.?k\.?a\.?|known as|or just|or simply)"


def find_aliases(text: str, name: str) -> list[str]:
    """Alternative names the user gave for ``name`` ("Atlas API (aka Atlas)", "X, also called Y").

    Only names said next to the subject's own name with an alias marker count;
    each passes :func:`name_problem` against the text.
    """
    esc = re.escape(name)
    word = r"([A-Za-zÀ-ÿ0-9][\w .'&+-]{0,38}[\w])"
    patterns = [
        rf"\b{esc}\s*\((?:{_ALIAS_MARK}\s+)?{word}\)",
        rf"\b{esc},?\s+{_ALIAS_MARK}\s+{word}",
        rf"{word},?\s+{_ALIAS_MARK}\s+{esc}\b",
    ]
    out: list[str] = []
    for pattern in patterns:
        for m in re.finditer(pattern, text, re.IGNORECASE):
            alias = tidy_name(re.split(r"[,;.]", m.group(1))[0])
            if (
                alias
                and subject_key(alias) != subject_key(name)
                and name_problem(alias, said=text) is None
                and alias not in out
            ):
                out.append(alias)
    return out

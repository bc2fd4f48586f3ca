"""Same subject, different claim? Two sentences aligned word by word, and what differs.

A contradiction between two notes says something different about one thing. Two
sentences written from one template about two things ("Import from Notion converts
your Notion export…" / "Import from Evernote converts your Evernote export…") say the
same about different things; two sentences that differ only in wording say the same
about the same thing. Neither is a clash, whatever a judge reads in them. So before a
judged sentence pair counts, the two sentences are aligned (longest matching blocks of
words) and what differs is classified:

* ``same`` — nothing but case, punctuation or Markdown differs;
* ``subject`` — every differing word names its own note's subject (a title word, an
  alias, a code name in the sentence): the frame is shared, the thing is not;
* ``value`` — a number, amount, time, date, day or month differs: a candidate, with the
  quantities compared as numbers (:mod:`desktop.flows.value_compare`);
* ``negation`` / ``quantifier`` / ``antonym`` — a negation, a quantifier
  (always / never / only / every…) or a word and its opposite differ: a candidate;
* ``swap`` — a word was replaced by another that is not a form of it ("PostgreSQL" /
  "SQLite"): possibly another value for one slot, a candidate;
* ``wording`` — the frame is shared and words were only added, dropped or inflected
  ("deploys" / "is deployed automatically"): the same claim, reworded;
* ``apart`` — too little is shared to align: the judge alone reads the pair.

These are rules of language (English, French, Italian), not of one vault.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from desktop.flows.quantities import MONTH_NUMBERS
from desktop.flows.value_compare import Comparison, compare_quantities

Kind = Literal[
    "same",
    "subject",
    "value",
    "negation",
    "quantifier",
    "antonym",
    "swap",
    "wording",
    "apart",
    "languages",
]

#: Share of words two sentences must share (in order) to be read as one frame.
ALIGNED = 0.6


def word_set(text: str) -> frozenset[str]:
    """The words of a whitespace-separated list (the word lists below)."""
    return frozenset(text.split())


_TOKEN = re.compile(r"\d+(?:[.,:h]\d+)*|[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_CODE = re.compile(r"`([^`]+)`")

NEGATIONS = word_set(
    """
    not no never none nobody nothing nowhere neither nor without cannot can't don't doesn't
    didn't won't isn't aren't wasn't weren't shouldn't mustn't n't ne pas jamais aucun
    aucune rien ni sans non nessuno nessuna niente nulla né senza
    """
)
QUANTIFIERS = word_set(
    """
    always never every each all only any some most few many sometimes often rarely usually
    mostly occasionally none both either exactly toujours jamais chaque tous toutes tout
    seulement uniquement parfois souvent rarement sempre ogni tutti tutte tutto solo
    soltanto talvolta spesso raramente
    """
)
#: Words and their opposites (either direction).
_ANTONYM_PAIRS = """
    before:after early:late earlier:later open:closed opens:closes allowed:forbidden
    allow:forbid allows:forbids permitted:prohibited required:optional mandatory:optional
    enabled:disabled enable:disable on:off true:false yes:no start:stop starts:stops
    include:exclude includes:excludes included:excluded accept:reject accepted:rejected
    more:less most:least increase:decrease increased:decreased higher:lower high:low
    maximum:minimum max:min first:last public:private inside:outside above:below
    over:under up:down add:remove added:removed keep:drop keeps:drops always:never
    everyone:nobody everything:nothing must:may supported:unsupported deprecated:recommended
    synchronous:asynchronous sync:async local:remote manual:automatic manually:automatically
    avant:après tôt:tard ouvert:fermé autorisé:interdit obligatoire:facultatif plus:moins
    toujours:jamais premier:dernier activé:désactivé
    prima:dopo presto:tardi aperto:chiuso permesso:vietato obbligatorio:facoltativo più:meno
    primo:ultimo attivato:disattivato
"""
ANTONYMS: frozenset[frozenset[str]] = frozenset(
    frozenset(pair.split(":")) for pair in _ANTONYM_PAIRS.split()
)
WEEKDAYS = word_set(
    """
    monday tuesday wednesday thursday friday saturday sunday weekday weekdays weekend
    weekends lundi mardi mercredi jeudi vendredi samedi dimanche lunedì martedì mercoledì
    giovedì venerdì sabato domenica lunedi martedi mercoledi giovedi venerdi
    """
)
MONTHS = frozenset(MONTH_NUMBERS)
NUMBER_WORDS = word_set(
    """
    zero one two three four five six seven eight nine ten eleven twelve fifteen twenty
    thirty forty fifty sixty hundred thousand half quarter twice once noon midnight un une
    deux trois quatre cinq six sept huit neuf dix onze douze quinze vingt trente quarante
    cinquante cent mille demi demie midi minuit uno una due tre quattro cinque sei sette
    otto nove dieci undici dodici quindici venti trenta quaranta cinquanta cento mille mezzo
    mezza mezzogiorno mezzanotte
    """
)
#: Verbs and adverbs that reword without changing a claim ("keeps deploying" / "is
#: deployed automatically"): not counted as a swapped word.
_LIGHT = word_set(
    """
    keeps keep kept gets get got goes made makes make does done being been have having also
    just then still really actually automatically usually simply always generally
    """
)
#: Words too common to name a note's subject even when its title has them.
_WEAK_NAMES = word_set(
    """
    the a an of to in on for and or with from by at how what why when use using guide notes
    note page intro introduction overview reference docs documentation about faq readme
    index le la les de des du et pour avec sur il lo gli di del della e per con
    """
)


def tokens(text: str) -> list[str]:
    """Words and numbers, case folded, accents kept, apostrophes split ("l'eau" → "eau")."""
    text = unicodedata.normalize("NFC", text).replace("’", "'")
    out: list[str] = []
    for w in _TOKEN.findall(text):
        w = w.casefold()
        if "'" in w:
            head, _, tail = w.partition("'")
            if tail == "t":  # don't, isn't: keep the negation visible
                out.extend([head, "n't"])
                continue
            w = tail or head
        out.append(w)
    return out


def subject_words(*names: str) -> frozenset[str]:
    """The words that name a note's subject: its title, aliases, file name — less the
    words too common to name anything ("guide", "the", "how")."""
    words: set[str] = set()
    for name in names:
        for part in [*re.split(r"[-_/.]", name), name]:
            words.update(tokens(part))
    return frozenset(w for w in words if w not in _WEAK_NAMES and len(w) > 1)


def code_names(quote: str) -> frozenset[str]:
    """Words inside the inline code of a sentence as written (a command, a file, an option)."""
    return frozenset(w for m in _CODE.finditer(quote) for w in tokens(m.group(1)))


def _is_value(word: str) -> bool:
    return word[0].isdigit() or word in NUMBER_WORDS or word in WEEKDAYS or word in MONTHS


@dataclass(frozen=True)
class Alignment:
    kind: Kind
    #: Share of the two sentences' words in matching blocks (0–1).
    shared: float
    #: Words only in a / only in b (in order).
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    #: The quantities of the two sentences compared as numbers (either kind of pair).
    values: Comparison = "none"
    #: One sentence negates and the other does not (aligned or not).
    negation_differs: bool = False

    @property
    def candidate(self) -> bool:
        """The frame is shared and what differs can change a claim."""
        return self.kind in ("value", "negation", "quantifier", "antonym", "swap")


#: Function words found in one of the three languages only (none shared with another:
#: not "le", "il", "qui", "non", "per", "come", "ma", "on"), after :func:`tokens`.
LANGUAGE_WORDS = {
    "en": word_set(
        """
        the and is are was were of to with that this for it be have has from by we you they
        not an will would which my our your their what when there been had does did
        """
    ),
    "fr": word_set(
        """
        les des du une est sont et avec pour dans pas sur mais nous vous cette au aux je
        elle ils très comme chaque sans avant après leur été ces ses mon mes ai suis fait
        """
    ),
    "it": word_set(
        """
        gli della delle dei degli che è sono con nel nella una anche questa questo sempre ho
        alla alle allo più poi dopo prima ogni sul sulla fatto mio mia già ancora
        """
    ),
}


def language(text: str) -> str | None:
    """The language a sentence is written in (``en``, ``fr``, ``it``), or None when its
    function words do not say clearly: at least two of one language's and at most a
    third as many of any other's."""
    words = tokens(text)
    hits = sorted(
        ((sum(w in marks for w in words), lang) for lang, marks in LANGUAGE_WORDS.items()),
        reverse=True,
    )
    (best, lang), (second, _) = hits[0], hits[1]
    return lang if best >= 2 and second * 3 <= best else None


def align(
    text_a: str,
    text_b: str,
    *,
    names_a: Iterable[str] = (),
    names_b: Iterable[str] = (),
) -> Alignment:
    """Align two sentences and say what differs. ``names_a`` / ``names_b``: the words that
    name each sentence's own subject (:func:`subject_words`, :func:`code_names`)."""
    ta, tb = tokens(text_a), tokens(text_b)
    values = compare_quantities(text_a, text_b)
    if not ta or not tb:
        return Alignment("apart", 0.0, values=values)
    lang_a, lang_b = language(text_a), language(text_b)
    if lang_a and lang_b and lang_a != lang_b:
        # Neither the embedder nor the judge reads across languages: a French journal line
        # and an Italian one share a cosine by their shape, not by what they say.
        return Alignment("languages", 0.0, values=values)
    matcher = SequenceMatcher(None, ta, tb, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    shared = 2 * matched / (len(ta) + len(tb))
    only_a: list[str] = []
    only_b: list[str] = []
    swapped: list[tuple[set[str], set[str]]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            only_a.extend(ta[i1:i2])
            only_b.extend(tb[j1:j2])
        if op == "replace":
            swapped.append(_substituted(ta[i1:i2], tb[j1:j2]))
    if not only_a and not only_b:
        return Alignment("same", 1.0, values=values)
    diff_a, diff_b = set(only_a) - set(tb), set(only_b) - set(ta)
    diff = diff_a | diff_b
    kind: Kind
    na, nb = frozenset(names_a), frozenset(names_b)
    if shared < ALIGNED:
        kind = "apart"
    elif _pronoun_subject(ta) and _pronoun_subject(tb) and na - nb and nb - na:
        kind = "subject"  # "They require…" / "They don't require…": each note's own subject
    elif diff and _about_own_subjects(diff_a, diff_b, na, nb):
        kind = "subject"
    elif (diff_a & NEGATIONS) != (diff_b & NEGATIONS):
        kind = "negation"
    elif any(frozenset((x, y)) in ANTONYMS for x in diff_a for y in diff_b):
        kind = "antonym"
    elif diff & QUANTIFIERS:
        kind = "quantifier"
    elif any(_is_value(w) for w in diff):
        kind = "value"
    elif any(sa and sb for sa, sb in swapped):
        kind = "swap"
    else:
        kind = "wording"  # words added, dropped, inflected or moved
    negation = (set(ta) & NEGATIONS) != (set(tb) & NEGATIONS)
    return Alignment(kind, round(shared, 3), tuple(only_a), tuple(only_b), values, negation)


def _content(word: str) -> bool:
    return len(word) > 3 and word not in _LIGHT and not word[0].isdigit()


def _substituted(a: Sequence[str], b: Sequence[str]) -> tuple[set[str], set[str]]:
    """The content words of a replaced stretch that are not forms of a word on the other
    side (same first five letters: "deploys" / "deployed")."""
    ca = {w for w in a if _content(w)}
    cb = {w for w in b if _content(w)}
    stems_a, stems_b = {w[:5] for w in ca}, {w[:5] for w in cb}
    return {w for w in ca if w[:5] not in stems_b}, {w for w in cb if w[:5] not in stems_a}


def _names_only(diff: set[str], names: frozenset[str]) -> bool:
    """Every content word that differs on this side names a subject in ``names`` (a side
    with no differing word counts: "Bear export" / "export"); a word names it when it is a
    form of a name word ("group" / "Grouping", "sorts" / "Sorting")."""
    content = {w for w in diff if len(w) > 2 and w not in _WEAK_NAMES}
    return all(
        w in names
        or any(
            len(n) >= 4 and w[:4] == n[:4] and (w in n or n in w or w[:5] == n[:5]) for n in names
        )
        for w in content
    )


def _about_own_subjects(
    diff_a: set[str], diff_b: set[str], names_a: frozenset[str], names_b: frozenset[str]
) -> bool:
    """What differs names each note's own subject ("Import from Notion" / "Import from
    Evernote"), or each names the other note ("the same checkboxes as [[B]]" in A, "as
    [[A]]" in B: two pages pointing at each other)."""
    own = _names_only(diff_a, names_a) and _names_only(diff_b, names_b)
    crossed = _names_only(diff_a, names_b) and _names_only(diff_b, names_a)
    return own or crossed


#: Pronouns that stand for what a note is about when they open a sentence.
_PRONOUNS = word_set(
    """
    it they this these its their il elle ils elles cela ceci esso essa essi esse questo
    questa questi queste
    """
)


def _pronoun_subject(tokens_: Sequence[str]) -> bool:
    return bool(tokens_) and tokens_[0] in _PRONOUNS


def frame(text: str, names: Iterable[str]) -> str:
    """The sentence with its note's own names and its values masked: what a template
    repeated across notes has in common ("import from _ converts your _ export…")."""
    masked = set(names)
    out: list[str] = []
    for w in tokens(text):
        tok = "_" if (w in masked or w[0].isdigit()) else w
        if not (out and out[-1] == "_" and tok == "_"):
            out.append(tok)
    return " ".join(out)

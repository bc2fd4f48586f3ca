"""Stop words: the function words of the vault's languages (English, French, Italian).

One list per language, and every reader of content words takes them from here: the
scan (which sentences say enough to be evidence), full-text search (which query words
are searched), snippets (which words are marked), ingest (key sentences, overlap,
support) and memory (support of a fact by its cited lines). A reader that must
ignore more words for its own purpose adds them next to itself, saying why.

A list holds articles, pronouns and possessives, prepositions, conjunctions,
auxiliaries and modals, determiners and quantifiers, and adverbs that say nothing
about a subject ("also", "very", "still"). Negations (:data:`NEGATIONS`) are stop
words too: they say nothing about what a sentence is about, and the scan reads a
sentence's polarity apart (:mod:`desktop.flows.alignment`). Numbers ("one", "once")
and the order of events ("before", "after") are not stop words: a changed count or
order is what a contradiction or an invented detail is made of ("deploy after the
review" against "before the review").

A vault mixes languages note by note and nothing says which language a note is in,
so :data:`STOP_WORDS` is the union of the lists, less the few French and Italian
function words that are also English nouns (:data:`ENGLISH_NOUNS`): dropping "car"
or "son" from an English note loses its subject, while counting French "car"
("because") as a content word only adds one word to a French sentence.
"""

from __future__ import annotations

import re


def word_set(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text`` (word lists kept as readable text)."""
    return frozenset(text.split())


EN = word_set(
    """
    a an the and or but nor if then else so than that this these those there here
    of to in on at by for with from as into onto about over under again up down out off
    through via per while because
    is are was were be been being am do does did done doing have has had having will
    would shall should can could may might must
    it its it's itself i me my mine we us our ours you your yours he him his she her
    hers they them their theirs what which who whom whose when where why how
    all any each every some more most much many few both either neither other own same
    such only also just very too still yet now even ever really quite rather well yes
    there's let's
    """
)
FR = word_set(
    """
    le la les l un une des du de d au aux et ou mais donc or ni car que qu qui quoi dont
    où ce c cet cette ces ça cela ceci se s sa son ses leur leurs mon ma mes ton ta tes
    notre nos votre vos je j tu il elle on nous vous ils elles me m te t lui y en à a là
    dans par pour sur sous avec sans chez vers entre est sont était été être avoir ai as
    avons avez ont fait faire comme aussi bien plus moins très tout tous toute toutes si
    """
)
IT = word_set(
    """
    il lo la i gli le l un uno una e ed o ma se che chi cui di del dello della dei
    degli delle da dal dallo dalla dai dagli dalle a al allo alla ai agli alle in nel
    nello nella nei negli nelle su sul sullo sulla sui sugli sulle con per tra fra è
    sono era erano essere stato avere ho hai ha abbiamo avete hanno io tu lui lei noi
    voi loro mi ti si ci vi ne mio mia miei mie tuo tua suo sua nostro nostra vostro
    vostra questo questa questi queste quello quella come anche più meno molto poco
    quando dove perché già ancora sempre
    """
)
#: "not", "pas", "non": in every language's list (a sentence's polarity is read apart).
NEGATIONS = word_set("no not ne n pas non")

#: French and Italian function words that are English nouns ("AI" too): in no reader's list.
ENGLISH_NOUNS = word_set("car son era dove ai")

#: Every language together, negations included: a vault mixes languages note by note.
STOP_WORDS = (EN | FR | IT | NEGATIONS) - ENGLISH_NOUNS

_WORD = re.compile(r"\w+(?:'\w+)?", re.UNICODE)


def is_stop_word(word: str) -> bool:
    return word.casefold() in STOP_WORDS


def content_words(text: str) -> list[str]:
    """The words of ``text`` worth marking in a snippet; all of them if none is."""
    words = _WORD.findall(text)
    kept = [w for w in words if not is_stop_word(w)]
    return kept or words

"""Value-masked predicate frames: a clause with its values replaced by their type ("my manager is
⟨person⟩", "I report to ⟨person⟩ now"), so that two wordings of one attribute can be compared by a
sentence embedder (the caller's) or by their content words, whatever values they hold."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from functools import lru_cache

from app.claims import lexicon as lx
from app.claims.model import Value

# the placeholder of a name, by the relation that names it (a manager is a person, a home a place)
_NAME_KIND = {"manager": "person", "address.home": "place", "employer": "organisation"}
_PLACEHOLDER = re.compile(r"⟨[a-z]+⟩")
_EN_PRONOUNS = {"we": "i", "us": "me", "our": "my", "ours": "mine", "ourselves": "myself", "i'm": "i am"}
_ZH_PRONOUNS = re.compile(r"我们|咱们|用户")  # 用户: the speaker, as the distiller writes it
_EN_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_CAPITALISED = re.compile(r"(?<=[a-z,;:] )(?!I\b)[A-Z][a-z][\w\-]*(?:\s+[A-Z][a-z][\w\-]*)*")


def placeholder(value: Value, head: str = "") -> str:
    """The type of `value` as a frame writes it: ⟨amount⟩, ⟨weekday⟩, ⟨person⟩ …"""
    if value.type == "name":
        return f"⟨{_NAME_KIND.get(head, 'name')}⟩"
    if value.type == "quantity" and value.unit == "time":
        return "⟨duration⟩"
    if value.type == "text" and value.unit == "size":
        return "⟨size⟩"
    return f"⟨{value.type}⟩"


def mask(clause: str, values: Iterable[Value], zh: bool, head: str = "") -> str:
    """`clause` with each value replaced by its placeholder, other names by ⟨name⟩ and the speaker's
    pronouns in the singular ("we" → "i", 我们 → 我)."""
    text = clause.strip()
    # longest first; of values said by the same words, the first given (the claim's own) names the placeholder
    for value in sorted(dict.fromkeys(v for v in values if v.text.strip()), key=lambda v: -len(v.text)):
        text = text.replace(value.text, placeholder(value, head))
    if zh:
        return _ZH_PRONOUNS.sub("我", text).rstrip("。！？!?.")
    text = _CAPITALISED.sub("⟨name⟩", text)
    words = [_EN_PRONOUNS.get(w.lower(), w.lower()) if not w.startswith("⟨") else w for w in text.split()]
    return " ".join(words).rstrip(".!?")


@lru_cache(maxsize=16_384)
def tokens(frame: str, zh: bool) -> frozenset[str]:
    """The content words of a frame (English stems, jieba words), its placeholders and function words
    left out: what two frames' overlap is counted on."""
    text = _PLACEHOLDER.sub(" ", frame)
    if zh:
        return frozenset(
            w
            for w, flag in zh_words(text)
            if w.strip() and w not in lx.ZH_NOISE and flag[:1] not in ("x", "u", "p", "c", "y", "e", "m", "q")
        )
    return frozenset(
        stem(w) for w in (t.lower() for t in _EN_TOKEN.findall(text)) if w not in lx.EN_NOISE | lx.EN_SELF
    )


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two frames' content words (0 when either has none)."""
    return len(a & b) / len(a | b) if a and b else 0.0


def nounish(word: str) -> bool:
    """Whether an English word can narrow an attribute as a noun: one with a noun reading, or a word
    the lemma table does not know (API, DB, a product)."""
    known = lemmas(word)
    return not known or "NOUN" in known or "PROPN" in known


# Words after which an English word that may be a noun or a verb is a verb ("I *pay*", "we *ship*",
# "to *run*"), or a noun ("my *pay*", "the *run*"); after a noun, a verb when a preposition, an
# article or a number follows ("the renovation *starts* on …"), else a noun of a compound.
_BEFORE_VERB = frozenset(
    """i we you they he she it who that which to will would can could should must may might do does did
    don't doesn't didn't won't can't have has had 've 'd 'll also now still just usually always often
    never rarely sometimes only already currently mostly mainly then i'm we're you're they're he's she's
    am are is was were be been""".split()
)
_BEFORE_NOUN = frozenset(
    "a an the my our your his her their its this that these those each every some any no per".split()
)
_OPENS_OBJECT = _BEFORE_NOUN | frozenset("me us him them it".split())
_OBJECT_OF = frozenset("for on of about with".split())
# what ends a noun phrase: an auxiliary or copula, a preposition
_PHRASE_ENDS = frozenset(
    """is are was were has have had does do did will would can could should 's in on at for to from with
    by of into about""".split()
)
# what opens a verb's object or adjunct: an article, a possessive, a preposition
OBJECT_OPENERS = _BEFORE_NOUN | frozenset("in on at for to from with by of into about".split())
_AFTER_VERB = frozenset(
    """a an the my our your his her their in on at for to from with by of into about every each
    around after before until since""".split()
)


@lru_cache(maxsize=65_536)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """The lemma table's readings of a word (cached: a bank's words repeat)."""
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word.lower()))


def en_nouns(words: list[str]) -> list[bool]:
    """Which of the words (in order, lower case) are nouns: by the lemma table when it knows one
    reading, by position when it knows both (a tiny tagger: no parser ships offline)."""
    flags: list[bool] = []
    in_phrase = False  # after a determiner, before the phrase's verb or preposition
    for i, word in enumerate(words):
        known = lemmas(word)
        noun, verb = "NOUN" in known or "PROPN" in known or not known, "VERB" in known
        after = words[i + 1] if i + 1 < len(words) else ""
        if words[max(0, i - 2) : i] == ["the", "user"]:
            in_phrase = False  # the speaker as the distiller names them stands as a pronoun ("the user quit")
        if in_phrase and not noun and "AUX" not in known and word not in _AFTER_VERB:
            # "the *staging* *deploy* is …", "my *desktop* has …": inside a noun phrase, a word the
            # table knows only as a verb or an adjective is the phrase's, up to its verb
            noun = after in _PHRASE_ENDS or not after or lemmas(after).keys() <= {"VERB"}
            # ...and so is a gerund before a noun ("our *staging* database", "my *running* shoes")
            noun = noun or (word.endswith("ing") and "NOUN" in lemmas(after))
        if not noun and i and words[i - 1] in _OBJECT_OF and (not after or after in _PHRASE_ENDS):
            noun = True  # a preposition's object ending its phrase is a noun ("45 a month for broadband")
        if noun and verb:
            before = "i" if words[max(0, i - 2) : i] == ["the", "user"] else words[i - 1] if i else ""
            if before in _BEFORE_VERB or (not before and after in _OPENS_OBJECT):
                noun = False  # "I pay …"; "Stop the digest", "Send me …" (an imperative)
            elif before in _BEFORE_NOUN or before in _AFTER_VERB or not before or before.endswith("'s"):
                noun = True  # "my pay", "of RAM", "the user's mentor"
            elif flags and flags[-1]:
                noun = not (after in _AFTER_VERB or after[:1].isdigit() or not after)
        flags.append(noun)
        if word in _BEFORE_NOUN:
            in_phrase = True
        elif in_phrase and (not noun or word in _AFTER_VERB):
            in_phrase = False
    return flags


ZH_NOUN_FLAGS = ("n", "nr", "ns", "nt", "nz", "ng", "nrt", "nrfg", "nw", "vn", "eng", "j", "an", "t", "s")


# A Snowball stemmer keeps the word it works on in its own fields: one per thread (claims are read in
# the request's worker threads, several at once)
_PER_THREAD = threading.local()


def _stemmer() -> object:
    stemmer = getattr(_PER_THREAD, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _PER_THREAD.stemmer = snowballstemmer.stemmer("english")
    return stemmer


@lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word.lower()))  # type: ignore[attr-defined]


def zh_words(text: str) -> list[tuple[str, str]]:
    """jieba's (word, part of speech) pairs of a text (a clause's cached: it is read several times)."""
    return list(_zh_words(text) if len(text) <= 200 else _zh_cut(text))


@lru_cache(maxsize=8_192)
def _zh_words(text: str) -> tuple[tuple[str, str], ...]:
    return _zh_cut(text)


def _zh_cut(text: str) -> tuple[tuple[str, str], ...]:
    import jieba.posseg

    from app.text import pos_tag

    pos_tag("")  # jieba initialised once, quietly
    return tuple((p.word, p.flag) for p in jieba.posseg.cut(text))

"""English verbs and subjects, read with lemminflect as a light part-of-speech tagger (issue 32): whether a
word is a finite verb, a base form, a plural noun or a subject pronoun, and the subject (with its auxiliary)
that a coordinated predicate shares ("I've reset the password and sent a link" → "I've sent a link")."""

from __future__ import annotations

import re
from functools import lru_cache

from app.distill.heuristic.person import _inflect

AUX = frozenset(
    """am is are was were be been being 'm 're 's have has had 've do does did can can't cannot could couldn't
    will won't would wouldn't shall should shouldn't may might must need needs don't doesn't didn't isn't
    aren't wasn't weren't haven't hasn't 'll 'd""".split()
)
CONTRACTIONS = ("m", "re", "s", "ve", "ll", "d", "t")
WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


@lru_cache(maxsize=16384)
def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    """lemminflect's lemmas of a lower-case word by part of speech (cached: a hot spot)."""
    from lemminflect import getAllLemmas

    return dict(getAllLemmas(word))


@lru_cache(maxsize=8192)
def can_be_verb(word: str) -> bool:
    lower = word.lower()
    if lower in AUX or ("'" in lower and lower.split("'", 1)[1] in CONTRACTIONS):
        return True
    from lemminflect import getAllLemmas

    _inflect()  # lemminflect loaded once, as the person module does
    readings = getAllLemmas(lower)
    return "VERB" in readings or "AUX" in readings


# Words after which an inflected form is a noun ("three times", "by parts", "the drains"), not a verb
NOMINAL_BEFORE = frozenset(
    """a an the my our your his her their its this that these those some any no every each all both of in on
    at by for with to from into over under about per than as one two three four five six seven eight nine
    ten few many several""".split()
)
# A subject that needs no verb test: a pronoun (or its contraction: "she's", "they'd") opens a clause
PRONOUN_OPENERS = frozenset(
    """i we you he she they it there nobody somebody someone everyone everybody nothing something
    everything""".split()
)


def pronoun_opens(word: str) -> bool:
    """Whether `word` is a subject pronoun, alone or with its contracted auxiliary ("I'm", "she's")."""
    lower = word.lower()
    base, _, rest = lower.partition("'")
    return base in PRONOUN_OPENERS and (not rest or rest in CONTRACTIONS)


# An imperative: a verb, then where its object starts ("Book it", "Send the quote", "Keep me posted")
OBJECT_START = frozenset(
    """it me us them him her my our the a an this that these those all up out off back in on to""".split()
)


def finite_at(words: list[str], index: int) -> bool:
    """Whether `words[index]` is a finite verb: an auxiliary, or an inflected verb form ("drains",
    "arrived") not read as a noun by the word before it ("three times", "by parts")."""
    word = words[index].lower()
    if word in AUX or ("'" in word and word.split("'", 1)[1] in CONTRACTIONS):
        return True
    if index and plural_noun(words[index - 1]) and base_verb(word):
        return True  # a plural subject's present tense: "the charts work better", "my kids love it"
    return inflected_verb(word) and (index == 0 or words[index - 1].lower() not in NOMINAL_BEFORE)


@lru_cache(maxsize=8192)
def plural_noun(word: str) -> bool:
    """Whether `word` is a noun's plural ("charts", "kids"), a subject a base-form verb agrees with."""
    lower = word.lower()
    nouns = lemmas(lower).get("NOUN") or ()
    return bool(nouns) and lower.endswith("s") and nouns[0] != lower


@lru_cache(maxsize=8192)
def base_verb(word: str) -> bool:
    """Whether `word` is a verb's base form and reads as nothing but a verb or a noun ("work", "love")."""
    readings = lemmas(word)
    return word in readings.get("VERB", ()) and not {"ADJ", "ADV", "ADP"} & set(readings)


def negated_imperative(text: str) -> bool:
    """Whether `text` opens with a negated imperative: "don't restart it", "do not call", "never book"."""
    words = [w.lower() for w in WORD.findall(text)[:3]]
    skip = 2 if words[:2] == ["do", "not"] else int(words[:1] in (["don't"], ["never"]))
    return bool(skip) and len(words) > skip and base_verb(words[skip])


@lru_cache(maxsize=8192)
def inflected_verb(word: str) -> bool:
    from lemminflect import getAllLemmas

    lower = word.lower()
    verbs = getAllLemmas(lower).get("VERB")
    return bool(verbs) and verbs[0] != lower and not lower.endswith("ing")


_BE = frozenset("am is are was were 'm 're 's".split())
_HAVE = frozenset("have has had 've".split())
_MODAL = frozenset("will 'll would can could should must may might do does did".split())
# Words that open a noun phrase subject ("the printer", "my son", "our VPN"), beside a name or a number
_DETERMINERS = frozenset("the a an my our your his her their this that these those its".split())
# Subjects a base-form verb agrees with ("I'm 34 and have asthma" → "I have asthma")
PLAIN_SUBJECTS = frozenset("i we you they".split())
# An object that only points back ("…and loved it"): the predicate says nothing of its own
_EMPTY_OBJECT = frozenset("it that this them so much too a lot".split())


@lru_cache(maxsize=8192)
def _form(word: str, tag: str) -> bool:
    """Whether `word` is the `tag` form (VBN, VBD, VBZ) of one of its verb lemmas."""
    from lemminflect import getInflection

    return any(word in getInflection(lemma, tag=tag) for lemma in lemmas(word).get("VERB", ()))


def _subject(first: str) -> tuple[str, str, str] | None:
    """The clause's subject as said with its auxiliary ("I've", "the printer is"), the bare subject, and
    the auxiliary in lower case ("" for none); None when it opens with no subject (an imperative)."""
    found = list(WORD.finditer(first))
    if not found:
        return None
    head = found[0].group()
    if pronoun_opens(head):
        base, _, rest = head.partition("'")
        if rest:
            return head, base, "'" + rest.lower()
        if len(found) > 1 and found[1].group().lower() in AUX:
            return first[: found[1].end()], head, found[1].group().lower()
        return head, head, ""
    if not (head.lower() in _DETERMINERS or head[:1].isupper() or first[:1].isdigit()):
        return None
    words = [m.group() for m in found]
    for i in range(1, min(len(words), 6)):
        if finite_at(words, i):
            subject = first[: found[i].start()].strip()
            aux = words[i].lower() if words[i].lower() in AUX else ""
            return (first[: found[i].end()] if aux else subject), subject, aux
    return None


def carried_subject(first: str, second: str) -> str | None:
    """The second part of "X and Y" as a clause with X's subject, and its auxiliary where Y's verb form
    needs one ("I'm vegetarian and allergic to nuts", "I've reset it and sent a link", "The X1 has a
    big screen and weighs 2 kg"); None when Y is no predicate of its own (it says nothing but "it")."""
    words = WORD.findall(second)
    subject = _subject(first)
    if not words or subject is None:
        return None
    said, bare, aux = subject
    rest = [w.lower() for w in re.findall(r"[\w'.-]+", second)[1:]]
    if not any(w[:1].isdigit() or (w not in _EMPTY_OBJECT and len(w) > 2) for w in rest):
        return None
    head = words[0].lower()
    verb = "VERB" in lemmas(head)
    if aux in _BE and (head.endswith("ing") or not verb or _form(head, "VBN")):
        return f"{said} {second}"  # a complement, a progressive, a passive: the copula goes with it
    if (aux in _HAVE and _form(head, "VBN")) or (aux in _MODAL and base_verb(head)):
        return f"{said} {second}"
    if verb and not head.endswith("ing") and inflected_verb(head):
        return f"{bare} {second}"  # a finite verb of its own: "…and weighs 2 kg"
    if base_verb(head) and bare.lower() in PLAIN_SUBJECTS:
        return f"{bare} {second}"
    return None


def coordinated_request(first: str, second: str) -> bool:
    """Whether "X and Y" joins two requests: X opens with "please" or a verb, Y with a verb's base form
    ("Please send the invoice and cancel the order", "Call me at six and keep it short")."""
    opening = WORD.findall(first)[:1]
    words = WORD.findall(second)
    if not opening or not words or _subject(first) is not None:
        return False
    lead = opening[0].lower()
    opens_request = lead == "please" or (base_verb(lead) and "NOUN" not in lemmas(lead))
    return opens_request and base_verb(words[0].lower()) and len(words) > 1


# Verbs of a state, not a step: their perfect tells how long a state has lasted ("I've had asthma since
# I was six", "we've lived here for years"), or what was perceived
STATIVE = frozenset(
    """be have live know own like love hate want need seem belong contain cost weigh mean use work stay
    notice see hear feel find think believe understand remember forget wonder get""".split()
)
_PERFECT = re.compile(
    r"\b(?:have|has|'ve|had)(?:n't| not)?\s+(?:(?:already|just|now|also|finally)\s+)?(?:been\s+)?([a-z]+)\b"
    r"|\b(?:is|are|was|were)\s+(?:already|now|just)\s+([a-z]+)\b",
    re.IGNORECASE,
)
_LASTING = re.compile(r"\b(?:never|always|ever|since|for (?:\d+|a|many|several|years|months))\b", re.I)


def perfective(text: str) -> bool:
    """Whether the clause reports a step done: a perfect or an "already" passive of a verb of doing ("I've
    restarted the router", "the ticket has been escalated", "it's already deployed"), not a state's
    duration ("I've had it for years", "we've always used Slack")."""
    if _LASTING.search(text):
        return False
    for match in _PERFECT.finditer(text):
        word = (match.group(1) or match.group(2)).lower()
        verbs = lemmas(word).get("VERB", ())
        if verbs and _form(word, "VBN") and not STATIVE & set(verbs) and not word.endswith("ing"):
            return True
    return False


_BE_FORMS = frozenset("am is are was were be been re s m".split())
# ...and after a determiner a participle is an adjective ("a terraced house", "my used car")
_BEFORE_NO_PAST = (
    _BE_FORMS | {"have", "has", "ve"} | set("a an the my our your his her their this that".split())
)


@lru_cache(maxsize=4096)
def past_verb(word: str) -> bool:
    """Whether `word` is a past-tense form of a verb ("arrived", "broke")."""
    from lemminflect import getAllLemmas, getInflection

    lower = word.lower()
    lemmas = getAllLemmas(lower).get("VERB")
    if not lemmas or lemmas[0] == lower:
        return False
    return lower in getInflection(lemmas[0], tag="VBD")


def is_past(text: str) -> bool:
    """A happening in the past tense: a past verb among the first words (a past copula describes: "it
    was tough" is no event)."""
    # a participle after a copula is a state ("we're based in Lyon"); after "have" a present perfect, a
    # step done (`perfective`) or a state ("we've got a membership", "I've lived here for years"); after a
    # determiner an adjective ("a terraced house")
    # a present "have" or copula said first makes a later participle part of a noun phrase ("I have a
    # hamster called Biscuit", "we are a team based in Lyon"): the clause is of the present
    words = re.findall(r"[A-Za-z]+", text)
    for i, w in enumerate(words[1:6], 1):
        if w.lower() in _PRESENT_FIRST:
            return False
        if past_verb(w) and w.lower() not in ("was", "were") and words[i - 1].lower() not in _BEFORE_NO_PAST:
            return True
    return False


_PRESENT_FIRST = frozenset("am is are have has".split())

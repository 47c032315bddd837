"""What a claim is about, apart from its wording: its topic (the nouns that narrow its attribute: "the
*API* *timeout*", 车险) and, when it names none, its main verb ("I *run* 5 km", 我每周*游泳*两次)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.frames import en_nouns, lemmas, stem, zh_words
from app.claims.modality import retirement

_WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*")
_AUXILIARIES = frozenset(
    """be is are was were am 'm 're been being have has had 've do does did will would shall should can
    could may might must get got go goes going went""".split()
)


_ZH_FUNCTION = ("r", "p", "u", "m", "q", "d", "c", "y", "e", "o", "x", "f", "t")  # t: 早上, 今天


def topic(qualifier: list[str], clause: str, value: str, zh: bool) -> frozenset[str]:
    """The words narrowing what the clause is about: English qualifiers (nouns already); in Chinese,
    where the topic comes first and jieba's noun tags are unreliable, the content words said before
    the value (车险 in 车险3月续保, 发布窗口 in 我们的发布窗口是…)."""
    if not zh:
        return frozenset(qualifier)
    at = clause.find(value) if value else -1
    # a change word is no topic, whatever jieba joins it to (下个月起涨到 → 起涨)
    lead = lx.ZH_CHANGE.sub(" ", clause[:at]) if at > 0 else ""
    return frozenset(
        w
        for w, flag in zh_words(lead)
        if not flag.startswith(_ZH_FUNCTION)
        and w not in lx.ZH_NOISE
        and w not in lx.ZH_PEOPLE
        and w not in lx.ZH_GENERIC_VERBS
        and len(w) >= 2
    )


def main_verb(text: str, zh: bool) -> str:
    """The clause's first full verb, as a lemma (English) or a word (Chinese); empty when it has none."""
    if zh:
        for word, flag in zh_words(text):
            if flag.startswith("v") and word not in lx.ZH_NOISE and word not in lx.ZH_GENERIC_VERBS:
                return word
        return ""
    words = [w.lower() for w in _WORD.findall(text)]
    for word, noun in zip(words, en_nouns(words), strict=True):
        readings = lemmas(word)
        if not noun and "VERB" in readings and word not in _AUXILIARIES and word not in lx.EN_NOISE:
            return readings["VERB"][0]
    return ""


_DETERMINERS = frozenset("a an the my our your his her their this that these those some any".split())
# "have" and "get" as full verbs, before what they hold ("we have a dog", "I get a coffee box every
# month"): possession, not an auxiliary ("have moved", "got to", "have to")
_POSSESSION = frozenset("have has had 've get gets got".split())
_COUNTS = frozenset("one two three four five six seven eight nine ten".split())
_OBJECT_ENDS = frozenset(
    """in on at for to from with by of into about every each per before after during since until
    because when while if unless and or but so than as""".split()
)


_PREPOSITION_OBJECTS = frozenset("on in at with for into onto".split())


def en_object(text: str, prepositional: bool = False) -> str:
    """The object of an English clause's main verb ("I take *oat milk* in my coffee", "we ship *the
    mobile app*"): the words after the verb up to a preposition, a conjunction or the end (at most five);
    empty when the clause has no full verb or it has no object. `prepositional`: a preposition right
    after the verb opens its object ("I sit on *the hiring committee*")."""
    words = _WORD.findall(text)
    low = [w.lower() for w in words]
    nouns = en_nouns(low)
    for i, (word, noun) in enumerate(zip(low, nouns, strict=True)):
        held = word in _POSSESSION and i + 1 < len(low) and low[i + 1] in _DETERMINERS | _COUNTS
        if not held and (noun or "VERB" not in lemmas(word) or word in _AUXILIARIES or word in lx.EN_NOISE):
            continue
        rest: list[str] = []
        after = words[i + 1 :]
        if prepositional and after and after[0].lower() in _PREPOSITION_OBJECTS:
            after = after[1:]
        for later in after:
            if later.lower() in _OBJECT_ENDS or later.lower() in lx.EN_CHANGE_WORDS:
                break
            rest.append(later)
        while rest and rest[0].lower() in _DETERMINERS:
            rest = rest[1:]
        return " ".join(rest) if 0 < len(rest) <= 5 else ""
    return ""


def retired_words(clause: str, zh: bool) -> list[str]:
    """The words naming what a retirement ends: the object of its verb ("I cancelled my *FitZone
    membership*"), or what comes before the verb when it has none ("the weekly *vendor sync* has been
    scrapped"); in Chinese the clause's content words (健身房的年卡我已经退了 → 健身房, 年卡)."""
    if zh:
        # the verb that ends it (卖掉了, 下线), not what it ends, however the words were cut
        said = lx.ZH_RETIRE.sub(lambda m: " " if len(m.group()) <= 3 else m.group(), clause)
        content = [
            w
            for w, flag in zh_words(said)
            if not flag.startswith(_ZH_FUNCTION) and w not in lx.ZH_NOISE and not lx.ZH_RETIRE.search(w)
        ]
        words = [w for w in _compounds(content, said) if len(w) >= 2]
        # a topic said before the speaker ("定投我已经停了"), whole however it was cut (定/投)
        fronted = _FRONTED_ZH.match(said)
        return words if not fronted or any(w in fronted[1] for w in words) else [fronted[1], *words]
    ends = retirement(clause, False)
    doing = _GERUND.match(clause, ends.end()) if ends else None
    if doing:  # "I stopped taking the pills", "the dogs stopped barking": the doing ends, not who did it
        done = _AFTER_OBJECT_EN.split(clause[doing.end() :], maxsplit=1)[0]  # its object, not when or why
        return _nouns([w.lower() for w in _WORD.findall(done)]) or [stem(doing.group(1).lower())]
    phrase = en_object(clause) or (clause[: ends.start()] if ends else "")
    words = [w.lower() for w in _WORD.findall(phrase)]
    if ends and not _nouns(words):
        # an adverb of ending before its verb ("I no longer have the cat"): what follows the verb ends
        words = [w.lower() for w in _WORD.findall(clause[ends.end() :])][1:]
    return _nouns(words)


_FRONTED_ZH = re.compile(r"\s*([\u4e00-\u9fff]{2,6}?)(?:我们|我|咱们)")


# what follows an object: when, why or the next clause
_AFTER_OBJECT_EN = re.compile(
    r"\b(?:in|on|at|since|after|before|because|last|this|yesterday|today|when|as|so|and|but)\b", re.I
)
_GERUND = re.compile(r"\s+([A-Za-z]{3,}ing)\b")


def ends_a_doing(clause: str, zh: bool) -> re.Match[str] | None:
    """The doing an English retirement ends ("stopped *barking*", "quit *smoking*"), if it ends one."""
    ends = None if zh else retirement(clause, False)
    return _GERUND.match(clause, ends.end()) if ends else None


def _nouns(words: list[str]) -> list[str]:
    """The stems of the nouns among `words`, less the speaker and words that name nothing."""
    return [
        stem(w)
        for w, noun in zip(words, en_nouns(words), strict=True)
        if noun and w not in lx.EN_NOISE and w not in lx.EN_SELF and len(w) > 2
    ]


def _compounds(words: list[str], clause: str) -> list[str]:
    """Adjacent content words joined where one is a single character: the dictionary did not know the
    compound (送奶 cut as 送 / 奶, 跳板机 as 跳板 / 机)."""
    out: list[str] = []
    end = -1
    for w in words:
        start = clause.find(w, max(end, 0))
        if out and start == end and (len(w) == 1 or len(out[-1]) == 1):
            out[-1] += w
        else:
            out.append(w)
        end = start + len(w) if start >= 0 else end
    return out

"""The words of a clause that name or narrow its attribute, and the attribute's head (a relation or a
canonical head noun)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from app.claims import heads
from app.claims import lexicon as lx
from app.claims.frames import en_nouns, stem, zh_words
from app.claims.model import Claim
from app.claims.subjects import moves_a_thing

WORD = re.compile(r"[A-Za-z][A-Za-z'\-]*|\d+")
TITLES_EN = frozenset("dr mr mrs ms prof".split())  # a person's title names no attribute


def frame_words(text: str, zh: bool, nouns: bool = False) -> list[str]:
    """The words of `text` that may name or narrow an attribute; with `nouns`, its nouns only."""
    if zh:
        words = [
            w
            for w, flag in zh_words(text)
            if flag[:1] not in ("m", "x", "u", "r", "p", "c", "y", "e", "o", "q", "t", "f")
            and not (flag.startswith("v") and (len(w) < 2 or w in lx.ZH_GENERIC_VERBS))
            and not (flag.startswith("d") and len(w) < 2)
        ]
        return [w for w in words if w not in lx.ZH_NOISE and not w.isdigit() and w.strip()]
    words = [w.lower() for w in WORD.findall(text)]
    noun = en_nouns(words) if nouns else [True] * len(words)
    return [
        stem(w)
        for w, is_noun in zip(words, noun, strict=True)
        if w not in lx.EN_NOISE and w not in lx.EN_SELF and w not in TITLES_EN and not w.isdigit() and is_noun
    ]


# Nouns of a change ("the upgrade", "the move", 升级, 搬家): what happened, never the thing a clause after
# them narrows its attribute by ("we completed the upgrade, every builder runs on Java 21 now")
CHANGE_NOUNS = frozenset(
    "upgrad downgrad migrat switch move chang updat transit renew swap replac reschedul 升级 迁移 搬家 调整 "
    "变更 更换 改签 涨价 降价 加价 调价".split()
)


def scene_words(clause: str, zh: bool) -> list[str]:
    """The words a clause with no value narrows the next one with ("For the laptop, …"); of a change
    said with no value (票我改签了, 我们搬家了), the nouns alone: the verb of change names no attribute."""
    words = [w for w in frame_words(clause, zh, nouns=True) if w not in CHANGE_NOUNS]
    if zh and lx.ZH_CHANGE.search(clause):
        nouns = {w for w, flag in zh_words(clause) if flag[:1] == "n" or flag == "eng"}
        words = [w for w in words if w in nouns]
    return words


def head_of(clause: str, frame: list[str], zh: bool) -> tuple[str, list[str]]:
    """The attribute's head (a relation of the closed class) and the words narrowing it; no relation, no
    head: every other attribute noun is compared by the frames it stands in."""
    for pattern, key in heads.RELATIONS_ZH if zh else heads.RELATIONS_EN:
        match = pattern.search(clause)
        if match and not (key == "address.home" and moves_a_thing(clause, zh)):
            return key, [w for w in frame if w not in heads.RELATION_WORDS]
    return "", frame


def slotted(claim: Claim, tags: Iterable[str]) -> Claim:
    """A claim with no head takes the one its unit's tag names ("如果配置能升级的话，可以到8000" tagged
    a budget is a budget): the tag slot is a hint about the attribute, never more than its head. A head
    whose slot holds a type of value the claim's is not names no attribute of it: words are no budget
    ("putting my budget together", 我在做家庭预算: what is being done, not how much); a retirement's
    value is what it ends, of any type."""
    slot = heads.TAG_HEAD_VALUES.get(claim.head)
    if slot and claim.modality != "retired" and claim.value.type not in slot:
        claim = replace(claim, head="", attribute="_".join(sorted(claim.qualifier)))
    head = next((heads.TAG_HEADS[t] for t in tags if t in heads.TAG_HEADS), "")
    if claim.head or not head or claim.value.type not in heads.TAG_HEAD_VALUES.get(head, ()):
        return claim
    qualifier = claim.qualifier - heads.RELATION_WORDS  # ("钱的话可以到…": money is the budget's own word)
    attribute = head + ("." + "_".join(sorted(qualifier)) if qualifier else "")
    return replace(claim, head=head, attribute=attribute, qualifier=qualifier)

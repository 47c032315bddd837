"""A user turn's claims read once, whole, and given to the units cut from it: a clause read alone loses
what its turn says around it (the thing a "换成…" clause changes, the person a second clause is about),
while the turn read whole carries it (`app.claims.extract` reads clause after clause). A unit whose text
brings words from other turns (a correction rewritten with the fact it corrects) keeps the claims of its
own text."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from app.claims import Claim, extract
from app.claims import lexicon as lx
from app.claims.stored import dump
from app.claims.values import fold
from app.text import has_cjk

# What the distiller writes in place of the speaker, and its date notes: no word from elsewhere
_SPEAKER_WORDS_EN = frozenset("the user user's users says said assistant their they them is are was".split())
_SPEAKER_CHARS_ZH = frozenset("用户说助手的他她")
_WORD_EN = re.compile(r"[a-z0-9']+")
# A conversational turn is read whole; a longer paste (a document, a log) is read unit by unit: reading a
# turn whole costs about half a millisecond a character, and what its clauses lean on is said close by.
READ_WHOLE_CHARS = 1_000


def _brings_words(content: str, turn: str) -> bool:
    """Whether `content` says words its turn does not (the speaker's name and date notes aside)."""
    body = lx.DATE_NOTE.sub("", content)
    if has_cjk(body):
        said = {ch for ch in body if "\u4e00" <= ch <= "\u9fff"} - _SPEAKER_CHARS_ZH
        return bool(said - set(turn))
    said = set(_WORD_EN.findall(body.lower())) - _SPEAKER_WORDS_EN
    return bool(said - set(_WORD_EN.findall(turn.lower())))


@lru_cache(maxsize=256)
def _turn_claims(turn: str, tags: tuple[str, ...]) -> tuple[Claim, ...]:
    return tuple(extract(turn, tags=tags))


def claims_from_turn(turn: str, clause: str, content: str, tags: list[str]) -> list[dict[str, Any]] | None:
    """The stored claims of the unit cut from `clause` of the user's `turn`: the turn's claims whose value
    the clause says; None (the unit's own text is read) when the turn is longer than a conversational one,
    the unit brings words from elsewhere or the clause says none of them."""
    if len(turn) > READ_WHOLE_CHARS or _brings_words(content, turn):
        return None
    said = fold(clause)
    mine = [c for c in _turn_claims(turn, tuple(tags)) if c.value.text and fold(c.value.text) in said]
    return [dump(c) for c in mine] or None

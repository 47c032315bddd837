"""Whether the words narrowing two claims' attributes (their qualifiers and topics) tell them apart: shared
words, one word's family, Chinese characters or two-character runs in common."""

from __future__ import annotations

from app.claims import lexicon as lx


def one_family(x: str, y: str) -> bool:
    """Whether one word is the other's family: a stem of four letters or more it opens with."""
    shorter, longer = sorted((x, y), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter)


def words_overlap(a: frozenset[str], b: frozenset[str]) -> bool:
    """Shared words, one word's family (the stem "edit" of "editor"), or for Chinese a shared
    two-character run (美国签证 ~ 签证)."""
    if a & b or any(one_family(x, y) for x in a for y in b):
        return True
    grams = {w[i : i + 2] for w in a if not w.isascii() for i in range(len(w) - 1)}
    return any(w[i : i + 2] in grams for w in b if not w.isascii() for i in range(len(w) - 1))


def qualifiers_differ(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether both sides are narrowed by nouns and share none (an invoice archive, an audit log): two
    attributes, however alike their frames. (Also telling apart "the invoice archive" from "the audit
    archive" by the nouns beside a shared one cost the dev half six changes: not done.)"""
    return bool(a and b) and not words_overlap(a, b)


def share_a_character(a: frozenset[str], b: frozenset[str]) -> bool:
    """Whether two sets of Chinese words share a character that is no function word, and not as the head
    (the last character) of both: 手机号 ~ 号码 and 体重 ~ 重量 may be one thing reworded, while 房贷 and
    车贷, or 信用卡 and 会员卡, are two kinds of one thing."""
    return any(
        ch not in lx.ZH_FUNCTION_CHARS and ch in y and not (x.endswith(ch) and y.endswith(ch))
        for x in a
        for y in b
        for ch in x
        if not ch.isascii()
    )

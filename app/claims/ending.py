"""What a retirement names and ends: the thing it names said in an old clause, the one-character topic
a Chinese retirement opens with, a negated verb that stops what an old clause does, and what an English
one ends in its own words for the embedder to compare."""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from app.claims.frames import stem
from app.claims.modality import retirement
from app.claims.model import Claim
from app.claims.values import fold
from app.text import has_cjk, pos_words

# A retirement naming nothing any candidate says ("I cancelled the streaming service", "gave away the
# bike") ends the claim whose value or frame is closest to what it ends (a streaming service ~ a Hulu
# plan, the bike ~ a Brompton) when that one is at least this close and ahead of every other claim by
# RETIRED_MARGIN. English only: the English-centric embedder scores any two Chinese phrases close (咖啡 ~
# 绿茶). Chosen on the dev half.
RETIRED_OBJECT = 0.3
RETIRED_MARGIN = 0.1


def retired_object(claim: Claim) -> str:
    """What an English retirement ends, in its own words (its nouns; else the value it names), for the
    embedder to compare: "" for a claim that retires nothing, and for a Chinese one."""
    if claim.modality != "retired" or not claim.text.isascii():
        return ""
    words = sorted(claim.topic or {w for w in claim.qualifier if not retirement(w, has_cjk(w))})
    return " ".join(words) or (claim.old_value.text if claim.old_value else "")


def said_in(word: str, text: str) -> bool:
    """Whether a word of a retirement is said in the old clause: itself, or for a short Chinese word
    all its characters (养猫 in 养了一只猫, 踢球 in 踢足球, 信用卡 in 招商银行的信用卡)."""
    if len(word) < 2:
        return False
    if word in fold(text):
        return True
    if word.isascii():  # a stem ("potteri") said as its word ("pottery")
        return any(stem(w) == word for w in re.findall(r"[A-Za-z]+", text))
    text = fold(text)
    # a Chinese word of three or more characters by a two-character part (健身卡 ~ 健身房的年卡)
    return (2 <= len(word) <= 4 and all(ch in text for ch in word)) or (
        len(word) >= 3 and any(word[i : i + 2] in text for i in range(len(word) - 1))
    )


# What opens a Chinese clause before its topic: the speaker, 把, a demonstrative and its measure word
_TOPIC_OPENING_ZH = re.compile(r"^(?:我们|我)?把?(?:那|这)?[个只辆条张台间套部件份头匹]?")


def _topic_words(retirement: str, n: int) -> list[tuple[str, str]]:
    """The first `n` words of a Chinese retirement from its topic on: past the conjunctions, adverbs and
    interjections it opens with (反正, 不过, 哦) and its opening (我把那辆)."""
    words = pos_words(retirement)
    skipped = next((i for i, (_, flag) in enumerate(words) if flag[:1] not in "cdey"), len(words))
    rest = "".join(w for w, _ in words[skipped:])
    return pos_words(_TOPIC_OPENING_ZH.sub("", rest, count=1))[:n]


@lru_cache(maxsize=1024)
def topic_noun(retirement: str) -> str:
    """The one-character noun a Chinese retirement opens with as its topic (猫, 车, 狗, 房), else "": one
    character names no compound for `said_in`, but as the clause's topic it is the thing (cached: a
    retirement meets every claim of every candidate)."""
    if not has_cjk(retirement):
        return ""
    words = _topic_words(retirement, 1)
    single = bool(words) and len(words[0][0]) == 1 and words[0][1].startswith("n")
    return words[0][0] if single else ""


# The measure words a kind of thing is counted by (一辆车, 两只猫, 一套房): a Chinese retirement naming the
# kind ("车上个月卖了", "房子卖掉了") ends what an old clause counted by them ("开那辆白色的思域",
# "有一套两居室")
_COUNTED_BY = {
    "车": "辆台",
    "猫": "只",
    "狗": "只条",
    "鸟": "只",
    "鱼": "条尾",
    "兔": "只",
    "马": "匹",
    "房": "套间栋",
    "船": "艘条",
}


_SHARED_MEASURES = Counter(m for measures in _COUNTED_BY.values() for m in measures)


def counted_kind(retirement: str, old: str) -> bool:
    """Whether a Chinese retirement opens with a kind of thing (车, 房子, 狗狗, not 车位 or 猫粮) that the old
    clause counts one of by its measure word, naming no other kind."""
    words = _topic_words(retirement, 2)
    kind = words[0][0][:1] if words else ""
    # (jieba reads 车上周 as 车上 and 周: a place word, never a compound noun)
    if kind not in _COUNTED_BY or (words[0][0] not in (kind, f"{kind}子", kind * 2) and words[0][1] != "s"):
        return False
    if len(words) > 1 and words[1][1] in ("n", "ng", "nz"):
        return False  # "猫粮": another thing, of the kind
    if any(other in old for other in _COUNTED_BY if other != kind):
        return False  # "两只猫" is no dog
    # (one counted without its numeral after a verb of having: 有辆车, 买了只猫); a measure word other kinds
    # share (只: cats, dogs, birds) counts this kind only where the clause names it
    own = "".join(m for m in _COUNTED_BY[kind] if kind in old or _SHARED_MEASURES[m] == 1)
    counted = rf"(?:[一两二三四五六七八九十几这那每]|[有买养开租][了过]?)[{own}]"
    return bool(own) and re.search(counted, old) is not None


def stops_doing(old: Claim, new: Claim) -> bool:
    """A Chinese retirement naming nothing but its negated verb (我现在不吃了, 不订了) stops what the old
    claim's verb did (每天吃一粒维生素D): its object dropped, as Chinese drops a known one."""
    negated = _NEGATED_VERB_ZH.search(new.text)
    named = {w for w in new.qualifier if not _NEGATED_VERB_ZH.fullmatch(w)}
    return negated is not None and not named and negated.group(1) in old.text


# a verb negated at the end of a Chinese clause (不喝了, 不再去了, 没吃了)
_NEGATED_VERB_ZH = re.compile(r"(?:不再|不|没再|没|别)([\u4e00-\u9fff])了?[。！!]?$")

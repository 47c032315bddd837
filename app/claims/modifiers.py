"""The nouns that modify a noun in a clause ("the *kitchen* renovation", "our *Berlin* office", 厨房装修,
儿子的游泳课): two claims that share a noun but modify it with different nouns speak of two things (the
kitchen's renovation is not the bathroom's), however alike the rest of their frames."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from app.claims import lexicon as lx
from app.claims.frames import nounish, stem, zh_words
from app.claims.model import Claim
from app.claims.periods import periods
from app.text import segment

_EN_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*(?:'s)?|\S")
_ZH_NOUN = ("n", "nr", "ns", "nt", "nz", "ng", "nrt", "nw", "vn", "eng", "j", "s")
_ZH_LINK = ("的", "之")
_GAP = "§"  # where a value stood: a value is never a modifier, and it breaks adjacency
# Adjectives that say which of several things of one kind ("the *outbound* train", "my *work* email", "the
# *back* door"): a closed class of classifiers, never of degree or of change ("new", "cheaper")
_CLASSIFIERS_EN = frozenset(
    "outbound inbound return front back side upstairs downstairs personal private business primary secondary "
    "backup spare main morning afternoon evening night weekday weekend daytime overnight left right upper "
    "lower domestic international indoor outdoor summer winter older younger elder eldest youngest".split()
)


def _masked(claim: Claim) -> str:
    text = claim.text
    values = [claim.value, *claim.mentions, *([claim.old_value] if claim.old_value else [])]
    for value in sorted({v.text for v in values if v.text.strip()}, key=len, reverse=True):
        text = text.replace(value, f" {_GAP} ")
    return text


def _en_noun(word: str, left: bool = False) -> bool:
    """A noun, or on the left a gerund or a classifier modifying one ("the *staging* database", "the
    *outbound* train")."""
    low = word.lower()
    return (
        word != _GAP
        and word[:1].isalpha()
        and low not in lx.EN_NOISE
        and low not in lx.EN_SELF
        and low not in lx.EN_PEOPLE
        and (nounish(low) or (left and (low.endswith("ing") or low in _CLASSIFIERS_EN)))
    )


# what stands before a verb, never before a noun modifying another: a subject pronoun, "to", a modal,
# an adverb
_VERB_BEFORE = re.compile(
    r"(?i:i|we|you|they|he|she|to|will|would|can|could|should|'ll|always|usually|often|never|also|just|\w+ly)"
)
_OF = frozenset("to for of from in at".split())


def _en_pairs(text: str) -> Iterable[tuple[str, str]]:
    words = _EN_WORD.findall(re.sub(r"\b(?:back|home)\s+from\b", "from", text, flags=re.IGNORECASE))
    for i in range(len(words) - 2):  # "the flight to Rome": a place or thing named after the noun
        noun, word, rest = words[i], words[i + 1], [w for w in words[i + 2 : i + 4] if w.lower() != "the"]
        if word.lower() in _OF and rest and _en_noun(noun) and rest[0][:1].isupper() and _en_noun(rest[0]):
            # (where it comes from is another thing than where it goes: "the flight back from Rome")
            yield stem(noun), ("from " if word.lower() == "from" else "") + stem(rest[0])
    for before, left, right in zip(["", *words], words, words[1:], strict=False):
        owner = left.endswith("'s")
        left = left.removesuffix("'s")
        if (
            not _VERB_BEFORE.fullmatch(before)  # "I *grab* coffee", "mostly *grab* coffee": a verb
            and _en_noun(left, left=True)
            and _en_noun(right.removesuffix("'s"))
            and (owner or not right[:1].isupper())
        ):
            yield stem(right.removesuffix("'s")), stem(left)


def _zh_pairs(text: str) -> Iterable[tuple[str, str]]:
    # a person owns a thing, a period times it (女儿的游泳课, 这学期的游泳课): whose and when are compared
    # as the subject and the period, never as a kind of the thing (as English's people, `_en_noun`)
    timed = "".join(periods(text))
    words = [(w, f) for w, f in zh_words(text) if w.strip()]
    for word, flag in words:  # a compound the dictionary holds whole: 用户服务 is 服务 modified by 用户
        parts = (
            [p for p in segment(word) if p != word] if len(word) >= 4 and flag.startswith(_ZH_NOUN) else []
        )
        if len(parts) == 2 and "".join(parts) == word:
            yield parts[1], parts[0]
    for i in range(1, len(words)):
        word, flag = words[i]
        # (jieba tags some heads a distinguishing word: 超时 in 接口超时)
        if not (flag.startswith(_ZH_NOUN) or (flag.startswith(("v", "b")) and len(word) >= 2)):
            continue
        j = i - 1
        if words[j][0] in _ZH_LINK and j > 0:
            j -= 1
        left, left_flag = words[j]
        # jieba tags many compounds' first part a verb (入住时间, 退房时间): any content word modifies
        content = left_flag.startswith(_ZH_NOUN) or left_flag.startswith(("v", "a"))
        owner = left in lx.ZH_PEOPLE or left in timed
        if content and len(left) >= 2 and left not in lx.ZH_NOISE and _GAP not in left and not owner:
            yield word, left


@lru_cache(maxsize=16_384)
def modifiers(claim: Claim, zh: bool) -> Mapping[str, str]:
    """Each noun of the claim's clause that another noun modifies, with that modifier (stems in
    English), values left out. Cached (read it, never change it): resolution compares a unit's claims
    with each candidate's, and a candidate's with every unit resolved near it."""
    text = _masked(claim)
    return dict(_zh_pairs(text) if zh else _en_pairs(text))


@lru_cache(maxsize=16_384)
def words(claim: Claim, zh: bool) -> frozenset[str]:
    """The claim's content words as modifiers are compared with (stems in English)."""
    if zh:
        return frozenset(w for w, _ in zh_words(claim.text))
    return frozenset(stem(w.removesuffix("'s")) for w in _EN_WORD.findall(claim.text) if w[:1].isalpha())


# A journey back (回来, 回程, 返程) and one out (去, 去程, 出发): two legs of a trip, never one thing
_BACK_ZH = re.compile(r"回来|回程|返程|返回")
_OUT_ZH = re.compile(r"去程|出发|(?<![回过])去(?!年|掉|除)")


def legs_apart(old: Claim, new: Claim) -> bool:
    """Whether one Chinese clause speaks of the way there and the other of the way back."""
    back = [_BACK_ZH.search(c.text) is not None for c in (old, new)]
    out = [_OUT_ZH.search(c.text) is not None for c in (old, new)]
    return back[0] != back[1] and (out[0] if back[1] else out[1])


# Verbs that open a span of time and verbs that close one: when a thing starts and when it ends are two
# attributes ("the gym opens at 6", "the gym closes at 10"; 会议9点开始, 会议11点结束)
_STARTS = "open start begin depart launch commence 开门 开始 出发 起飞 上班 开业"
_ENDS = "close shut end finish arrive land conclude 关门 结束 到达 降落 下班 打烊"
_SPAN_SIDES = {**dict.fromkeys(_STARTS.split(), "start"), **dict.fromkeys(_ENDS.split(), "end")}


def ends_apart(old: Claim, new: Claim) -> bool:
    """Whether one claim's verb opens a span and the other's closes it."""
    sides = {_SPAN_SIDES.get(old.verb), _SPAN_SIDES.get(new.verb)}
    return sides == {"start", "end"}


def modified_apart(old: Claim, new: Claim, zh: bool) -> bool:
    """Whether the two claims modify a noun they share with different nouns, neither of which the other
    claim says at all: "the kitchen renovation" and "the bathroom renovation", 北京办公室 and 上海办公室;
    or one says where a span starts and the other where it ends."""
    if (zh and legs_apart(old, new)) or ends_apart(old, new):
        return True
    a, b = modifiers(old, zh), modifiers(new, zh)
    if not a or not b:
        return False
    old_words, new_words = words(old, zh), words(new, zh)
    return any(
        a[noun] != b[noun]
        and ((a[noun] not in new_words and b[noun] not in old_words) or _ways(a[noun], b[noun]))
        for noun in a.keys() & b.keys()
    )


def _ways(a: str, b: str) -> bool:
    """One place as where a thing goes and as where it comes from ("to Rome", "back from Rome")."""
    return a == f"from {b}" or b == f"from {a}"

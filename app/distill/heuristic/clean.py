"""What makes a sentence a unit and not a transcript line (docs/architecture.md, "What a unit is"): the
conversational wrapping taken off ("Actually,", "不对，我更正一下，"), small talk and the assistant's offers,
apologies, confirmations and echoes recognised as noise, a sentence joining unrelated claims cut into one
claim each, and the entities worth a node. The word lists are tables in `rules.py`; both distillers (heuristic
and LLM) clean their units with these functions."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from app.claims import lexicon as lx
from app.claims.model import Value
from app.claims.values import find_values, same
from app.distill.heuristic.kinds import is_remark
from app.distill.heuristic.noise import (
    CHAT_FUNCTION_POS,
    CHAT_WORDS_ZH,
    DECISION_EN,
    DECISION_ZH,
    DEFERRAL_EN,
    ECHO_FRAME_WORDS,
    ECHO_FRAME_ZH,
    ENCOURAGEMENT_EN,
    LIGHT_EN,
    LIGHT_ZH,
    NOT_NAMES,
    PLEASANTRY_EN,
    PLEASANTRY_ZH,
    REACTION_EN,
    ROLE_WORDS,
    SMALL_TALK_EN,
    SMALL_TALK_ZH,
    WRAPPING_EN,
    WRAPPING_ZH,
    ZH_NAMED_THING,
)
from app.distill.heuristic.predicates import states_something
from app.distill.heuristic.served import BY_CHANNEL_EN
from app.distill.heuristic.tuning import ECHO_OVERLAP
from app.entities.types import EntityOut
from app.text import FILLER_EN, FILLER_ZH, STOPWORDS_EN, has_cjk, iter_pos_words, pos_words

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*|\d[\d,.]*")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
# an e-mail's local part starts a run and is bounded: unanchored, a long run of word characters with no
# "@" was scanned from every position (quadratic: 1.3 s a call on 25,000 characters)
_ADDRESS = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[\w-]+\.\w|(?<!\w)@\w{2,}")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def strip_wrapping(sentence: str) -> str:
    """The sentence without its leading greetings and discourse markers ("Actually, if …" → "If …",
    "不对，我更正一下，实际预算是6000" → "实际预算是6000"). The caller reads their meaning (a correction,
    a hedge) from the original sentence first. A sentence that is nothing but wrapping is left alone."""
    pattern = WRAPPING_ZH if has_cjk(sentence) else WRAPPING_EN
    out = sentence
    while True:
        match = pattern.match(out)
        if match is None or match.end() == 0:
            break
        if match.end() >= len(out.rstrip(" .!?。！？")):
            return sentence  # nothing but wrapping ("Actually, yes."): left alone
        out = out[match.end() :]
    if out is sentence:
        return sentence
    return out[0].upper() + out[1:] if not has_cjk(out[:1]) else out


def content_words(text: str, ignore: Iterable[str] = ()) -> list[str]:
    """The words that carry content: Latin words that are not stopwords or filler, numbers, and the
    two-character runs of Chinese text (a bigram is the unit of overlap that needs no dictionary)."""
    skip = {w.lower() for w in ignore}
    latin = [w.lower().strip(",.").split("'")[0] for w in _WORD.findall(text)]  # "that's" → "that"
    words = [w for w in latin if w not in STOPWORDS_EN and w not in skip and (len(w) > 1 or w.isdigit())]
    for run in _CJK_RUN.findall(FILLER_ZH.sub(" ", text)):
        words += [run[i : i + 2] for i in range(max(1, len(run) - 1))]
    return words


def is_pleasantry(sentence: str) -> bool:
    """A pleasantry, an offer, an apology or a closing, wherever it opens ("Merci, see you on Thursday!")."""
    opened = strip_wrapping(sentence)
    return any(p.search(s) for p in (PLEASANTRY_EN, PLEASANTRY_ZH) for s in (sentence, opened))


def is_small_talk(sentence: str, names: Iterable[str] = ()) -> bool:
    """Pleasantries with nothing to recall (see `_small_talk`; cached, a clause is asked about twice)."""
    return _small_talk(sentence, frozenset(names))


_INSTRUCTED = re.compile(
    r"you\s+(?:can|could|should|may|must|need\s+to|(?:don't|do\s+not|no\s+longer)\s+(?:need|have)\s+to)\s+(?!be\b)",
    re.IGNORECASE,
)


_INTERJECTION = re.compile(r"^(?:e*m+|h+m+|u+[hm]+|ok(?:ay)?|o+h+)$", re.IGNORECASE)


def _chat_only_zh(sentence: str) -> bool:
    """A Chinese sentence of function words and words that only manage the conversation ("这个我得想一
    想", "OK，我看一下"): no noun, number or name of anything to recall."""
    if any(c.isdigit() for c in sentence):
        return False
    for word, flag in iter_pos_words(sentence):  # (stops at the first word that names something)
        if word.isascii():
            if not (_INTERJECTION.match(word) or word.lower() in FILLER_EN or not word.strip(" ,.!?~")):
                return False
        elif word not in CHAT_WORDS_ZH and not flag.startswith(CHAT_FUNCTION_POS):
            return False
    return True


@lru_cache(maxsize=4096)
def _small_talk(sentence: str, names: frozenset[str]) -> bool:
    """Pleasantries with nothing to recall: "That's awesome, Noor!", "Glad you had fun", "太好了".
    Every content word is a word of small talk (or the name of someone in the conversation)."""
    if is_pleasantry(sentence):
        return True
    opened = strip_wrapping(sentence)
    greeting = GREETING.match(sentence)
    if greeting and greeting.end() < len(sentence):
        rest = sentence[greeting.end() :].strip(" .!?。！？")
        if len(rest) <= 20 and not states_something(rest) and not any(c.isdigit() for c in rest):
            return True
    if META_EN.search(opened) and not any(c.isdigit() for c in sentence):
        return True
    if has_cjk(sentence):
        rest = SMALL_TALK_ZH.sub("", FILLER_ZH.sub("", sentence)).strip(" ，。！？、,.!?~…")
        return not rest or _chat_only_zh(sentence)
    if any(c.isdigit() for c in sentence):
        return False
    # (what the user tells an assistant it may or need do is an instruction: "You can drop the summaries")
    instructed = _INSTRUCTED.match(opened) is not None
    reaction = REACTION_EN.search(sentence) or (ENCOURAGEMENT_EN.search(opened) and not instructed)
    if reaction and not has_specifics(sentence, names) and not BY_CHANNEL_EN.search(sentence):
        return True
    words = content_words(DEFERRAL_EN.sub(" ", sentence), names)
    return all(w in SMALL_TALK_EN or w in FILLER_EN for w in words)


# A turn about the conversation itself: it announces a question, asks for a session ("Quick question
# about billing", "Ready for another session?", "I have a couple of questions about invoices")
META_EN = re.compile(
    r"^(?:(?:i (?:have|got)|got|just) )?(?:a |one |another |a few |some |two |a couple of )?"
    r"(?:quick |small )?"
    r"(?:questions?|query|queries)(?: for you| about| on| regarding|$)|"
    r"^(?:(?:a|one|another) )?(?:quick|small|short) (?:one|thing)(?: for you| about| on| regarding|$)|"
    r"\bready for (?:another|a|the|our) "
    r"(?:session|lesson|class|chat)\b",
    re.IGNORECASE,
)
# A greeting followed by a name or a title only ("你好，IT小助手", "Hi Dr. Moss"): a vocative, no claim
GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))\b|你好|您好|嗨|哈喽|早上好|晚上好)[,，!！\s]*",
    re.I,
)


def is_informative(sentence: str, names: Iterable[str] = ()) -> bool:
    """Says something of its own: three content words that are not small talk (English), or seven
    characters once filler, small talk and pronouns are out (Chinese). An assistant's statement of this
    size is a fact it brings ("CloudDesk has a known bug"), not a pleasantry."""
    if has_cjk(sentence):
        said = SMALL_TALK_ZH.sub("", FILLER_ZH.sub("", sentence))
        rest = re.sub(r"我们|我|你们|您|你|[，。！？、,.!?\s]", "", said)
        return len(rest) >= 7
    words = [
        w
        for w in content_words(sentence, names)
        if w not in SMALL_TALK_EN and w not in FILLER_EN and w not in LIGHT_EN
    ]
    return len(words) >= 3


def is_small_talk_from(text: str, role: str, names: Iterable[str] = ()) -> bool:
    """Small talk said by `role`; what an assistant tells the user about their things is news when it
    says enough ("You finished all four reading exercises"), a pleasantry when not ("You're welcome")."""
    if says_nothing(text, names):
        return True  # light verbs and pointing words only: "I'll give that a try", "我试试看"
    if not is_small_talk(text, names):
        return False
    return role == "user" or is_pleasantry(text) or not is_informative(text, names)


def has_specifics(sentence: str, names: Iterable[str] = ()) -> bool:
    """A number, an id, a date word, a name or a decision: what an assistant turn can add."""
    if _NUMBER.search(sentence) or DECISION_EN.search(sentence) or DECISION_ZH.search(sentence):
        return True
    if _ADDRESS.search(sentence):
        return True  # an e-mail address, a handle
    skip = set(names) | NOT_NAMES
    words = [w.strip(".,!?;:'\"()") for w in sentence.split()[1:]]  # the first word is capitalised anyway
    return any(w[:1].isupper() and w not in skip and w.lower() not in STOPWORDS_EN for w in words)


def is_echo(sentence: str, said: str, names: Iterable[str] = ()) -> bool:
    """The sentence restates what the other speaker just said ("Got it, a laptop within 5000." after
    "I want a laptop, my budget is 5000"): every value in it was said, and most of its content words,
    or it confirms a change to a value said ("交房日期改成10月8日" after "是下个月8号", "moved it to
    March 4th" after "make it the 4th"), or remarks on one ("92 is a great score")."""
    rest, read_back = _unheard(sentence, said)
    unheard = set(_NUMBER.findall(rest))
    if not unheard <= set(_NUMBER.findall(said)):
        return False
    if read_back and not unheard:
        if lx.EN_CHANGE_TO.search(sentence) or lx.ZH_CHANGE.search(sentence):
            return True  # the change the other speaker asked for, confirmed
        if is_remark(rest, "zh" if has_cjk(rest) else "en"):
            return True  # a remark on a value said ("78分的话底子挺好的"): nothing of its own
    numbers = bool(unheard) or (read_back and _NUMBER.search(sentence) is not None)
    words = set(content_words(ECHO_FRAME_ZH.sub(" ", strip_wrapping(sentence)), names)) - ECHO_FRAME_WORDS
    if not words:
        return numbers
    heard = set(content_words(said, names))
    return len(words & heard) / len(words) >= ECHO_OVERLAP or (numbers and len(words) <= 2)


def _unheard(sentence: str, said: str) -> tuple[str, bool]:
    """The sentence without the values the other speaker said, in any form (a date read back with its
    month: "12月18日" after "18号", "March 4th" after "the 4th"), and whether it held one."""
    heard = [s.value for s in find_values(said)]
    read_back = False
    for span in reversed(find_values(sentence)):
        if any(_same_value(span.value, v) for v in heard):
            sentence, read_back = sentence[: span.start] + sentence[span.end :], True
    return sentence, read_back


def _same_value(a: Value, b: Value) -> bool:
    """One value; a day of the month said without its month is that day of any month."""
    if a.type == b.type == "date" and a.key and b.key:
        (ma, da), (mb, db) = a.key.split("-"), b.key.split("-")
        return da == db and (ma == mb or "0" in (ma, mb))
    return same(a, b)


def worth_a_node(entity: EntityOut, subject_words: Iterable[str] = ()) -> bool:
    """Role words and pronouns are the bank's subject, not an entity ("用户", "the user"); a lower-case
    phrase ("简洁的回答", "window seats") is a description, not a thing with a name."""
    name = entity.name.strip()
    if name.lower() in ROLE_WORDS or name.lower() in {w.lower() for w in subject_words}:
        return False
    if entity.type != "other":
        return True
    if has_cjk(name):
        return bool(ZH_NAMED_THING.search(name))
    return any(w[:1].isupper() or w[:1].isdigit() for w in name.split())


def says_nothing(clause: str, names: Iterable[str] = ()) -> bool:
    """Whether the clause is made of light verbs, pointing words and small talk only ("I'll give that a
    try", "That makes sense", "我试试看"): talk about what was just said, no claim of its own."""
    if _NUMBER.search(clause) or has_specifics(clause, names):
        return False
    if has_cjk(clause):
        rest = LIGHT_ZH.sub("", SMALL_TALK_ZH.sub("", FILLER_ZH.sub("", clause)))
        return len(rest) < 2 or _function_words_only(clause)
    words = content_words(clause, names)
    return not [w for w in words if w not in SMALL_TALK_EN and w not in FILLER_EN and w not in LIGHT_EN]


# Verbs that manage the conversation or the work in hand without naming it: with pointing words, adverbs
# and particles only ("就这么办吧", "那我等你通知", "先这些", "没别的了"), a clause names nothing to recall
_LIGHT_VERBS_ZH = frozenset(
    "办 弄 搞 做 安排 处理 等 通知 记 记下 看 看看 试 说 是 有 没 没有 要 行 可以 知道 明白 了解 考虑 想 帮 "
    "麻烦 来 去".split()
)
# jieba's tags of words that name nothing: pronouns, adverbs, particles, conjunctions, interjections,
# prepositions, quantity words without a numeral ("一下")
_FUNCTION_TAGS_ZH = ("r", "d", "u", "y", "c", "e", "p", "m", "q", "x", "zg")
# A step done (已, a verb's 了): news however light its verb ("已经办了")
_STEP_DONE_ZH = re.compile(r"已|[\u4e00-\u9fff](?<!的)(?:好|完)?了(?![吧吗])")


def _function_words_only(clause: str) -> bool:
    """Whether a Chinese clause is light verbs and words of jieba's function tags only, with no step done."""
    if _STEP_DONE_ZH.search(clause):
        return False
    words = [(w, f) for w, f in pos_words(clause) if w.strip(" ，。！？、,.!?~…")]
    return bool(words) and all(
        w in _LIGHT_VERBS_ZH or (f.startswith(_FUNCTION_TAGS_ZH) and not any(c.isnumeric() for c in w))
        for w, f in words
    )

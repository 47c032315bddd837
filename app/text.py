"""Language helpers and tables shared by distillation and search: CJK detection, sentence splitting, jieba
segmentation (PostgreSQL's parser has no Chinese word breaker, so we give it the words), and the word
tables both the distiller's date resolution and the query's time parser read (weekdays, months, numerals,
relative date words) and the stopwords of the distiller and the keyword channel."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
from collections.abc import Iterator
from functools import cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A sentence ends at . ! ? ; (followed by space or end) or at their full-width forms or a newline.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_init_lock = threading.Lock()


# Invisible characters that change how text reads without being text: bidi overrides and isolates
# ("Trojan source": a line shown reversed), zero-width spaces and joiners, the BOM, soft hyphens, and
# the rest of Unicode's format category (Cf); and C0/C1 controls other than tab and newline (a
# terminal escape). A unit's content is what an agent's prompt and the console show: they go.
_INVISIBLE_CHARS = "".join(
    re.escape(chr(c))
    # Unicode has format and control characters only in these planes (BMP, SMP, tags)
    for c in (*range(0x20000), *range(0xE0000, 0xE1000))
    if unicodedata.category(chr(c)) in ("Cf", "Cc") and chr(c) not in "\t\n"
)
_INVISIBLE = re.compile(f"[{_INVISIBLE_CHARS}]")
_ZWJ = "\u200d"


def _emoji(char: str) -> bool:
    return unicodedata.category(char) in ("So", "Sk") and ord(char) > 0x2000


def _keeps_zwj(text: str, at: int) -> bool:
    """A zero-width joiner between two emoji (👩‍💻: woman + laptop) is part of one picture."""
    before = text[max(0, at - 4) : at].rstrip("\ufe0f")  # an emoji's variation selector
    return bool(before) and at + 1 < len(text) and _emoji(before[-1]) and _emoji(text[at + 1])


def strip_invisible(text: str) -> str:
    """The text without invisible format and control characters (tab and newline stay; a joiner
    inside an emoji sequence stays). What every path that writes a unit's content calls."""
    if _INVISIBLE.search(text) is None:
        return text
    if _ZWJ not in text:
        return _INVISIBLE.sub("", text)
    kept = [
        char
        for at, char in enumerate(text)
        if not _INVISIBLE.match(char) or (char == _ZWJ and _keeps_zwj(text, at))
    ]
    return "".join(kept)


def clip(text: str, limit: int) -> str:
    """The text cut to at most `limit` characters, at a space when one is near the end, marked with …."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ", limit - 1 - 200)
    return (cut[:space] if space > 0 else cut).rstrip() + "…"


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


# A period that ends an abbreviation or an initial ends no sentence ("Dr. Okafor", "Elm St. near",
# "e.g. apples", "J. Smith", "No. 5").
_ABBREVIATION = re.compile(
    r"(?:\b(?:dr|mr|mrs|ms|mx|prof|st|jr|sr|mt|ave|rd|vs|approx|inc|ltd|dept|fig|ref|tel|ext|"
    r"e\.g|i\.e|a\.m|p\.m|cf)|(?<![\w.])[A-Z])\.$",
    re.IGNORECASE,
)


# A space between two Chinese characters is a pause typed for a comma, as in chat apps ("嗯 师傅后天来"):
# a clause boundary, never a word of the text
CJK_PAUSE = r"(?<=[\u4e00-\u9fff])[ \t\u3000]+(?=[\u4e00-\u9fff])"
_CJK_PAUSE = re.compile(CJK_PAUSE)


def with_commas(text: str) -> str:
    """`text` with the spaces between Chinese characters written as the commas they stand for."""
    return _CJK_PAUSE.sub("，", text)


def split_sentences(text: str) -> list[str]:
    pieces = [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]
    sentences: list[str] = []
    for piece in pieces:
        short = _ABBREVIATION.search(sentences[-1]) if sentences else None
        # an initial stands before a name ("J. Smith"): a capital and its full stop before a lower-case
        # word end a sentence ("it's size L. that's why")
        initial = short is not None and len(short.group()) == 2 and piece[:1].islower()
        if sentences and ((short and not initial) or (sentences[-1].endswith("No.") and piece[:1].isdigit())):
            sentences[-1] = f"{sentences[-1]} {piece}"
            continue
        sentences.append(piece)
    return sentences


@cache
def _jieba() -> object:
    import jieba

    with _init_lock:
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
        for word in _TIME_WORDS_ZH:  # (its HMM reads 段时间 and 那阵子 as people's names)
            jieba.add_word(word, tag="t")
    return jieba


# Spans of time jieba's dictionary lacks ("这段时间我都骑车去公司"): time words, never names or values
_TIME_WORDS_ZH = ("这段时间", "那段时间", "这阵子", "那阵子", "这些天", "这几天", "这两天", "这一阵")


def segment(text: str) -> list[str]:
    """Chinese words of `text` (search mode: long words also give their parts)."""
    import jieba

    _jieba()
    return [w for w in jieba.cut_for_search(text) if w.strip()]


# PostgreSQL refuses a tsvector whose distinct words exceed 1 MB ("string is too long for tsvector");
# lower-casing and hyphenated words' parts can grow the text's words to about twice its size, so what
# it indexes is cut at a quarter of that (a 4,000-character unit's Chinese words take ~30 kB).
MAX_SEARCH_TEXT_BYTES = 256 * 1024


def search_text(content: str) -> str:
    """What full-text search indexes: the content, plus its jieba words when it has Chinese (at most
    MAX_SEARCH_TEXT_BYTES of UTF-8, so building the index never fails on a long text)."""
    text = content
    if has_cjk(content):
        text = content + " " + " ".join(w for w in segment(content) if has_cjk(w))
    encoded = text.encode()
    if len(encoded) <= MAX_SEARCH_TEXT_BYTES:
        return text
    return encoded[:MAX_SEARCH_TEXT_BYTES].decode(errors="ignore")


# jieba's part-of-speech HMM, which finds the words its dictionary lacks (most names), costs ~0.1 ms a
# character for common ones but ~9 ms for a character it has no states for (a turn of 8,000 rare
# characters took 74 s). It runs only where a name can be: a run of 2-4 characters the dictionary left
# single, each one it knows; at most this many characters a call.
_NAME_RUN = range(2, 5)
HMM_CHARS_PER_CALL = 256


def pos_tag(text: str, min_length: int = 2) -> list[tuple[str, str]]:
    """(word, part of speech) pairs from jieba: nr person, ns place, nt organisation, nz other
    proper noun, of at least `min_length` characters. Its person tags are noisy; callers filter them."""
    import jieba.posseg
    from jieba.posseg import char_state_tab_P

    _jieba()
    tagged: list[tuple[str, str]] = []
    run: list[tuple[str, str]] = []  # single characters in a row: where a word the dictionary lacks may be
    budget = HMM_CHARS_PER_CALL
    for pair in [*jieba.posseg.cut(text, HMM=False), None]:
        if pair is not None and len(pair.word) == 1 and has_cjk(pair.word):
            run.append((pair.word, pair.flag))
            continue
        chars = [c for c, _ in run]
        if len(run) in _NAME_RUN and len(run) <= budget and all(c in char_state_tab_P for c in chars):
            budget -= len(run)
            tagged += [
                (p.word, p.flag) for p in jieba.posseg.cut("".join(chars)) if len(p.word) >= min_length
            ]
        elif min_length <= 1:
            tagged += run
        run = []
        if pair is not None and len(pair.word) >= min_length:
            tagged.append((pair.word, pair.flag))
    return tagged


# --- word tables -------------------------------------------------------------------------------------

# Words that carry no content: greetings, thanks, acknowledgements, filler (and function words).
FILLER_EN = frozenset(
    """hi hello hey hiya yo morning afternoon evening night good thanks thank you thx ty ok okay k sure got
    it understood yes yeah yep yup no nope nah great cool awesome nice perfect sounds alright right exactly
    indeed of course lol haha hahaha hmm um uh wow bye goodbye see later soon take care welcome problem
    worries np will do me too same agreed true fine please so much a lot very for that's thats this that
    is really glad happy to hear oh ah well again definitely totally absolutely amazing wonderful
    appreciate it's its the an and or but just""".split()
)
# ...and in Chinese, as a pattern taken out of a sentence (Chinese has no spaces between words).
FILLER_ZH = re.compile(
    r"你好|您好|嗨|哈喽|谢谢|多谢|感谢|好的|好吧|好啊|嗯+|哦+|噢|行|没问题|收到|明白|了解|知道了|哈+|再见|拜拜|不客气|"
    r"早上好|晚上好|晚安|是的|对的|对|好|啊|呀|吧|了|呢|啦|[\s，。！？、~～…!?,.]"
)
STOPWORDS_EN = FILLER_EN | frozenset(
    """i me my we our you your he she they them his her their be am are was were been being have has had
    do does did to of in on at by with from as about into than then there here what which who when where
    why how all any some not can could would should will shall may might must if also too""".split()
)
# Chinese function words and question words a search query carries (segmented by jieba).
STOPWORDS_ZH = frozenset(
    "的 了 是 吗 呢 我 你 他 她 们 在 有 和 么 吧 啊 哪 谁 这 那 个 多少 什么 哪里 怎么".split()
    # modals, particles and prepositions, as in STOPWORDS_EN ("can", "would", "to", "also", …): a query's
    # "能解释一下…吗" shares them with any statement and says nothing about what it is about
    + "能 能够 可以 会 要 想 应该 可能 必须 给 对 从 把 被 就 也 都 还 又 再".split()
    + "一下 请 让 吧 呀 哦 嘛 着 过 地 得".split()
)

WEEKDAYS_EN = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
# 周五, 星期天, 礼拜日: the character after the week word
WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
MONTH_NAMES_EN = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
MONTHS_EN = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
NUMBERS_EN = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "couple of": 2,
    "a couple": 2,
}

ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_NUMERAL = r"[0-9零一二两三四五六七八九十]+"  # what zh_number reads: 3, 三, 十二, 二十五
# 上周 / 这周 / 下周: weeks from this one; 前年 / 去年 / 今年: years from this one
ZH_WEEK_OFFSETS = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1}
ZH_YEAR_OFFSETS = {"前": -2, "去": -1, "今": 0}
# days from today
ZH_RELATIVE_DAYS = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨晚": -1,
    "今天": 0,
    "今早": 0,
    "今晚": 0,
    "明天": 1,
    "明早": 1,
    "明晚": 1,
    "后天": 2,
    "大后天": 3,
}


def zh_number(text: str) -> int:
    """A number written in digits or Chinese numerals up to 99 (三 → 3, 十二 → 12, 二十五 → 25)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (ZH_DIGITS.get(ones, 0) if ones else 0)
    return ZH_DIGITS.get(text, 0)


def pos_words(text: str) -> list[tuple[str, str]]:
    """Every (word, part of speech) pair jieba finds, single characters too (v verb, a adjective, p
    preposition, r pronoun): what the distiller's clause cutter reads a predicate from."""
    return list(iter_pos_words(text))


def iter_pos_words(text: str) -> Iterator[tuple[str, str]]:
    """`pos_words` one at a time, for a caller that may stop at the first word it needs (jieba cuts a
    text block by block as they are asked for)."""
    import jieba.posseg

    _jieba()
    # the HMM (words the dictionary lacks) only on a clause's length: on long runs of rare characters
    # it costs seconds (see HMM_CHARS_PER_CALL); predicates are dictionary words
    hmm = len(text) <= HMM_CHARS_PER_CALL
    return ((p.word, p.flag) for p in jieba.posseg.cut(text, HMM=hmm) if p.word.strip())

"""The value of a clause: its first typed value, else what a relation verb names, else a name, else the
words after the copula, else the object of its verb (English) or what follows its last verb (Chinese)."""

from __future__ import annotations

import re

from app.claims import heads
from app.claims import lexicon as lx
from app.claims.frames import zh_words
from app.claims.model import Value
from app.claims.topic import en_object
from app.claims.values import CLASSIFIERS_ZH, Span, find_values
from app.text import pos_tag

NAME = re.compile(r"(?<![\w'])(?:[A-Z][\w\-]*|[A-Z]{2,}\w*)(?:\s+(?:[A-Z][\w\-]*|\d+(?:\.\d+)*))*")
# what a value-less clause's value follows when it has no typed value and no name: a copula
_ZH_PIVOT = re.compile(r"是|用|成|为|变成|换成")
# "'s" is the copula after a pronoun ("it's", "she's", "that's"); after a noun a possessive ("the user's GP")
_COPULA_S = "|".join(rf"(?<=\b{p})" for p in "it he she that what there here who where this".split())
# a role one works in is said after "as" ("I work as a pharmacist", "hired as an intern")
_AS_ROLE = "|".join(rf"(?<=\b{v}\s)" for v in heads.ROLE_VERBS_EN)
_EN_PIVOT = re.compile(
    rf"\b(?:is|are|was|were|am|'m|'re|(?:{_COPULA_S})'s|be|became|become|gone|turned|to|into|with|meant|mean|"
    rf"(?:{_AS_ROLE})as)\b",
    re.IGNORECASE,
)


def main_value(text: str, zh: bool, opens_sentence: bool = True) -> Value | None:
    """The clause's value: its first typed value, else what a relation verb names, else a name, else
    the words after the copula (Chinese: after the last verb). `opens_sentence`: `text` opens its
    sentence (not the part after a verb of change: "moved to *Reading*")."""
    values = find_values(text)
    # where the copula (Chinese: a verb of being or using) stands; 用户 holds no 用
    found = list((_ZH_PIVOT if zh else _EN_PIVOT).finditer(text.replace("用户", "　　") if zh else text))
    if zh and found:  # a pivot inside a word is none (成都, 作为一名, 用户)
        words = _words_at(text)
        found = [m for m in found if words.get(m.start()) == m.group()]
    if not zh:
        typed = " ".join(s.value.text for s in values)
        for pattern, key in heads.RELATIONS_EN:
            found_relation = pattern.search(text) if key in heads.NAMED_OBJECTS else None
            named_after = (
                _names(text[found_relation.end() :], zh, opens_sentence=False) if found_relation else []
            )
            # not a value's part or a value ("moved to Wednesdays", "6000 EUR")
            named_after = [n for n in named_after if not find_values(n) and n not in typed]
            if named_after:  # "relocated to Lyon in March", "Harbor Soft uses DeskPilot": what the verb names
                return Value("name", named_after[0], key=named_after[0].lower())
    spans = _predicate_values(
        [s for s in values if not _NOT_VALUES.fullmatch(s.value.text)], text, found[0] if found else None, zh
    )
    if spans:
        first = spans[0]
        if first.value.type in ("version", "number") and _product_before(text, first, zh):
            return _versioned(text, first, zh)
        model = _MODEL_YEAR.match(text, first.start) if first.value.type == "number" and not zh else None
        if model:  # "a 2018 Civic": the model year is the product's, the value the thing
            return Value("name", model.group(), key=model.group().lower())
        return first.value
    for pattern, _key in heads.RELATIONS_ZH if zh else heads.RELATIONS_EN:
        match = pattern.search(text)
        named = (match.groupdict().get("v") or match.groupdict().get("v2")) if match else None
        named = strip(_TRAILING_ZH.sub("", named)).lstrip("了") if named else None  # 搬到了苏州
        if named:
            return Value("name", named, key=named.lower())
    if zh and found:
        rest = strip(_TRAILING_ZH.sub("", text[found[-1].end() :])).lstrip("的了")
        if rest:
            return _zh_named(rest)
    names = _names(text, zh, opens_sentence)
    # a name inside what the speaker has, before the copula ("my Spotify password is …", "my username on
    # GitHub is …"), narrows it: the value is what the copula says
    if not zh and found and _OWNED_EN.match(text):
        names = [n for n in names if text.find(n) >= found[0].start()]
    if names:
        # the name after the copula is the value ("my GP is Dr Okafor"), else the first
        after = [n for n in names if found and text.find(n) >= found[0].end()]
        name = (after or names)[0]
        return Value("name", name, key=name.lower())
    if found:
        rest = strip(text[found[0].end() :])
        if rest:
            return Value("text", rest)
    if zh:
        return _after_verb(text)
    obj = en_object(text) or en_object(text, prepositional=True)
    return Value("text", obj) if obj else None


_OWNED_EN = re.compile(r"\s*(?:my|our|his|her|their)\b", re.IGNORECASE)


_MODEL_YEAR = re.compile(r"(?:19|20)\d{2}\s+[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*")


def _words_at(text: str) -> dict[int, str]:
    """jieba's words of a Chinese text by where they start."""
    words, at = {}, 0
    for word, _ in zh_words(text):
        words[at] = word
        at += len(word)
    return words


def _predicate_values(spans: list[Span], text: str, copula: re.Match[str] | None, zh: bool) -> list[Span]:
    """The spans that may be the clause's value, most likely first: not an aside in brackets, not an
    identifier of the thing spoken of ("item 3082 should be size 38"), and after the copula when a
    value stands there ("the goal for 2026 is $8,000") — each preference only when it leaves a value."""
    # a bracketed value is an aside (the distiller's "next spring (2027-03)"), a value only when no name
    # stands outside the brackets
    outside = [s for s in spans if not _bracketed(text, s.start)]
    kept = outside or ([] if _names(_unbracketed(text), zh) else spans)
    kept = [s for s in kept if s.value.type != "id" and not _DESIGNATION.match(text, s.end)] or kept
    kept = [s for s in kept if not _rate_period(s, kept)] or kept
    kept = [s for s in kept if not _effective_from(s, text, kept)] or kept
    after = [s for s in kept if copula is not None and s.start >= copula.end()]
    return after or kept


# a number that names a thing with its letter after it: 401(k), 501(c)(3)
_DESIGNATION = re.compile(r"\([a-z]\)")


# When a value takes effect ("from June", "starting Monday", 从一月开始): the time of a change, no value
_FROM_EN = re.compile(r"\b(?:from|starting(?:\s+(?:on|in))?|as\s+of|effective|beginning)\s+$", re.IGNORECASE)


def _effective_from(span: Span, text: str, spans: list[Span]) -> bool:
    """A day or month said as when another value of the clause starts ("from June, 42 a month")."""
    moments = ("date", "weekday")
    if span.value.type not in moments or all(o.value.type in (*moments, "time") for o in spans):
        return False
    before, after = text[: span.start], text[span.end :]
    return _FROM_EN.search(before) is not None or (before.endswith("从") and after.startswith(("开始", "起")))


def _rate_period(span: Span, spans: list[Span]) -> bool:
    """A period said as one unit of time before an amount it is the rate of (一天只喝一杯, 一周跑20公里):
    the amount is the value, "a day" its rate."""
    period = span.value.type == "quantity" and span.value.unit == "time" and span.value.text.startswith("一")
    return period and any(
        o.start > span.start and o.value.type in ("quantity", "number", "amount") and o.value.unit != "time"
        for o in spans
    )


def _unbracketed(text: str) -> str:
    return re.sub(r"[(（][^()（）]*[)）]", " ", text)


def _bracketed(text: str, at: int) -> bool:
    """Whether position `at` is inside brackets opened before it and not closed."""
    before = text[:at]
    return max(before.rfind("("), before.rfind("（")) > max(before.rfind(")"), before.rfind("）"))


# the role a thing is put in after it ("X做主库", "X作为备份", "X当备用机"): the attribute, not the value
_ZH_ROLE = re.compile(rf"{lx.ZH_ROLE}[\u4e00-\u9fffA-Za-z]{{1,8}}$")


# a person by a common surname and a title or 小/老 (王医生, 老李), not a role (家庭医生) or a word (小米)
_SURNAMES_ZH = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜"
    "崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_TITLED_ZH = re.compile(
    rf"[{_SURNAMES_ZH}](?:医生|大夫|老师|阿姨|师傅|先生|女士|小姐|经理|律师|教练|护士|总)|[小老][{_SURNAMES_ZH}]"
)


def _zh_named(rest: str) -> Value:
    """What follows a Chinese copula, typed: a name when a proper noun or a Latin word is most of it
    (联通的光纤 is the provider 联通, 的PostgreSQL the product), else free text."""
    rest = _ZH_ROLE.sub("", rest) or rest  # 用MySQL做主库: the value is MySQL, 主库 its attribute
    if _TITLED_ZH.fullmatch(rest):
        return Value("name", rest, key=rest)
    names = [w for w, flag in pos_tag(rest) if flag in _ZH_NAME_FLAGS]
    if names and 2 * len(names[0]) >= len(rest):
        return Value("name", rest, key=names[0].lower())
    return Value("text", rest)


def _after_verb(text: str) -> Value | None:
    """What follows a Chinese clause's last verb that leaves content ("更喜欢最后一排了" → 最后一排)."""
    words = zh_words(text)
    said = [(w, flag) for w, flag in words if flag != "x"]  # not its punctuation
    flags = [flag for _, flag in said]
    if len(flags) >= 3 and flags[-1].startswith("v") and flags[-2][:1] not in _BEFORE_VP and "p" not in flags:
        # a verb phrase ending on its verb ("我都坐地铁上班"): what follows the subject, time and adverbs
        cut = max((i for i, flag in enumerate(flags[:-1]) if flag[:1] in _BEFORE_VP), default=-1)
        rest = strip("".join(w for w, _ in said[cut + 1 :]))
        if cut >= 0 and len(rest) >= 3:
            return Value("text", rest)
    for i in range(len(words) - 1, -1, -1):
        if words[i][1].startswith("v") and words[i][1] != "vn":  # a verbal noun (实验小学) names
            rest = strip(_TRAILING_ZH.sub("", "".join(w for w, _ in words[i + 1 :]))).lstrip("了")
            if len(rest) >= 2:
                return Value("text", rest)
    # a clause that ends on its verb says where or with what after a preposition ("在三楼会议室开")
    words = said
    if flags and flags[-1].startswith("v") and "p" in flags:
        start = flags.index("p") + 1
        between = strip("".join(w for w, _ in words[start:-1]))
        if len(between) >= 2:
            return Value("text", between)
    if not any(flag.startswith("v") and flag != "vn" for flag in flags):  # (a verbal noun names: 实验小学)
        # a predicate without a verb: a place after 在 ("地点在三楼会议室"), a noun after the subject and
        # the time ("她现在四年级了"): what follows the last pronoun, time word, adverb or preposition
        cut = max((i for i, flag in enumerate(flags) if flag[:1] in ("p", "r", "t", "d", "f")), default=-1)
        rest = strip(_TRAILING_ZH.sub("", "".join(w for w, _ in words[cut + 1 :])))
        if cut >= 0 and len(rest) >= 2:
            return Value("text", rest)
    return None


_BEFORE_VP = ("r", "t", "d", "c")  # a pronoun, a time word, an adverb, a conjunction


# jieba's parts of speech of a proper noun: person, place, organisation, other, a Latin word
_ZH_NAME_FLAGS = ("nr", "ns", "nt", "nz", "eng", "nrt")
# one thing by its classifier ("一个", "办了一张卡") is an article, not a value
_NOT_VALUES = re.compile(rf"一\s?[个下点{CLASSIFIERS_ZH}]")
# a product's name before its model number: Pixel 8, iPad 10, macOS 14
_PRODUCT_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])[a-z]?[A-Z][A-Za-z]*[a-z][A-Z]?[A-Za-z]*|[A-Z]{2,}[A-Za-z]*|[A-Z][a-z]+)\s*$"
)
_TRAILING_ZH = re.compile(r"(?:了|吧|啦|呢|的|我|哦|呀|刚好|就行|为主)+[。！!？?]*$")


def _product_before(text: str, span: Span, zh: bool) -> str:
    """The product a model number belongs to: a Latin name before it ("Pixel 8"), or in Chinese a noun
    joined to it that ends the clause's number (荣耀90, not 3口人)."""
    latin = _PRODUCT_BEFORE.search(text[: span.start])
    if latin:
        return latin.group(0).strip()
    if not zh or span.value.type != "number" or re.match(r"\s*[\u4e00-\u9fff]", text[span.end :]):
        return ""
    if not any(ch.isdigit() for ch in span.value.text):
        return ""  # a model number is written in digits (荣耀90); 外套八百 is a price
    if re.search(r"[万千亿kK]$", span.value.text):
        return ""  # a magnitude ("额度5万") is an amount, never a model number
    words = pos_tag(text[: span.start])
    last = words[-1] if words else ("", "")
    joined = len(last[0]) >= 2 and text[: span.start].endswith(last[0])
    amount = last[0].endswith(_AMOUNT_NOUNS_ZH)  # 房租4500, 月薪2万: an amount of the thing, no model
    return last[0] if joined and last[1] in ("n", "nz", "nt", "nr", "nrt") and not amount else ""


# Nouns naming an amount (money, a measure, a score): a number joined to one is its amount
_AMOUNT_NOUNS_ZH = tuple(
    "租 房租 租金 工资 薪 月薪 年薪 薪水 预算 价 价格 费 费用 学费 房贷 车贷 贷款 押金 额度 余额 利息 "
    "奖金 电费 水费 话费 体重 身高 分数 成绩 分 血压 血糖 心率 步数 里程 积分 存款 首付 月供 保费".split()
)


def _versioned(text: str, span: Span, zh: bool) -> Value:
    name = _product_before(text, span, zh)
    label = f"{name}{'' if zh and not name.isascii() else ' '}{span.value.text}".strip()
    key = f"{name.lower()} {span.value.key or span.value.text}".strip()
    return Value("version", label, key=key)


_LATIN_JOINED = re.compile(r"(?<![A-Za-z0-9])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![A-Za-z0-9])")


def _names(text: str, zh: bool, opens_sentence: bool = True) -> list[str]:
    """The names in `text`; a capitalised common word opening it is no name when `text` opens a sentence
    ("Reading is fun"), and is one after a relation's verb ("moved to Reading")."""
    if zh:
        # a Latin name joined by hyphens or digits (Meadow-Office, Orchard-5G) is one name, not its parts
        joined = [m.group() for m in _LATIN_JOINED.finditer(text)]
        tagged = [w for w, flag in pos_tag(text) if flag in _ZH_NAME_FLAGS and not _verb_and_object(w)]
        found = joined + [w for w in tagged if not any(w in j for j in joined)]
        return sorted(found, key=text.find)
    found = []
    for match in NAME.finditer(text):
        name = match.group(0).strip()
        words = name.split()
        while words and words[0].lower() in lx.EN_NOISE | lx.EN_SELF | {"correction", "dr.", "dr"}:
            words = words[1:]
        if (
            opens_sentence
            and words
            and match.start() == 0
            and words[0] == name.split()[0]
            and _known_word(words[0])
        ):
            words = words[1:]
        if words:
            found.append(" ".join(words))
    return found


def _known_word(word: str) -> bool:
    from lemminflect import getAllLemmas

    return bool(getAllLemmas(word.lower()))


def strip(text: str) -> str:
    return re.sub(r"^[\s\W]+|[\s\W]+$", "", text)


def _verb_and_object(word: str) -> bool:
    """Whether a word jieba guessed a name is a verb and its object (喝咖啡, 买菜) or two verbs (爱喝)."""
    if len(word) == 2:
        return all((tag := pos_tag(ch, min_length=1)) and tag[0][1].startswith("v") for ch in word)
    if len(word) < 3:
        return False
    first, rest = pos_tag(word[0], min_length=1), pos_tag(word[1:])
    return bool(first and rest) and first[0][1].startswith("v") and len(rest) == 1 and rest[0][1] == "n"


# A thing asked for without a verb: "Dark mode everywhere, please", "please, an aisle seat"
_ASKED_FOR_EN = re.compile(
    r"^\s*(?:please,?\s+(?P<after>[A-Za-z][\w' -]{2,40}?)|(?P<before>[A-Za-z][\w' -]{2,40}?),?\s+please)"
    r"[.!]*\s*$",
    re.IGNORECASE,
)


def asked_for(clause: str) -> Value | None:
    """The thing a verbless request asks for, as the clause's value."""
    found = _ASKED_FOR_EN.match(clause)
    if found is None:
        return None
    thing = strip(found.group("after") or found.group("before"))
    return Value("text", thing) if thing.lower() not in ("yes", "no", "ok", "okay", "thanks") else None


# A product moved to a version of it ("we upgraded Python to 3.12", "bumped Node back to 18")
_PRODUCT_TO_EN = re.compile(
    r"\b(?:upgrad|downgrad|bump|mov|updat|migrat|pinn?|roll|switch)\w*\s+(?:\w+\s+)?"
    r"(?P<product>[A-Z][\w.+-]*)\s+(?:(?:up|back|down)\s+)?to\s+v?(?P<number>\d+(?:\.\d+)*)\b"
)


def versioned_change(clause: str) -> Value | None:
    """The version a product is moved to, named with the product ("Postgres 16"), when the clause says so."""
    found = _PRODUCT_TO_EN.search(clause)
    if found is None:
        return None
    product, number = found.group("product"), found.group("number")
    return Value("version", f"{product} {number}", key=f"{product.lower()} {number}")


def product_of(value: Value) -> str:
    """The product a version value names ("Postgres" of "Postgres 16"), else ""."""
    return value.text.rpartition(" ")[0] if value.type == "version" else ""


def one_product(a: Value, b: Value) -> bool:
    """Whether two values are versions of one product ("Postgres 14", "Postgres 16")."""
    product = product_of(a).lower()
    return bool(product) and product == product_of(b).lower()

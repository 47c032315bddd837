"""What the heuristic distiller finds named in a sentence: ids (ORD-12345), e-mail addresses, phone
numbers, amounts and proper names (people, places, organisations), English by pattern and context,
Chinese by jieba's part-of-speech tags."""

from __future__ import annotations

import re

from app.distill.heuristic.noise import NOT_NAMES
from app.distill.heuristic.relations import find_products
from app.distill.heuristic.tuning import ENTITY_CONTEXT_CHARS
from app.entities.types import EntityOut, fits_a_name
from app.text import STOPWORDS_EN

_ID = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2,6}-\d{3,}(?![0-9])")
# ASCII only: in "我的邮箱是a@b.cn" the Chinese before the address is not part of it
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_PHONE = re.compile(r"(?<![A-Za-z0-9-])(?<!\d )\+?\d[\d -]{7,}\d(?![A-Za-z0-9-])")
_MONEY = re.compile(
    r"[$€£¥]\s?\d[\d,]*(?:\.\d+)?k?\b|\b(?<![\d,.])\d[\d,]*(?:\.\d+)?\s?(?:k|usd|dollars?|euros?|eur|rmb|yuan|bucks)\b"
    r"|(?<![\d.])\d+(?:\.\d+)?\s*(?:元|块|万元|万|美元)",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9,.-])\d[\d,]*(?:\.\d+)?k?(?![A-Za-z0-9-])|[零一二两三四五六七八九十百千万]{2,}"
)
# not part of a CamelCase or versioned name ("Cloud" of "CloudDesk"): those are products (relations.py)
_PROPER = re.compile(r"(?<![\w'])[A-Z][a-z]+(?: [A-Z][a-z]+)*(?![\w])")
_NOT_NAMES = NOT_NAMES
_PLACE_BEFORE = re.compile(r"\b(?:in|from|near|to|visited|visit|visiting|around)\s+$", re.IGNORECASE)
_PERSON_BEFORE = re.compile(
    r"\b(?:with|met|meet|friend|named|told|asked|called|saw|and|sister|brother|mom|dad|son|daughter|wife|"
    r"husband|partner)\s+$",
    re.IGNORECASE,
)
_ORG_AFTER = re.compile(r"^\s+(?:Inc|Corp|Ltd|LLC|University|College|Bank|Labs?|Group|Company)\b")
_ZH_POS_TYPES = {"nr": "person", "ns": "place", "nt": "organization", "nz": "product"}
# jieba's dictionary tags some common words as names (过敏 "nr"); a Chinese name starts with a surname.
_ZH_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石"
    "廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)


def _not_a_name(word: str) -> bool:
    """A capitalised word that is no name: "On Sundays", "Some of", "Actually"."""
    return word in _NOT_NAMES or word.removesuffix("s") in _NOT_NAMES or word.lower() in STOPWORDS_EN


def _zh_entity_type(word: str, flag: str) -> str | None:
    kind = _ZH_POS_TYPES.get(flag)
    if kind == "person" and not (len(word) <= 4 and word[0] in _ZH_SURNAMES):
        return None
    return kind


def find_entities(sentence: str, language: str, tags: list[str]) -> list[EntityOut]:
    """Ids, contacts, amounts and names in a sentence; Chinese names by jieba's part-of-speech tags.
    What is too long to be a name (a run of 400 digits, a 600-letter "company") is none."""
    return [
        EntityOut(name=name, type=kind)
        for name, kind in _found(sentence, language, tags)
        if fits_a_name(name)
    ]


def _found(sentence: str, language: str, tags: list[str]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    found += [(m, "id") for m in _ID.findall(sentence)]
    found += [(m, "contact") for m in _EMAIL.findall(sentence)]
    if "fact.contact" in tags:
        found += [(m.strip(), "contact") for m in _PHONE.findall(sentence)]
    amounts = [m.group().strip() for m in _MONEY.finditer(sentence)]
    if "constraint.budget" in tags and not amounts:
        amounts = [m.group() for m in _NUMBER.finditer(sentence)]
    found += [(a, "amount") for a in amounts]
    found += [(p, "product") for p in find_products(sentence)]
    if language == "zh":
        from app.text import pos_tag

        for word, flag in pos_tag(sentence):
            kind = _zh_entity_type(word, flag)
            if kind is not None:
                found.append((word, kind))
        return found
    for match in _PROPER.finditer(sentence):
        name = match.group()
        words = [w for w in name.split() if not _not_a_name(w)]
        if not words or _ID.search(name):
            continue
        name = " ".join(words)
        # the few words around the name say what it is (and keep a long sentence's scan linear)
        before = sentence[max(0, match.start() - ENTITY_CONTEXT_CHARS) : match.start()]
        after = sentence[match.end() : match.end() + ENTITY_CONTEXT_CHARS]
        if _ORG_AFTER.match(after) or _ORG_AFTER.match(" " + words[-1]):
            kind = "organization"
        elif _PLACE_BEFORE.search(before):
            kind = "place"
        elif _PERSON_BEFORE.search(before):
            kind = "person"
        else:
            kind = "other"
        found.append((name, kind))
    return found


def dedupe_entities(entities: list[EntityOut]) -> list[EntityOut]:
    """One entity per name; a typed one wins over `other`."""
    seen: dict[str, EntityOut] = {}
    for entity in entities:
        key = entity.name.lower()
        if key not in seen or seen[key].type == "other":
            seen[key] = entity
    return list(seen.values())

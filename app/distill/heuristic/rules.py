"""The tagging rules' type and the signals read around them: each rule a tag, a pattern, the confidence
and importance of what it finds, and optionally a relation from the speaker to the pattern's `obj` group
(the tables: `rules_en.py`, `rules_zh.py`).

Reading order of a sentence: filler is dropped; a question states nothing new (episode only); rules
tag what remains; hedges lower the confidence; everything else with content becomes an episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

USER = frozenset({"user"})
ANY_ROLE = frozenset({"user", "assistant", "tool"})


@dataclass(frozen=True)
class Rule:
    tag: str
    pattern: re.Pattern[str]
    confidence: float
    importance: float
    relation: str | None = None  # speaker --relation--> group "obj"
    object_type: str = "other"
    roles: frozenset[str] = USER
    # A mention, not a claim ("my kids", "my class", "my X is …", "must"): it tags a sentence said on
    # its own, but in a turn that says more it stays with the rest (a fragment cut out of its turn
    # loses what it is about and, short, outranks whole turns for any question naming the speaker).
    loose: bool = False


def rule(
    tag: str,
    pattern: str,
    confidence: float = 0.9,
    importance: float = 0.6,
    *,
    relation: str | None = None,
    object_type: str = "other",
    roles: frozenset[str] = USER,
    flags: int = re.IGNORECASE,
    loose: bool = False,
) -> Rule:
    return Rule(tag, re.compile(pattern, flags), confidence, importance, relation, object_type, roles, loose)


# --- Signals ----------------------------------------------------------------------------------

HEDGE_EN = re.compile(
    r"\b(?:if|unless|maybe|perhaps|probably|possibly|might|may be|i think|i guess|not sure|depending on|"
    r"assuming|hopefully|could be|kind of|sort of)\b",
    re.IGNORECASE,
)
HEDGE_ZH = re.compile(r"如果|假如|要是|的话|可能|也许|大概|或许|不确定|看情况|说不定|考虑一下|差不多")

# (an auxiliary before "not" opens a negated imperative or a subjectless statement, "Do not restart it",
# not a question; one with a "?" is asked all the same)
QUESTION_EN = re.compile(
    r"\?\s*$|^(?:can|could|would|will|is|are|am|do|does|did|what|when|where|who|whom|why|how|should|shall|"
    r"have|has|which|any idea)\b(?!\s+not\b)",
    re.IGNORECASE,
)
QUESTION_ZH = re.compile(r"[吗呢么][？?。！!]?$|[？?]\s*$|^(?:请问|能不能|可不可以|是否|能否)")

# Topic words that refine a preference into a sub-tag.
PREFERENCE_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "preference.food",
        re.compile(
            r"\b(?:food|eat|eating|dish|dishes|cuisine|restaurants?|pizza|sushi|pasta|burgers?|coffee|tea|drinks?|"
            r"wine|beer|spicy|sweet|desserts?|meals?|cook|cooking|chocolate|breakfast|lunch|dinner|snacks?|fruit|"
            r"vegetables?|cheese|bread|cake|ice cream)\b|吃|菜|饭|咖啡|茶|喝|辣|甜|素食|水果|零食|火锅",
            re.IGNORECASE,
        ),
    ),
    (
        "preference.contact",
        re.compile(
            r"\b(?:email|e-mail|phone|calls?|texts?|sms|messages?|whatsapp|slack|contact(?:ed)?|reach)\b|电话|邮件|"
            r"邮箱|短信|微信|联系",
            re.IGNORECASE,
        ),
    ),
    (
        "preference.travel",
        re.compile(
            r"\b(?:flights?|seats?|window|aisle|hotels?|trains?|travel(?:l?ing)?|trips?|airlines?|beach|mountains?)\b|"
            r"航班|座位|靠窗|过道|酒店|火车|旅行|旅游|海边",
            re.IGNORECASE,
        ),
    ),
    (
        "preference.schedule",
        re.compile(
            r"\b(?:mornings?|evenings?|afternoons?|nights?|weekends?|weekdays?|early|late|schedule|meetings?)\b|"
            r"早上|上午|下午|晚上|早起|熬夜|周末|工作日|时间",
            re.IGNORECASE,
        ),
    ),
    (
        "preference.style",
        re.compile(
            r"\b(?:colou?rs?|style|design|dark mode|light mode|theme|font|format|tone|concise|detailed|short|"
            r"brief|formal|casual|answers?|replies|responses?)\b|颜色|风格|设计|格式|简洁|详细|回答|回复",
            re.IGNORECASE,
        ),
    ),
    (
        "preference.entertainment",
        re.compile(
            r"\b(?:music|songs?|bands?|movies?|films?|books?|novels?|shows?|series|games?|sports?|hiking|painting|"
            r"reading|dancing|singing|swimming|running|yoga|art|concerts?|podcasts?)\b|音乐|歌|电影|书|小说|游戏|"
            r"运动|爬山|画画|跑步|游泳|瑜伽",
            re.IGNORECASE,
        ),
    ),
)

# An object that is only a pronoun says nothing: "I love it!" is not a preference.
EMPTY_OBJECTS = frozenset(
    "it that this them you him her those these one so much too to do it's that's".split()
)
# Relations whose object describes rather than names ("prefers window seats"): kept only when the
# object is a thing with a name ("prefers Inception").
DESCRIPTIVE_RELATIONS = frozenset({"prefers", "dislikes"})

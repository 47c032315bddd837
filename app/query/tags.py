"""Tags a query is about, inferred from its words: "what is my budget?" → `constraint.budget`."""

from __future__ import annotations

import re

INFERRED_TAGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "constraint.budget",
        re.compile(r"\b(?:budget|afford|spend|price|cost|how much)\b|预算|价格|多少钱|花费", re.I),
    ),
    ("constraint.time", re.compile(r"\b(?:deadline|due|by when|time limit)\b|截止|期限|最晚", re.I)),
    ("constraint.quantity", re.compile(r"\b(?:how many|quantity|number of)\b|多少个|几个|数量", re.I)),
    (
        "constraint.diet",
        re.compile(r"\b(?:allerg\w*|diet\w*|vegetarian|vegan|eat)\b|过敏|忌口|素食|吃", re.I),
    ),
    ("constraint.location", re.compile(r"\b(?:deliver\w*|ship\w*)\b|送到|配送", re.I)),
    (
        "preference",
        re.compile(r"\b(?:prefer\w*|like|likes|love|favou?rite|enjoy\w*|hate)\b|喜欢|偏好|最爱|讨厌", re.I),
    ),
    ("fact.identity", re.compile(r"\b(?:name|called|how old|age)\b|名字|叫什么|多大|几岁", re.I)),
    (
        "fact.location",
        re.compile(r"\b(?:live|lives|living|address|from where|hometown|moved?)\b|住|地址|来自|老家", re.I),
    ),
    (
        "fact.work",
        re.compile(r"\b(?:work|works|job|company|employer|career|profession)\b|工作|公司|职业|上班", re.I),
    ),
    (
        "fact.id",
        re.compile(
            r"\b(?:order|ticket|account|booking|reservation|tracking) (?:number|id|no)\b|订单|单号|账号", re.I
        ),
    ),
    ("fact.contact", re.compile(r"\b(?:email|phone|contact|reach)\b|电话|邮箱|联系|微信", re.I)),
    (
        "fact.family",
        re.compile(
            r"\b(?:family|kids?|children|wife|husband|partner|son|daughter|pets?|dog|cat)\b|家人|孩子|老婆|老公|宠物",
            re.I,
        ),
    ),
    (
        "fact.education",
        re.compile(r"\b(?:study|studies|school|degree|university|college|major)\b|学校|专业|大学|学位", re.I),
    ),
    (
        "task_state",
        re.compile(
            r"\b(?:status|progress|done|finished|pending|shipped|delivered)\b|进度|状态|完成|发货", re.I
        ),
    ),
    # "How did we handle …", "last time", "上次怎么处理": a question about a past task (its task episode).
    (
        "episode.task",
        re.compile(
            r"\bhow (?:did|do|have) (?:we|you|i)\b|\blast time\b|\bpreviously\b"
            r"|上次|之前|以前|怎么处理|如何处理|怎么解决|如何解决",
            re.I,
        ),
    ),
)


def infer_tags(query: str) -> list[str]:
    return [tag for tag, pattern in INFERRED_TAGS if pattern.search(query)]

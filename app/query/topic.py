"""What a query is about once its time phrase is set aside: a topic ("the weather on Mars tonight"), or
nothing but the time ("what did we talk about yesterday?", 我昨天说了什么).

A time phrase narrows the window; it is no topic. With a topic, a unit needs evidence of that topic
(the relevance floor); without one, the question asks for the window itself and its units answer it.
A query is time-only when every word left after the time phrase is a stopword or one of the closed
class below: the verbs and nouns of asking about a conversation, never of what it was about.
"""

from __future__ import annotations

import re

from app.text import STOPWORDS_EN, STOPWORDS_ZH, has_cjk, segment

# The verbs of saying: no topic, and no keyword either (any unit of a chat "said" something; "did I
# mention X?" asks about X).
SAYING = frozenset(
    """talk talked talking talks say said saying tell told discuss discussed discussing chat chatted
    chatting speak spoke mention mentioned
    说 说了 说过 讲 讲了 讲过 聊 聊了 聊过 聊天 谈 谈了 谈过 谈到
    讨论 讨论了 讨论过 提 提到 提过 提了 告诉""".split()
)
# Asking about a conversation: the verbs of saying, its nouns (things, topics, 事情, 内容), and the words
# that go with them (anything, else, 一些, 哪些).
ASKING_EN = SAYING | frozenset(
    """cover covered go went over come came up happen happened
    happening do done doing anything something everything else things thing stuff topic topics subject
    subjects conversation conversations conversed remind recap summary summarize summarise recall
    remember us let's lets up news update updates""".split()
)
ASKING_ZH = SAYING | frozenset(
    """发生 发生了 做 做了 干 干了 干嘛 事 事情 内容 话题 东西 我们 咱们 大家 哪些 一些 些 都 没 没有 啥
    过 回顾 总结 记得 还记得 有没有 怎样 如何 情况""".split()
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
_CLOSED = STOPWORDS_EN | STOPWORDS_ZH | ASKING_EN | ASKING_ZH  # ASKING_EN holds SAYING


def without_phrase(query: str, phrase: str | None) -> str:
    """The query with the time phrase the parser found taken out (its first occurrence)."""
    if not phrase:
        return query
    at = query.lower().find(phrase.lower())
    return query if at < 0 else f"{query[:at]} {query[at + len(phrase) :]}"


def topic_words(text: str) -> list[str]:
    """The words of `text` outside the closed class of stopwords and asking words."""
    words = [w.lower().removesuffix("'s") for w in _WORD.findall(text)]
    if has_cjk(text):
        words += [w for w in segment(text) if has_cjk(w)]
    return [w for w in words if w not in _CLOSED]


def has_topic(query: str, phrase: str | None) -> bool:
    """Whether the query asks about something besides the time phrase `phrase` (None: no phrase)."""
    return bool(topic_words(without_phrase(query, phrase)))

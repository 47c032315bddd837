"""What a question asks of the claims: the relations whose object it wants ("where do I live?" wants what
a unit holding the speaker's address.home states, in whatever words that unit says it), and the types of
value that answer it ("when …?" a time, a date or a day; "how much …?" an amount or a number)."""

from __future__ import annotations

import re

from app.claims import lexicon as lx
from app.claims.modality import retirement
from app.claims.subjects import subject_of
from app.claims.values import find_values
from app.text import has_cjk

# Questions asking for a relation's object, by the relation's head: "where do I live?" asks what a unit
# holding address.home states, whatever words that unit says it in ("moved to Porto", 搬到了苏州).
QUESTION_HEADS = [
    (
        re.compile(
            r"\bwhere\b.*\b(?:live|living|based|home)\b|\b(?:which|what)\s+(?:city|town|country)\b.*\b(?:live|in)\b"
            r"|\b(?:my|our)\s+(?:home\s+)?address\b|住在?哪|住哪|家在哪|哪个城市|哪座城市|家庭住址"
        ),
        "address.home",
    ),
    (
        re.compile(
            r"\bwhere\b.*\bwork\b|\b(?:which|what)\s+(?:company|firm|employer)\b|\bwho\b.*\b(?:work\s+for|employs?)\b"
            r"|\bmy\s+employer\b|哪家公司|什么公司|哪个公司|在哪(?:里|儿)?(?:工作|上班)"
        ),
        "employer",
    ),
    (
        re.compile(
            r"\bwho\b.*\b(?:manager|boss|supervisor|report\s+to|line\s+manager)\b|\bmy\s+(?:manager|boss)\b"
            r"|领导|上司|向谁汇报|汇报给谁"
        ),
        "manager",
    ),
    (re.compile(r"\bbudget\b|预算"), "budget"),
    (re.compile(r"\ballerg|过敏"), "allergy"),
]


def asked_slots(question: str, speaker: str = "user") -> list[dict[str, str]]:
    """The (subject, head) keys of the relations `question` asks the object of, when it says whose
    ("where do I live?", "where does my sister live?"); none for most questions."""
    low = question.lower()
    heads = [head for pattern, head in QUESTION_HEADS if pattern.search(low)]
    if not heads:
        return []
    subject, said = subject_of(question, has_cjk(question), speaker)
    return [{"subject": subject, "head": head} for head in heads] if said else []


# A question's words of what it asks (closed classes), and the value types that answer it
_WHEN = re.compile(
    r"\b(?:when|what time|what day|which days?|what date|how soon|until when|by when)\b|"
    r"什么时候|什么时间|几点|哪天|哪一天|周几|星期几|礼拜几|几号|几月",
    re.IGNORECASE,
)
_HOW_MUCH = re.compile(
    r"\b(?:how (?:much|many|long|old|big|far)|what(?:'s| is| are)? (?:the |my |our )?(?:[\w-]+ ){0,2}?"
    r"(?:price|cost|budget|dose|dosage|rate|limit|amount|size|number of))\b|多少|多久|多大|多长|多重|多高|"
    r"几[个晚天次台张位年岁块元周月趟层件份本]",
    re.IGNORECASE,
)
ANSWER_TYPES = (
    (_WHEN, frozenset({"time", "date", "weekday"})),
    (_HOW_MUCH, frozenset({"amount", "number", "quantity"})),
)


def answer_types(question: str) -> frozenset[str]:
    """The value types that answer `question` ("when …?": a time, a date or a day); none for most."""
    return frozenset(t for pattern, types in ANSWER_TYPES if pattern.search(question) for t in types)


def answers(content: str, types: frozenset[str]) -> bool:
    """Whether `content` states a value of one of `types` (the distiller's date notes aside), or that
    what it speaks of ended ("I cancelled it" answers "how much do I pay for it?")."""
    text = lx.DATE_NOTE.sub("", content)
    if retirement(text, has_cjk(text)) is not None:
        return True
    return any(s.value.type in types for s in find_values(text))

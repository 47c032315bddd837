"""What a clean unit does not carry: a discourse marker, filler, hedge or role prefix at its start, or a
filler or correction phrasing left anywhere in it. The lists are the benchmark's own (the distiller's
are in app/ and are what is being measured)."""

from __future__ import annotations

import re

# "The user: …" / "用户：…" — the speaker as a label instead of the subject of a sentence
ROLE_PREFIX = re.compile(
    r"^\s*(?:the\s+user|the\s+assistant|a\s+tool|user|assistant|tool|system|用户|助手|工具|客服|系统)\s*[:：]",
    re.IGNORECASE,
)

# English openings, matched as whole words at the very start
START_EN = (
    "oh right", "oh wait", "oh and", "oh by the way", "by the way", "btw", "i mean", "you know",
    "to be honest", "honestly", "actually", "hmm", "hm", "um", "umm", "uh", "er", "erm", "well", "oh", "ah",
    "okay", "ok",
    "so", "anyway", "anyways", "right", "yeah", "yes", "sure", "wait", "sorry", "scratch that", "correction",
    "let me correct", "let the user correct", "i misspoke", "basically", "like", "also", "and", "but", "plus",
    "maybe", "perhaps", "probably", "i think", "i guess", "i suppose", "kind of", "sort of",
)  # fmt: skip
# Chinese openings, matched as a prefix (single characters that also begin words carry their comma)
START_ZH = (
    "哦对了", "噢对了", "喔对了", "对了", "哦", "噢", "喔", "嗯", "呃", "额，", "额,", "啊", "哎", "唉", "诶",
    "欸", "那个", "就是说", "其实吧", "其实", "话说", "顺便说一下", "顺便", "另外", "还有", "而且", "并且",
    "不过", "但是", "然后", "好吧", "好的", "我更正一下", "更正一下", "我纠正一下", "纠正一下", "不好意思",
    "说错了", "不对", "可能", "也许", "大概", "好像", "我觉得",
)  # fmt: skip

# anywhere in the unit: fillers and the wording of a correction (the tag says it instead)
LEFTOVER = re.compile(
    r"\b(?:um+|uh+|hmm+|erm|scratch that|i misspoke|let me correct|let the user correct|correct what)\b"
    r"|\b(?:you know|i mean),"
    r"|嗯|呃|哦对了|更正一下|纠正一下|说错了|之前的说法"
    r"|(?<=[\s,，。；;])(?:the user|the assistant|用户|助手)\s*[:：]",
    re.IGNORECASE,
)

_START_EN = re.compile(
    r"^(?:" + "|".join(re.escape(m) for m in sorted(START_EN, key=len, reverse=True)) + r")\b", re.IGNORECASE
)
_SUBJECT = re.compile(r"^(?:the user|the assistant|a tool|用户|助手|工具)[\s,，]*", re.IGNORECASE)
# right after the subject ("The user, um, …", "用户哦对了…"): only words that never belong there
_AFTER_SUBJECT = re.compile(
    r"^(?:um+|uh+|hmm+|oh|by the way|btw|嗯|呃|哦|对了|哦对了|那个|话说|我更正一下|更正一下)"
    r"(?:\b|(?=[\u4e00-\u9fff，,]))",
    re.IGNORECASE,
)
_OPENING_PUNCT = " \t\"'“”‘’「」《》([（【-—…·,，.。:："


def _opening(text: str) -> str:
    return text.lstrip(_OPENING_PUNCT)


def starts_with_marker(text: str) -> str | None:
    """The marker the text opens with, if any (role prefixes are `ROLE_PREFIX`'s, not this)."""
    opening = _opening(text)
    match = _START_EN.match(opening)
    if match:
        return match.group(0)
    for marker in START_ZH:
        if opening.startswith(marker):
            return marker
    rest = _SUBJECT.sub("", opening, count=1)
    if rest != opening:
        after = _AFTER_SUBJECT.match(rest)
        if after:
            return after.group(0)
    return None


def unclean(content: str, forgive_role: bool = False) -> str | None:
    """Why a unit's content is not clean ("role prefix", "starts with 'Hmm'", "leftover 'um'"), or None.
    `forgive_role` reads the content after a role prefix instead of failing it."""
    role = ROLE_PREFIX.match(content)
    if role:
        if not forgive_role:
            return "role prefix"
        content = content[role.end() :]
    marker = starts_with_marker(content)
    if marker:
        return f"starts with {marker!r}"
    leftover = LEFTOVER.search(content)
    if leftover:
        return f"leftover {leftover.group(0)!r}"
    return None

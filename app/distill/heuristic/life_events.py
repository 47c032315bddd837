"""Durable events: what a person did, started, changed or plans ("I adopted a puppy last week", "we
moved to Denver in May", "我上个月搬到了成都"). Such a turn states a dated fact, not chatter: it is
distilled as `fact.event` (no TTL, no decay) instead of `episode`, valid from the date it names."""

from __future__ import annotations

import re

# Life events, experiences, plans and changes, by their verbs (past, present perfect or planned).
_EN_VERBS = (
    r"adopt(?:ed)?|mov(?:ed|ing) (?:to|into|out)|relocat(?:ed|ing)|start(?:ed)?|began|begun|"
    r"join(?:ed)?|quit|left (?:my|the|our)|went (?:to|on|back)|gone (?:to|on)|visit(?:ed)?|"
    r"travel(?:l?ed)|flew|trip to|graduat(?:ed|ing)|enroll(?:ed)?|signed up|took up|picked up|"
    r"got (?:married|engaged|divorced|a job|promoted|hired|accepted|a new|my first|back)|married|"
    r"(?:had|welcomed) a (?:baby|son|daughter)|bought|purchased|sold|"
    r"finish(?:ed)?|complet(?:ed)|won|lost my|ran (?:a|the|my)|competed|attended|volunteer(?:ed)?|"
    r"celebrat(?:ed)|hik(?:ed)|camp(?:ed)|paint(?:ed)|learn(?:ed|t) to|"
    r"(?:am|are|is|was|were) (?:going|planning|about) to|plan(?:ning)? to|will be (?:moving|starting)"
)
_EN = re.compile(rf"\b(?:i|we|my \w+|our \w+|she|he|they)\b[^.?!]{{0,40}}?\b(?:{_EN_VERBS})\b", re.I)
_ZH = re.compile(
    r"(?:我|我们|我家|他|她|他们)[^。？！]{0,12}?"
    r"(?:去了|去过|搬到|搬家|搬进|开始学|开始|参加了|参加|报名|加入了|加入|领养|收养|养了|买了|卖了|"
    r"毕业|结婚|订婚|离婚|生了|入职|辞职|升职|换了工作|旅行|旅游|出差|学会|完成了|赢了|准备|打算|计划)"
)


def is_life_event(text: str, language: str) -> bool:
    """A statement (not a question) of something the speaker or someone close did or plans."""
    stripped = text.strip()
    if not stripped or stripped.endswith(("?", "？")):
        return False
    return bool((_ZH if language == "zh" else _EN).search(stripped))

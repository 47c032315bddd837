"""What marks a limit (issue 32): a bound before a value, a deadline or a dated obligation, what cannot be
done or when the speaker cannot be reached; closed word classes in English and Chinese, read by kinds.py."""

from __future__ import annotations

import re

_EN = re.IGNORECASE

# A limit: a bound word before a value ("nothing over two hours", "under 2 kg"), or "only" opening it
LIMIT_EN = re.compile(
    r"\b(?:over|under|above|below|[a-z]+er than|more than|less than|at least|at most|"
    r"up to|maximum|minimum|max|min)\s+(?:\$|€|£)?(?:\d|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"a (?:day|week|month|year|few))|^only\b|\bonly\s+(?:\$|€|£)?\d",
    _EN,
)
# A dated obligation: an exam, a deadline, an interview (a limit in time, not a step)
OBLIGATION_EN = re.compile(r"\b(?:exam|test|deadline|due|interview|hearing|defen[cs]e)\b", _EN)
OBLIGATION_ZH = re.compile(r"考试|截止|期限|面试|答辩|到期")
# The latest a thing may happen ("no later than Friday", "最晚周五前"): a limit in time, whoever says it
DEADLINE_EN = re.compile(r"\b(?:no later than|at the latest|by the latest)\b", _EN)
DEADLINE_ZH = re.compile(r"最晚|最迟|不晚于")
CONSTRAINT_EN = re.compile(
    r"\b(?:can only|only (?:on|before|after|at|free|available)|can'?t|cannot|no more than|at most|"
    r"no longer than|longer than|limited to|capped at|restricted to|"
    r"(?:[a-z]+days?|weekends?|mornings?|evenings?) only|"
    # an unavailability is a limit in time
    r"out of (?:the )?office|unavailable|(?:not|n't|won't|will not) be (?:reachable|available|around))\b"
    r"|^no\b",
    _EN,
)
CONSTRAINT_ZH = re.compile(
    r"只能|不能|请不了|不可以|最多|至多|至少|起码|不超过|不少于|不低于|不高于|不大于|不小于|必须|规定|"
    r"(?:别|不要|不得)(?:超过|低于|少于|高于|多于)|只有[^，。]{1,8}(?:有空|有时间|可以|行|方便|能)|"
    r"控制在[^，。]{0,8}(?:以内|之内|以下)|不在(?:办公室|公司|国内|本地)|联系不上|"
    r"(?:周[一二三四五六日天]|星期[一二三四五六日天])[^，。]{0,3}不(?:开会|上班|接|约)|"
    r"不方便|没空|没时间|不接受|要能|得能|要有|得有|(?:以后|之后|以前|之前)才|"
    # what cannot be done, by the potential complement ("去不了", "爬不了", "买不起")
    r"[\u4e00-\u9fff](?<![受免少])不了(?!解)|(?<![对看])[买付用住]不起"
)

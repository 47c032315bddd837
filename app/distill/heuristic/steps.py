"""What marks a step (issue 32): a plan, something pending or under way, a step scheduled or done — closed
word classes of aspect and time, in English and Chinese, read by `kinds.py`."""

from __future__ import annotations

import re

_EN = re.IGNORECASE

PLAN_EN = re.compile(
    r"\b(?:I|we|I'm|we're|I am|we are)\s+(?:\w+\s+)?(?:planning|going to|about to|plan to|intend to)\b|"
    r"\b(?:I'm|we're|I am|we are|I'll|we'll|I will|we will)\s+(?:be\s+)?(?:\w+ing|\w+)\b.*\b(?:tomorrow|"
    r"tonight|next|this (?:week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"on (?:monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|in (?:january|february|march|april|may|june|july|august|"
    r"september|october|november|december)|on (?:january|february|march|april|may|june|july|august|september|"
    r"october|november|december) \d)",
    _EN,
)
PLAN_ZH = re.compile(
    r"打算|计划|准备|要去|将要|即将|下周|下个月|明天|后天|今晚|下次|春节|周末要|要把|"
    # an appointment made for a day ahead ("约了周五下午看牙", "订了下周的票")
    r"(?:约|预约|订|定)(?:好)?了[^，。]{0,4}?(?:周|星期|礼拜|明天|后天|下周|下个月|[0-9一二三四五六七八九十]+号)"
)
PENDING_EN = re.compile(
    r"\b(?:still (?:waiting|needs?|to be|pending|have to|has to|missing|open|outstanding)|not yet|yet to|"
    r"to be confirmed|needs? to|"
    r"have to|has to(?! be)|(?:'ve|have|has) got to|gotta|next time|homework|to-?do|remaining|"
    r"waiting (?:for|on|to)|hear(?:d)? back|still owes?|on (?:the|a) wait(?:ing)? ?list)\b|"
    r"(?:\bnot|n't|\bnever)\b[^,;]{0,30}\byet\b",
    _EN,
)
PENDING_ZH = re.compile(
    r"还需要|还没|待(?:确认|处理|支付|发货|审核|办|定)|尚未|需要您|需要你|还要|也要|还得|还差|还缺|还剩|作业|"
    # what is to happen by a day ("周五前到账"): a step scheduled
    r"(?:前|之前|以前)(?:到账|到货|送达|发货|退回|寄出|完成|办好)"
)
# A process under way, said of its thing ("the card is on its way", "the claim is under review", "the
# forms are being processed"): a step not done yet
UNDER_WAY_EN = re.compile(
    r"\b(?:on (?:its|their|the|my|our) way|under (?:review|consideration|investigation|repair|assessment)|"
    r"being [a-z]+(?:ed|en)|in (?:progress|transit|the works)|out for delivery|awaiting|"
    r"stuck (?:in|at)|held up|on hold|"
    r"for (?:review|approval|signature|sign-off)|"
    r"ready (?:for|to be) (?:pick-?up|collection|collected|picked up))\b",
    _EN,
)
# The next step named as such ("Next step is uploading my ID", "下一步是上传身份证")
NEXT_STEP = re.compile(r"^(?:the )?next (?:step|thing to do)\b|^(?:下一步|接下来)", _EN)
# A step scheduled: a present progressive with a time ahead ("the technician is coming on Friday")
SCHEDULED_EN = re.compile(
    r"\b(?:is|are|'s|'re|am|'m) [a-z]+ing\b.*\b(?:today|tomorrow|tonight|next|this (?:week|weekend|month|"
    r"morning|afternoon|evening)|on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    _EN,
)
# The modal 得 (děi, "have to") opening a clause ("我得给银行打个电话"): a step still to do, not 得了/得到
MUST_ZH = re.compile(
    r"^(?:我们|我)?(?:还|也|就|都|先)?得(?![了到过分奖病意])|得把|"
    r"(?:天|周[一二三四五六日天]|号|月底|月初|之前|以前)(?:我们|我)?(?:还|也|就|都|先)?得(?![了到过分奖病意])"
)
# Aspect markers of what is not done yet: "still", "yet", "not … yet"
STILL_EN = re.compile(r"\bstill (?:needs?|has|have|to)\b|\bnot yet\b|\byet to\b|n't\b[^,;]{0,30}\byet\b", _EN)
DONE_EN = re.compile(
    r"\b(?:submitted|uploaded|paid|booked|ordered|sent|approved|shipped|dispatched|escalated|"
    r"credited|repaired|created|issued|renewed|reset|fixed|"
    r"processed|cancell?ed|scheduled|solved|completed|finished|filed|confirmed|verified|"
    r"refunded|replaced|prepared|written)\b|\b(?:ships|arrives|goes out|will (?:ship|arrive))\b",
    _EN,
)
# A process under way, still: on its way, or 在 before a verb of a process ("签证还在审核", "我在等房东签字");
# 在 before any other verb is an activity that lasts ("在练琴", "在吃降压药"), before a place a location
UNDER_WAY_ZH = re.compile(
    r"在路上|卡在|卡住|(?<![现存实自])在(?:等|审核|审批|处理|办(?!公)|排队|维修|走流程|配送|运输)"
)
# A step under way: the progressive 正在, or a process verb with 中 ("配送中", "审核中")
ONGOING_ZH = re.compile(r"正在|(?:处理|配送|审核|运输|派送|办理|维修|进行|排队|发货)中")
# A time ahead: in a statement said in a service conversation, what happens then is a step scheduled
AHEAD_EN = re.compile(
    r"\b(?:tomorrow|tonight|later today|next (?:week|month|monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday))\b",
    _EN,
)
AHEAD_ZH = re.compile(r"明天|后天|今晚|稍后|下周|下个月")
# What is still to happen: a future tense, a schedule ("will", "is scheduled for", "将", "预计")
FUTURE_EN = re.compile(
    r"\b(?:will|'ll|(?:is|are|am|'s|'re|'m) going to|(?:is|are) (?:scheduled|booked|set|due) (?:for|on|to))\b"
    r"(?! (?:never|always)\b)",
    _EN,
)
FUTURE_ZH = re.compile(
    r"将(?!近)|预计|安排在|定于|"
    r"(?<![不也开机社学体聚约大年晚宴])会(?![员议计话所长场费谈面见晤])(?=[\u4e00-\u9fff]{2})"
)

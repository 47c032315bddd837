"""How the user wants to be served (issue 32): the manner (speed, channel, tone, format), what a statement
about serving the speaker names, and evaluations relative to the user; closed word classes in English and
Chinese, read by kinds.py."""

from __future__ import annotations

import re

_EN = re.IGNORECASE

# How the user wants to be served: speed, channel, tone, format, the way a thing is done
MANNER_EN = re.compile(
    r"\b(?:short|shorter|brief|concise|detailed|quick(?:ly)?|fast(?:er)?|right away|immediately|asap|"
    r"e-?mail|phone|calls?|texts?|sms|whatsapp|slack|messages?|voicemail|in person|tone|formal|casual|"
    r"friendly|polite|simple|simpler|slow(?:ly)?|step by step|format|bullet|bullets|"
    r"plain|instead of|rather than|better with|than|only|directly|emojis?|jargon|markdown|"
    r"paragraphs?|headings?|exclamation marks?|"
    r"in (?:english|chinese|spanish|french|german|plain english))\b",
    _EN,
)
MANNER_ZH = re.compile(
    r"简洁|简短|详细|快|尽快|马上|立刻|直接|邮箱|邮件|电话|短信|微信|语气|格式|中文|英文|正式|口语|而不是|就行|就好|"
    r"别打|不要打"
)
# A channel said as the way a thing reaches the user ("let me know by email", "updates via WhatsApp"):
# how to be served, never small talk, whatever pleasantry carries it
BY_CHANNEL_EN = re.compile(
    r"\b(?:by|via|over|through|on)\s+(?:text|e-?mail|phone|sms|whatsapp|slack|teams|signal|telegram|"
    r"wechat|messenger|voicemail|post|letter)\b",
    _EN,
)
# What a statement about serving the speaker names: replies, updates, the way or time to reach them
# ("Replies need to be fast", "mornings are the best time to call me", "回复要快")
ACT_OF_A_CHANNEL_EN = re.compile(r"\bto\s+(?:call|phone|text|e-?mail|message)\b", re.IGNORECASE)
SERVED_EN = re.compile(
    r"^(?:the |your |any |all )?(?:replies|reply|answers?|responses?|updates?|messages?|notifications?|"
    r"reminders?|summaries|summary|explanations?)\b|\b(?:best|easiest|only) (?:time|way|day|channel) to "
    r"(?:call|reach|contact|text|email|message)\b|\b(?:call|reach|contact|text|email|message) me\b",
    _EN,
)
# (not the act a reminder asks for: "提醒我给物业打电话" asks for a step)
VERB_OF_A_STEP_ZH = "给去把交买带办还续取拿打订寄填签"
SERVED_ZH = re.compile(
    rf"^(?:你的|您的)?(?:回复|回答|答复|消息|通知|提醒|解释)|(?:联系|打电话给|通知|提醒)我(?![{VERB_OF_A_STEP_ZH}])"
)
# A call or message to someone other than the speaker is the act asked for, not a way to reach them
ACT_OF_A_CHANNEL_ZH = re.compile(r"给(?!我)[^，。我]{1,6}(?:打电话|打个电话|发邮件|发短信|发微信)")
# An evaluation relative to the user ("Weekday evenings work best for me", "Casual is fine with me"): how they
# like to be served, a preference
SUITS_EN = re.compile(
    r"\b(?:works?|suits?|is|are|'s|would be)\s+(?:\w+\s+)?(?:best|better|well|fine|ok|okay|ideal|perfect|"
    r"easiest|easier|great)\s+(?:for|with|to)\s+(?:me|us)\b|\bsuits? (?:me|us)\b|"
    r"\b(?:easier|easiest|better|nicer|kinder|gentler) on (?:my|our)\b|\b(?:my|our) go-to\b",
    _EN,
)
# ...and in Chinese ("上午对我比较方便", "深色模式看着舒服"): how the user likes things, a preference
SUITS_ZH = re.compile(
    r"对(?:我们|我)(?:来说)?[^，。]{0,4}?(?:方便|合适|友好|舒服|顺手)|[看用听穿坐戴]着[^，。]{0,3}?(?:舒服|顺手|方便|习惯)"
)
RANKED_EN = re.compile(
    r"\b(?:is|are|works?|would be)\s+(?:\w+\s+)?(?:better|best|easier|preferable|ideal)\b", _EN
)

"""The kind of a clause no claim rule recognised, decided by what the clause is (issue 32): how the user
wants to be served (a request about speed, channel, tone or format; a want) is a `preference`; a step
still to do or just done (a request, a plan, something pending, a task verb done) is `task_state`; a
one-time happening is `fact.event`; what was covered in a lesson or meeting is an `episode`; any other
statement is a lasting state, a `fact`. The word classes are closed lists in this module's tables."""

from __future__ import annotations

import re

from app.distill.heuristic.aspect_zh import done_zh
from app.distill.heuristic.limits import (
    CONSTRAINT_EN,
    CONSTRAINT_ZH,
    DEADLINE_EN,
    DEADLINE_ZH,
    LIMIT_EN,
    OBLIGATION_EN,
    OBLIGATION_ZH,
)
from app.distill.heuristic.served import (
    ACT_OF_A_CHANNEL_EN,
    ACT_OF_A_CHANNEL_ZH,
    MANNER_EN,
    MANNER_ZH,
    RANKED_EN,
    SERVED_EN,
    SERVED_ZH,
    SUITS_EN,
    SUITS_ZH,
    VERB_OF_A_STEP_ZH,
)
from app.distill.heuristic.steps import (
    AHEAD_EN,
    AHEAD_ZH,
    DONE_EN,
    FUTURE_EN,
    FUTURE_ZH,
    MUST_ZH,
    NEXT_STEP,
    ONGOING_ZH,
    PENDING_EN,
    PENDING_ZH,
    PLAN_EN,
    PLAN_ZH,
    SCHEDULED_EN,
    STILL_EN,
    UNDER_WAY_EN,
    UNDER_WAY_ZH,
)
from app.distill.heuristic.verbs_en import base_verb, is_past, negated_imperative, perfective
from app.text import STOPWORDS_EN

_EN = re.IGNORECASE

# A request to the listener (in either language) or an imperative: a step to do, or a wish about service
REQUEST_EN = re.compile(
    r"^(?:please|kindly|could you|can you|would you|will you|i'd like you to|i need you to|"
    r"remind me|go ahead)\b",
    _EN,
)
REQUEST_ZH = re.compile(
    r"^(?:请|麻烦|帮我|帮忙|能不能|可不可以|可以帮|给我|记得|替我)|请[^，。]{0,6}(?:发|寄|送|回复|联系)"
    rf"|提醒我(?=[{VERB_OF_A_STEP_ZH}])"
    # the thing first, then the request ("复诊帮我约晚上的号", "飞机餐帮我备注一下"); the listener told what
    # to do, a suggestion's 吧 at the end ("你直接改成新的吧")
    r"|^[^，。！？我你他她]{1,6}(?:帮我|替我|麻烦你)|^你(?:就|先|再|直接|帮我)?[^，。！？]*吧[。！!]?$"
)
# what the user does not want done, an adverb before it or not ("也不要用感叹号"), or a manner asked for
# by degree ("语气正式一点", "回复简短些"): how they want to be served
NOT_WANTED_ZH = re.compile(
    r"^(?:也|还|都|就|千万|尽量)?(?:不要|别|不想|不用|不需要)|(?:不要|别)(?:给|跟)?(?:我|我们)?(?:打电话|发短信|发消息|联系)|[\u4e00-\u9fff](?:一点|一些|些)[。！!]?$"
)
WANT_EN = re.compile(
    r"\b(?:I|we)(?:'d| would)? (?:really |also |always |just |don't |do not |never )?(?:want|like|love|wish|"
    r"hope)\b|\binterested in\b|\bprefer\b|"
    r"\b(?:learn|work|do|focus|sleep|understand)s?\s+(?:\w+\s+)?better\b|"
    r"\b(?:usually|always|normally|generally|tend to) (?:go for|opt for|choose|pick)\b",
    _EN,
)
# Desiderative markers: a wish about how things are done ("Ideally a quiet room", "A summary would be
# great", "a morning slot if possible"), a preference when no task verb makes it a step
WISH_EN = re.compile(
    r"^(?:ideally|preferably)\b|\b(?:if|whenever) (?:possible|you can)\b|"
    r"\bwould be (?:great|nice|ideal|perfect|good|better|easier|best|lovely|helpful|fine)\b",
    _EN,
)
WANT_ZH = re.compile(r"希望|想要|想|喜欢|偏好|偏爱|口味偏|宁愿|更愿意|倾向")
# Doing verbs: wanting one of these is a step still to do, not a taste
TASK_VERB_EN = re.compile(
    r"\b(?:to )?(?:book|buy|order|purchase|return|refund|cancel|change|switch|upgrade|downgrade|renew|"
    r"schedule|reschedule|complain|report|apply|replace|exchange|track|reset|fix|install|set up|sign up|"
    r"subscribe|unsubscribe|pay|transfer|open|close|file|submit|register|move|update|delete|add|remove)\b",
    _EN,
)
TASK_VERB_ZH = re.compile(
    r"约|预约|买|配|订|预订|换|改|退|取消|申请|投诉|办|开通|查|修|装|绑定|注册|升级|续|转"
)
IMPERATIVE_EN = re.compile(
    r"^(?:just |always |never |only |don't |do not )?(?:book|buy|order|cancel|change|switch|upgrade|renew|"
    r"schedule|reschedule|reserve|send|email|call|text|"
    r"message|remind|check|find|add|remove|update|keep|make|use|give|tell|show|help|put|go ahead|set up|sign|"
    r"ship|deliver|refund|replace|fix|reset|hold|note|write|reply|answer|respond|contact|forward|move)\b",
    _EN,
)
# A requirement on a thing ("it has to sync with Outlook"); on the speaker it is a step to do
REQUIREMENT_EN = re.compile(
    r"^(?!I\b|we\b|I'|we')\S+(?:\s+\S+){0,4}?\s+(?:has to|have to|must|needs? to|should)\b", _EN
)
# (active only: "video calls are not covered" is a state of a plan, not a lesson)
DISCUSSED_EN = re.compile(
    r"(?<!\bis )(?<!\bare )(?<!\bnot )(?<!\bbe )(?<!\bbeen )(?<!n't )"
    r"\b(?:covered|discussed|talked about|went over|reviewed|practi[cs]ed)\b",
    _EN,
)
DISCUSSED_ZH = re.compile(r"讲了|学了|讨论了|复习了|练了")
# What the assistant recommends is advice given, not a fact about anyone
ADVICE = re.compile(
    r"\b(?:recommend|suggest|advise)s?\b|\byou (?:mentioned|said|told)\b|推荐|建议|(?:您|你)(?:提到|说过?)",
    _EN,
)
HEDGE_ZH_EN = re.compile(r"\b(?:if|maybe|might|perhaps|probably)\b|如果|可能|也许|大概", _EN)
# A taste said as what the user is, likes or picks: a preference ("I'm more of a tea person", "not big on
# crowds", "I'd pick the train over flying", "nothing too spicy"; 合我口味, 一般不坐红眼航班, 我是茶党)
TASTE_EN = re.compile(
    r"\b(?:i'm|i am|we're|we are) (?:more of |not )?an? (?:[a-z]+ ){1,2}(?:person|people|fan)\b|"
    r"\b(?:big|keen) on\b|\b(?:pick|choose|take|go with|go for|opt for)\b.+\bover\b|^(?:nothing|not) too\b|"
    r"\b(?:my|our) (?:thing|cup of tea)\b",
    _EN,
)
TASTE_ZH = re.compile(
    r"合(?:我|我们)?(?:的)?(?:口味|胃口)|对(?:我|我们)?(?:的)?胃口|(?:一般|通常|平时|从来|基本)(?:都)?不(?:选|挑|点|买|要|用|坐|订|吃|喝)|"
    r"能[^，。]{1,6}就(?:不|别)|是(?:个)?[\u4e00-\u9fff]{1,2}(?:党|控)(?!员)"
)
# A way the user likes things done, in Chinese ("最好周六上午", "发邮件比较好", "简单点就行")
PREFER_ZH = re.compile(
    r"最好|比较好|更好|为好|就行|就好|更喜欢|偏向|^[^，。我你他她]{0,6}尽量|(?:一般|通常|平时|总是|习惯)都?(?:选|挑|点|买|要|用|坐|订)"
)
# "I need financing", "we need a van": a requirement (a limit); "I need to renew …": a step to do
NEED_EN = re.compile(r"^(?:I|we)(?: really| still| also| just)? need(?:s)?\b(?! you\b)", _EN)
DATE_WORD_EN = re.compile(
    r"\d|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next|january|"
    r"february|march|april|may|june|july|august|september|october|november|december)\b",
    _EN,
)
DATE_WORD_ZH = re.compile(
    r"\d|[一二三四五六七八九十]+[月号日]|周[一二三四五六日天]|星期|明天|后天|下周|下个月"
)
OTHER_SUBJECT_ZH = re.compile(
    r"^(?:她|他|它|他们|她们|我(?:的)?(?:妹妹|姐姐|哥哥|弟弟|妈妈|爸爸|父母|老婆|老公|儿子|女儿|孩子|朋友|同事))"
)
PAST_TIME_EN = re.compile(
    r"\b(?:yesterday|last (?:week|month|year|night|time)|ago|this morning|earlier|just now|recently)\b", _EN
)
# 最近 ("lately") and 一直 ("all along") date a happening only with its aspect particle (最近去了趟北京);
# with none they describe a habit or a state (最近我都是7点起床, 我一直用微信)
EVENT_ZH = re.compile(r"昨天|前天|上周|上个月|去年|刚才|又|今天早上|今早|突然|(?:最近|一直)[^，。]*?[了过]")
# a recurrence says a habit, a lasting state, whatever marks it new ("最近每天跑8公里了")
RECURRENCE_ZH = re.compile(r"每(?:天|日|晚|周|星期|个?月|年|次)|天天|经常|平时|通常|一般")
_RECURRING = "|".join(
    "day morning afternoon evening night week weekend month year monday tuesday wednesday thursday friday "
    "saturday sunday".split()
)
RECURRENCE_EN = re.compile(
    rf"(?i)\b(?:every|each)\s+(?:other\s+)?(?:{_RECURRING})\b|\b(?:daily|nightly|weekly|monthly|yearly)\b"
    r"|\b(?:once|twice|\w+\s+times)\s+a\s+(?:day|week|month|year)\b"
)


def is_request(text: str, language: str) -> bool:
    """A request to the listener: "please …", "could you …", "Book it", "请…", "帮我…"."""
    if language == "zh":
        return REQUEST_ZH.search(text) is not None
    return REQUEST_EN.search(text) is not None or _imperative(text)


def clause_kind(text: str, language: str, role: str, stated: bool = False) -> str:
    """The kind of a clause no rule recognised, with a subtag where the clause names it. `stated`: the
    clause is a claim the turn makes (a short turn's), so a plain statement is a `fact` unless it is a
    remark; in a story a plain statement is a fact only with the shape of a lasting state."""
    kind = _zh(text, role) if language == "zh" else _en(text, role)
    if stated and role == "user" and language == "en" and negated_imperative(text):
        # told an assistant, a prohibition is a limit ("don't restart the node"), or how to be served
        # ("never call before 9"); between people it is encouragement ("don't give up!")
        return "preference" if MANNER_EN.search(ACT_OF_A_CHANNEL_EN.sub(" ", text)) else "constraint"
    if stated and kind in ("fact", "episode", "fact.event") and not is_remark(text, language):
        # said to an assistant, what is still to happen is a step ahead ("the technician will come on
        # Friday", "预计3个工作日内退回"); a way the user likes things done is a preference ("最好周六上午")
        if language == "zh" and role == "user" and PREFER_ZH.search(text):
            return "preference"  # a wish outranks the schedule it is about ("尽量安排在下午")
        if (_future(text, language) or SCHEDULED_EN.search(text)) and not HEDGE_ZH_EN.search(text):
            return "task_state"
        if role != "user" and (
            (AHEAD_ZH if language == "zh" else AHEAD_EN).search(text) or ONGOING_ZH.search(text)
        ):
            return "task_state"  # the service's own schedule: "the engineer comes tomorrow", "正在配送中"
    if kind == "episode" and stated and not is_remark(text, language) and not discussed(text, role):
        return "fact"
    return kind


def _future(text: str, language: str) -> bool:
    """What is still to happen: a future tense; in Chinese 会 is the future only with a time ahead
    ("明天会到", "下周会寄出"), else it says what one can do ("我会说粤语")."""
    if language != "zh":
        return FUTURE_EN.search(text) is not None
    found = FUTURE_ZH.search(text)
    if found is None:
        return False
    return found.group() != "会" or DATE_WORD_ZH.search(text) is not None or AHEAD_ZH.search(text) is not None


def discussed(text: str, role: str) -> bool:
    """What was covered or advised: the turn's episode, never a fact."""
    advice = role == "assistant" and ADVICE.search(text) is not None
    return bool(DISCUSSED_EN.search(text) or DISCUSSED_ZH.search(text) or advice)


def _en(text: str, role: str) -> str:
    if role == "user" and SERVED_EN.search(text) and not REQUEST_EN.search(text) and not _imperative(text):
        return "preference"
    if role == "user" and (SUITS_EN.search(text) or (MANNER_EN.search(text) and RANKED_EN.search(text))):
        return "preference"  # "Texts are better than calls": a way of being served, ranked
    if (DEADLINE_EN.search(text) or (role == "user" and OBLIGATION_EN.search(text))) and DATE_WORD_EN.search(
        text
    ):
        return "constraint.time"
    if role == "user" and NEED_EN.search(text):
        return "task_state" if TASK_VERB_EN.search(text) or _needs_to_act(text) else "constraint"
    if role == "user":
        if REQUEST_EN.search(text) or _imperative(text):
            # a channel said as the act asked for ("remind me to call the plumber") is no manner
            acted = ACT_OF_A_CHANNEL_EN.sub(" ", text)
            if LIMIT_EN.search(text):
                return "constraint"  # a bound, however asked ("keep the drive under 40 minutes")
            return "preference" if MANNER_EN.search(acted) else "task_state"
        if WANT_EN.search(text):
            return "task_state" if _wants_to_act(text) else "preference"
        # (not a bound: "no more than two stops")
        refused = re.match(r"no\b(?!\s+(?:more|less|fewer|later|earlier|sooner)\s+than)", text, _EN)
        if WISH_EN.search(text) or (refused and MANNER_EN.search(text)):
            return "preference"  # a wish, or a way of being served refused ("No phone calls, please")
        if TASTE_EN.search(text):
            return "preference"
    if STILL_EN.search(text) or UNDER_WAY_EN.search(text) or NEXT_STEP.search(text):
        return "task_state"  # an aspect of what is not done yet outranks the modal ("still needs to")
    if role == "user" and REQUIREMENT_EN.search(text):
        return "constraint"
    if PENDING_EN.search(text) or (PLAN_EN.search(text) and role == "user"):
        return "task_state"
    if DONE_EN.search(text) or perfective(text):
        return "task_state"
    if DISCUSSED_EN.search(text) or (role == "assistant" and ADVICE.search(text)):
        return "episode"
    if role == "user" and (CONSTRAINT_EN.search(text) or LIMIT_EN.search(text)):
        return "constraint"
    if is_past(text) and (role == "user" or PAST_TIME_EN.search(text)):
        # a habit started is a lasting state ("started me on iron tablets, one every evening")
        return "fact" if RECURRENCE_EN.search(text) else "fact.event"
    return "fact" if _lasting_en(text, role) else "episode"


# A want of an act ("I'd like to get a test booked", "we want to take the train"): a step still to do. A
# taste for doing ("I like to run", "I love to cook") and a want of a state ("I want to be called Sam")
# are preferences.
WANT_ACT_EN = re.compile(
    r"\b(?:want|wants|wanted|'d like|would like|'d love|would love|wish|hope|hoping|planning|plan|"
    r"intend|going)\s+to\s+(?:\w+ly\s+)?([a-z]+)",
    _EN,
)


def _needs_to_act(text: str) -> bool:
    """ "I need to call the bank": a need of an act, a step to do; "I need to be home by six" is a limit."""
    found = re.search(r"\bneeds? to (?:\w+ly )?([a-z]+)", text, _EN)
    return (
        found is not None
        and found.group(1).lower() not in ("be", "have", "stay", "keep")
        and base_verb(found.group(1).lower())
    )


def _wants_to_act(text: str) -> bool:
    found = WANT_ACT_EN.search(text)
    if found is None:
        return TASK_VERB_EN.search(text) is not None and "to " in text.lower()
    verb = found.group(1).lower()
    return verb not in ("be", "have", "feel", "know", "keep", "stay") and base_verb(verb)


def _imperative(text: str) -> bool:
    """ "Book it", "Keep it short", "Go slowly please": a clause opening with a verb and no subject. (Any
    verb before its object was tried: between people it made steps of "spill the beans" and of a shared
    photo's caption, "image a photo of …"; a prohibition is read only when said to an assistant.)"""
    words = re.findall(r"[a-z']+", text.lower())
    if IMPERATIVE_EN.match(text) is not None or (words[-1:] == ["please"] and base_verb(words[0])):
        return True
    # a verb in its base form and the listener's object after it ("Ping me on Slack", "Let us know")
    return len(words) > 2 and words[1] in ("me", "us") and base_verb(words[0])


def _zh(text: str, role: str) -> str:
    if role == "user" and SERVED_ZH.search(text) and not REQUEST_ZH.search(text):
        return "preference"
    if (DEADLINE_ZH.search(text) or (role == "user" and OBLIGATION_ZH.search(text))) and DATE_WORD_ZH.search(
        text
    ):
        return "constraint.time"
    if role == "user" and (SUITS_ZH.search(text) or TASTE_ZH.search(text)):
        return "preference"
    if role == "user":
        if REQUEST_ZH.search(text):
            return "preference" if MANNER_ZH.search(ACT_OF_A_CHANNEL_ZH.sub("", text)) else "task_state"
        if NOT_WANTED_ZH.search(text):
            return "preference"
        if WANT_ZH.search(text):
            return "task_state" if TASK_VERB_ZH.search(text) and not MANNER_ZH.search(text) else "preference"
        if MANNER_ZH.search(text) and re.search(r"发|联系|回复|回答|沟通|通知|告诉|写|讲", text):
            return "preference"
        if re.match(r"(?:我们|我)?(?:还|也|真的)?需要[一两几]?[个台辆张间份位件套本部]", text):
            return "constraint"  # the need of a thing, as NEED_EN ("我需要一台…"); of a step it is pending
    others = OTHER_SUBJECT_ZH.match(text) is not None  # "她下个月结婚": her plan, not the speaker's step
    if PENDING_ZH.search(text) or (role == "user" and PLAN_ZH.search(text) and not others):
        return "task_state"
    if MUST_ZH.search(text) or NEXT_STEP.search(text) or UNDER_WAY_ZH.search(text):
        return "task_state"
    if done_zh(text, role):
        return "task_state"
    if DISCUSSED_ZH.search(text) or (role == "assistant" and ADVICE.search(text)):
        return "episode"
    if role == "user" and CONSTRAINT_ZH.search(text):
        return "constraint"
    if EVENT_ZH.search(text) and not RECURRENCE_ZH.search(text):
        return "fact.event"
    return "fact" if _lasting_zh(text, role) else "episode"


# A lasting state: who the speaker is, what they have, use, hold or belong to ("We're a crew of 9",
# "I hold a Kenyan passport", "我有高血压"), or a specific value (a number, an id, a name). A remark
# ("it really shows the beauty of nature") or a passing feeling ("I'm so excited") is no lasting state.
STATE_EN = re.compile(
    r"^(?:I|we|my|our|I'm|we're|I've|we've)\b[^,;]{0,20}?\b(?:am|is|are|'m|'re|have|has|'ve|own|owns|use|uses|"
    r"hold|holds|work|works|live|lives|belong|belongs|speak|speaks|need|needs|know|knows|start|starts)\b",
    _EN,
)
FEELING_EN = re.compile(
    r"\b(?:so|really|very|super|pretty|quite|too)?\s*(?:excited|happy|glad|proud|thrilled|tired|sad|grateful|"
    r"thankful|lucky|stressed|nervous|sorry|blessed|busy|curious|sure|bored|relieved|inspired|amazed|"
    r"determined|loving|enjoying|hating|worth it|fun|tough|hard|great|amazing|awesome|nice|cool|"
    r"wonderful|crazy|scary|fine)\b",
    _EN,
)
STATE_ZH = re.compile(
    r"^(?:我们|我的|我)[^，。]{0,6}?(?:是|有|在|叫|姓|用|住|属于|患|得了|对.{1,6}过敏|身体)"
)
FEELING_ZH = re.compile(
    r"开心|高兴|激动|难过|累|兴奋|感谢|幸运|紧张|好奇|挺好|不错|太好|好玩|辛苦|挺紧|很紧|麻烦"
)
_SPECIFIC_EN = re.compile(r"\d|\b[A-Z]{2,}\b|(?<=[a-z,] )[A-Z][a-z]+")
_SPECIFIC_ZH = re.compile(
    r"[0-9A-Za-z]|[一两二三四五六七八九十百千万]+[个次天年月周岁份台元块号点]|[二三四五六七八九十]{2,}"
)


def is_remark(text: str, language: str) -> bool:
    """A remark on what was said rather than a claim: a feeling or an evaluation with nothing specific
    in it ("It was tough", "I'm loving it", "所以时间挺紧的"). It stays with the clause it remarks on."""
    if language == "zh":
        if _SPECIFIC_ZH.search(text) or DISCUSSED_ZH.search(text) or REQUEST_ZH.search(text):
            return False
        return FEELING_ZH.search(text) is not None
    if _SPECIFIC_EN.search(text) or DISCUSSED_EN.search(text) or REQUEST_EN.search(text) or _imperative(text):
        return False
    words = [w for w in re.findall(r"[a-z']+", text.lower()) if w not in STOPWORDS_EN and len(w) > 2]
    feeling = FEELING_EN.search(text) is not None
    return feeling and len(words) <= 3 and _en(text, "user") in ("fact", "episode")


def _lasting_en(text: str, role: str) -> bool:
    if _SPECIFIC_EN.search(text):
        return True
    return role == "user" and STATE_EN.search(text) is not None and not FEELING_EN.search(text)


def _lasting_zh(text: str, role: str) -> bool:
    if _SPECIFIC_ZH.search(text):
        return True
    return role == "user" and STATE_ZH.search(text) is not None and not FEELING_ZH.search(text)

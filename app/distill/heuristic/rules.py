"""The heuristic distiller's knowledge, as tables. Each rule: a tag, a pattern, the confidence and
importance of what it finds, and optionally a relation from the speaker to the pattern's `obj` group.

Reading order of a sentence: filler is dropped; a question states nothing new (episode only); rules
tag what remains; hedges lower the confidence; everything else with content becomes an episode.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

USER = frozenset({"user"})
ANY_ROLE = frozenset({"user", "assistant", "tool"})

HEDGE_FACTOR = 0.75  # "if", "maybe", "如果…的话", "可能": 0.9 becomes 0.675, still above 0.6
CORRECTION_IMPORTANCE_BONUS = 0.1


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


# --- English ----------------------------------------------------------------------------------

_ADV = r"(?:really |also |just |usually |always |generally |definitely |still |actually |mostly |totally )?"
_OBJ = r"(?P<obj>[\w'$€£¥.,-]+(?: [\w'$€£¥.,-]+){0,5}?)"  # a short object phrase, cut at punctuation
_END = r"(?=[,.;!?]| and | but | because | so |$)"
_WEEKDAY_OR_DATE = (
    r"(?:tomorrow|today|tonight|next|this|the end|end of|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|"
    r"december|noon|midnight|\d{1,2}(?::\d\d|\s?[ap]\.?m\b|/\d|(?:st|nd|rd|th)\b))"
)
# "That must have been awesome", "You must be so proud": a guess about the other, not a requirement
_EPISTEMIC = (
    r"(?!'ve\b| have been\b| be (?:so|really|such|very|quite|pretty|a (?:great|huge|real))\b| feel\b|"
    r" be (?:nice|great|fun|hard|tough|amazing|awesome|exciting|excited|proud|cool|lovely|wonderful|special|"
    r"scary|exhausting|tiring|rewarding|difficult|crazy|incredible|fulfilling|meaningful|liberating|"
    r"thrilled|happy|glad|relieved|busy|tired)\b)"
)
_MONEY = r"[$€£¥]?\s?\d[\d,.]*\s?(?:k|usd|dollars?|euros?|eur|rmb|yuan|bucks)?"
_JOBS = (
    r"engineer|developer|programmer|teacher|doctor|nurse|student|designer|manager|lawyer|artist|writer|"
    r"scientist|researcher|counselor|chef|consultant|accountant|analyst|architect|photographer|musician|"
    r"founder|ceo|cto|professor|pilot|driver|salesperson|marketer|therapist|pharmacist|dentist|farmer"
)
_FAMILY = (
    r"wife|husband|partner|boyfriend|girlfriend|fiancée?|son|daughter|kids?|children|child|mom|mum|"
    r"mother|dad|father|parents|brother|sister|siblings?|grandma|grandmother|grandpa|grandfather|"
    r"family|dog|cat|puppy|kitten|pets?"
)

EN_RULES: tuple[Rule, ...] = (
    # corrections first: they also carry the tag of what they correct
    rule(
        "correction",
        r"^(?:actually|correction|sorry,? i meant|i meant|i mean,|wait,? (?:no|it'?s|my)|"
        r"no,? (?:it'?s|it is|make (?:that|it))|let me correct|scratch that|make (?:that|it) )",
        0.9,
        0.7,
    ),
    # "not X but Y" (not "not only X but also Y")
    rule("correction", r"\bnot (?!only\b|just\b)\w+(?: \w+){0,2},? but (?!also\b)(?:rather )?\w", 0.85, 0.7),
    # constraints
    rule("constraint.budget", r"\bbudget\b", 0.9, 0.85, relation="has_budget", object_type="amount"),
    rule(
        "constraint.budget",
        rf"\b(?:can|could) (?:only )?(?:afford|spend|pay|go (?:up )?to) (?:up to |about )?{_MONEY}",
        0.9,
        0.85,
    ),
    rule(
        "constraint.budget",
        r"\b(?:no more than|at most|up to|not (?:to )?exceed|under|less than|maximum of|max)"
        r"\s*[$€£¥]\s?\d",
        0.9,
        0.85,
    ),
    rule("constraint.budget", r"\b(?:willing to (?:pay|spend)|price range|spending limit)\b", 0.85, 0.85),
    rule("constraint.time", r"\bdeadline\b", 0.9, 0.8),
    rule(
        "constraint.time",
        # not "until": it bounds a span ("open until 9 pm", "stayed up until midnight")
        rf"\b(?:by|before|no later than|due(?: on| by)?)\s+(?:the )?{_WEEKDAY_OR_DATE}",
        0.85,
        0.8,
    ),
    rule(
        "constraint.time", r"\bwithin (?:\d+|a|an|one|two|three) (?:hours?|days?|weeks?|months?)\b", 0.85, 0.8
    ),
    rule(
        "constraint.quantity",
        r"\b(?:need|want|order|buy|require|book|reserve)s?\s+(?:exactly |at least )?"
        r"(?:\d+|two|three|four|five|six|seven|eight|nine|ten|a dozen)\s+[a-z]+",
        0.85,
        0.7,
    ),
    rule(
        "constraint.quantity",
        r"\b(?:at least|at most|no more than|no fewer than) \d+\b(?! ?(?:%|dollars|usd|eur))",
        0.85,
        0.7,
    ),
    rule(
        "constraint.quantity",
        r"\b(?:for|party of|group of) \d+ (?:people|persons|guests|adults|kids|of us)\b",
        0.85,
        0.7,
    ),
    rule(
        "constraint.diet",
        r"\b(?:allergic to|allergy|vegetarian|vegan|gluten[- ]free|lactose[- ]intolerant|"
        r"halal|kosher|(?:can'?t|cannot|don'?t|do not) eat)\b",
        0.9,
        0.9,
    ),
    rule(
        "constraint.location",
        r"\b(?:must|has to|needs to|should) be (?:in|near|close to|within)\b|"
        r"\bdeliver(?:y|ed)? to\b",
        0.85,
        0.7,
    ),
    rule(
        "constraint",
        rf"\b(?:must{_EPISTEMIC}(?: not)?|mustn'?t|has to be|have to be|should(?: not|n'?t) be|is required|"
        r"requirement|mandatory|not allowed|is a must)\b(?!-)",  # not "a must-see"
        0.8,
        0.7,
        loose=True,
    ),
    # preferences (the sub-tag comes from the topic table below)
    rule(
        "preference",
        rf"\bI(?: {_ADV}(?:prefer|like|love|enjoy|adore)|(?:'d| would) {_ADV}(?:prefer|rather))"
        rf"\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="prefers",
    ),
    rule(
        "preference",
        rf"\bI(?:'m| am) {_ADV}(?:a (?:big |huge )?fan of|into|keen on|fond of)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="prefers",
    ),
    rule(
        "preference",
        rf"\bI {_ADV}(?:hate|dislike|detest|don'?t (?:really )?like|do not like|can'?t stand)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="dislikes",
    ),
    rule(
        "preference",
        rf"\bI(?:'m| am) {_ADV}not (?:a (?:big |huge )?fan of|into|keen on|fond of)\s+{_OBJ}{_END}",
        0.85,
        0.6,
        relation="dislikes",
    ),
    rule("preference", r"\bmy (?:absolute )?favou?rite\b", 0.85, 0.6, loose=True),
    rule("preference", r"\b(?:prefer|rather)\b.*\b(?:over|than|instead of)\b", 0.85, 0.6),
    # facts
    rule(
        "fact.identity",
        r"\b(?i:my name(?:'s| is))\s+(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+)?)",
        0.95,
        0.8,
        relation="is_named",
        object_type="person",
        flags=0,
    ),
    rule(
        "fact.identity",
        r"\b(?i:call me|I'm called|I am called)\s+(?P<obj>[A-Z][\w-]+)",
        0.9,
        0.8,
        relation="is_named",
        object_type="person",
        flags=0,
    ),
    rule("fact.identity", r"\bI(?:'m| am) (?P<obj>\d{1,3}) (?:years old|yo)\b", 0.95, 0.7, relation="age"),
    rule(
        "fact.identity",
        r"\bI(?:'m| am) (?:a |an )?(?:\w+ )?(?:woman|man|transgender|trans woman|trans man|"
        r"non-?binary|gay|lesbian|bisexual|american|british|chinese|german|french|indian|canadian|"
        r"australian|japanese|swedish|mexican|spanish|italian)\b",
        0.85,
        0.7,
    ),
    rule(
        "fact.work",
        rf"\bI (?i:{_ADV}work(?:ed)? (?:at|for)) (?P<obj>[A-Z][\w&.'-]*(?: [A-Z][\w&.'-]*){{0,3}})",
        0.9,
        0.7,
        relation="works_at",
        object_type="organization",
        flags=0,
    ),
    rule(
        "fact.work",
        rf"\bI(?:'m| am) (?:a|an) (?:\w+ ){{0,2}}(?P<obj>{_JOBS})s?\b",
        0.9,
        0.7,
        relation="works_as",
    ),
    rule(
        "fact.work",
        r"\bmy (?:job|company|employer|boss|manager|office|role|position|career|workplace)\b",
        0.85,
        0.65,
        loose=True,
    ),
    rule("fact.work", r"\bI (?:work|worked) as\b", 0.9, 0.7),
    rule(
        "fact.location",
        rf"\bI {_ADV}(?:live|lived|am based|'m based|moved|grew up|relocated) (?:in|to|at)\s+"
        r"(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+){0,2})",
        0.9,
        0.75,
        relation="lives_in",
        object_type="place",
        flags=0,
    ),
    rule(
        "fact.location",
        r"\bI(?:'m| am) (?:originally )?from\s+(?P<obj>[A-Z][\w-]+(?: [A-Z][\w-]+){0,2})",
        0.9,
        0.75,
        relation="is_from",
        object_type="place",
        flags=0,
    ),
    rule("fact.location", r"\bmy (?:address|hometown|home town|home city)\b", 0.9, 0.75),
    rule("fact.id", r"(?<![A-Za-z0-9])[A-Z]{2,6}-\d{3,}(?![0-9])", 0.95, 0.75, roles=ANY_ROLE, flags=0),
    rule(
        "fact.id",
        r"\b(?:order|account|ticket|booking|reservation|invoice|tracking|confirmation|customer|"
        r"membership|case|policy) (?:number|no\.?|id|#|code)\b",
        0.9,
        0.75,
        roles=ANY_ROLE,
    ),
    # an address or a number starts where its run starts (linear on a 30,000-character run)
    rule(
        "fact.contact",
        r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+\b|(?<!\d)(?<!\d[ -])\+?\d[\d -]{7,}\d",
        0.9,
        0.75,
    ),
    rule(
        "fact.contact",
        r"\b(?:reach|contact|email|call|text|message) me (?:at|on|via|by)\b|"
        r"\bmy (?:email|e-mail|phone|number|cell|mobile|whatsapp|wechat|telegram|handle)\b",
        0.9,
        0.75,
    ),
    rule("fact.family", rf"\bI have (?:a |an |\d+ |two |three |four )?(?:{_FAMILY})\b", 0.85, 0.65),
    rule("fact.family", rf"\bmy (?:{_FAMILY})\b", 0.85, 0.65, loose=True),
    rule(
        "fact.education",
        r"\bI (?:study|studied|graduated|majored|major|am studying|'m studying)\b",
        0.85,
        0.65,
    ),
    rule(
        "fact.education",
        r"\bmy (?:school|university|college|degree|major|thesis|class(?:es)?)\b",
        0.85,
        0.65,
        loose=True,
    ),
    rule("fact", r"\bmy (?!name\b)\w+(?: \w+)? (?:is|are|was|were) (?!\w+ing\b)\w", 0.8, 0.55, loose=True),
    # task state (any role: the assistant and tools report progress too)
    rule(
        "task_state",
        r"\b(?:is|are|has been|have been|was|were|got) (?:now |already |just )?(?:done|completed|"
        r"finished|verified|confirmed|shipped|delivered|paid|resolved|cancell?ed|approved|booked|submitted|"
        r"sent|fixed|closed|refunded|processed|scheduled|on hold)\b",
        0.85,
        0.5,
        roles=ANY_ROLE,
    ),
    rule(
        "task_state",
        # perfect tense or "already/just" ("I have verified", "I just paid"), not a plain past ("I paid")
        r"\b(?:I|we)(?:(?:'ve| have)(?: already| just)?|(?: already| just)) (?:paid|submitted|booked|sent|"
        r"signed|verified|confirmed|ordered|cancell?ed|uploaded|filed|scheduled|processed|refunded|resolved|"
        r"fixed|completed|finished|updated|reset)\b",
        0.85,
        0.5,
        roles=ANY_ROLE,
    ),
    rule(
        "task_state",
        r"\b(?:pending|in progress|waiting (?:for|on)|on hold|not (?:done|finished) yet|to-?do|"
        r"blocked on|still need to|next step)\b",
        0.8,
        0.5,
        roles=ANY_ROLE,
    ),
)

# --- Chinese ----------------------------------------------------------------------------------

# A number starts where a run of numerals starts: a match tried from inside a long run would scan the
# rest of it again from every character (quadratic on 30,000 digits).
_ZH_NUM = r"(?<![0-9零一二两三四五六七八九十百千万.])[0-9零一二两三四五六七八九十百千万]+"
_ZH_MONEY = rf"{_ZH_NUM}(?:\.\d+)?\s*(?:元|块|万|千|美元|rmb|RMB)?"

ZH_RULES: tuple[Rule, ...] = (
    rule(
        "correction",
        r"^(?:不对|更正|纠正|其实|我是说|我的意思是|说错了|应该是|改成|改为|不好意思，?(?:是|应该))",
        0.9,
        0.7,
    ),
    rule("correction", r"不是\S{1,12}而是", 0.85, 0.7),
    rule("constraint.budget", r"预算", 0.9, 0.85, relation="has_budget", object_type="amount"),
    rule(
        "constraint.budget",
        rf"(?:最多|顶多|至多)(?:能)?(?:花|付|出|给){_ZH_MONEY}|(?:加|出|提)到{_ZH_MONEY}|"
        rf"不超过{_ZH_MONEY}(?:元|块|万)|{_ZH_MONEY}(?:元|块)?(?:以内|以下)(?!的人)",
        0.9,
        0.85,
    ),
    rule("constraint.budget", r"价位|价格区间|愿意(?:花|付|出)", 0.85, 0.85),
    rule(
        "constraint.time",
        r"截止|期限|最晚|最迟|(?:之前|以前|前).{0,4}(?:完成|交付|交|给我|发货|到货|送到|搞定)|"
        rf"{_ZH_NUM}个?(?:天|周|星期|小时|月)(?:内|之内)|尽快",
        0.85,
        0.8,
    ),
    rule(
        "constraint.quantity",
        rf"(?:需要|要|订|买|预订|订购|预约)(?!一\s*[个份台件张位箱本瓶间人套]){_ZH_NUM}\s*(?:个|份|台|件|张|位|箱|本|瓶|间|人|套)|"
        rf"(?:至少|最少|一共|总共){_ZH_NUM}\s*(?:个|份|台|件|张|位|箱|本|瓶|间|人|套)",
        0.85,
        0.7,
    ),
    rule("constraint.diet", r"过敏|吃素|素食|不吃|忌口|清真|不能吃", 0.9, 0.9),
    rule(
        "constraint.location",
        r"(?:必须|一定要|需要)在\S{1,8}(?:附近|以内|里面)|(?<!已)(?<!已经)送到(?!了)",
        0.85,
        0.7,
    ),
    rule("constraint", r"必须|不能|不可以|只能|一定要|不允许|务必|要求", 0.8, 0.7, loose=True),
    rule(
        "preference",
        r"我?(?:更|比较|很|非常|最|特别)?(?<!不)(?:喜欢|偏好|偏爱|爱吃|爱喝|倾向于|宁愿|宁可|习惯)"
        r"(?!的)(?P<obj>[^，。！？,.!?]{1,12})",
        0.85,
        0.6,
        relation="prefers",
    ),
    rule(
        "preference",
        r"我?(?:很|非常|最|特别|真的)?(?:讨厌|不喜欢|不爱|受不了)(?P<obj>[^，。！？,.!?]{1,12})",
        0.85,
        0.6,
        relation="dislikes",
    ),
    rule("preference", r"最爱|最喜欢的", 0.85, 0.6),
    rule(
        "fact.identity",
        r"我(?:叫|的名字是|名叫)(?P<obj>[\u4e00-\u9fffA-Za-z]{1,4})",
        0.95,
        0.8,
        relation="is_named",
        object_type="person",
    ),
    rule(
        "fact.identity",
        r"我姓|我是(?:一[名个位])?(?:男|女)(?:生|的|性)|我是\S{1,3}人(?:[，。]|$)",
        0.9,
        0.75,
    ),
    rule("fact.identity", r"我今年(?P<obj>\d{1,3})岁", 0.95, 0.7, relation="age"),
    rule(
        "fact.work",
        r"我在(?P<obj>[\u4e00-\u9fffA-Za-z]{2,12}?)(?:工作|上班|任职|实习)",
        0.9,
        0.7,
        relation="works_at",
        object_type="organization",
    ),
    rule(
        "fact.work",
        r"我是(?:一[名个位])?\S{0,6}(?:工程师|老师|医生|护士|学生|设计师|经理|律师|程序员|会计|销售|"
        r"记者|厨师|司机|教授|研究员|创始人)",
        0.9,
        0.7,
    ),
    rule("fact.work", r"我的(?:工作|公司|老板|职位|领导|同事)", 0.9, 0.7, loose=True),
    rule(
        "fact.location",
        r"我(?:现在)?(?:住在|来自|家在|搬到了?|老家在?|定居在)(?P<obj>[\u4e00-\u9fff]{2,8}?)(?:[，。！,.]|$|了|的|附近)",
        0.9,
        0.75,
        relation="lives_in",
        object_type="place",
    ),
    rule("fact.id", r"(?<![A-Za-z0-9])[A-Z]{2,6}-\d{3,}(?![0-9])", 0.95, 0.75, roles=ANY_ROLE, flags=0),
    rule(
        "fact.id",
        r"(?:订单|账号|账户|工单|预订|快递|运单|会员|发票)(?:号|编号|单号)",
        0.9,
        0.75,
        roles=ANY_ROLE,
    ),
    rule(
        "fact.contact",
        r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+|1[3-9]\d{9}|(?:电话|手机|邮箱|微信|联系方式)(?:号(?:码)?)?(?:是|：|:)",
        0.9,
        0.75,
    ),
    rule(
        "fact.family",
        r"我(?:的)?(?:老婆|老公|妻子|丈夫|儿子|女儿|孩子|妈妈|爸爸|母亲|父亲|父母|哥哥|姐姐|弟弟|妹妹|"
        r"家人|男朋友|女朋友|狗|猫|宠物)",
        0.85,
        0.65,
        loose=True,
    ),
    rule(
        "fact.education",
        r"我(?:在)?(?:读|学|上)(?:大学|研究生|博士|硕士|本科)|我的(?:专业|学校|大学|导师)|我(?:毕业于|学的是)",
        0.85,
        0.65,
    ),
    rule(
        "task_state",
        r"已(?:经)?(?:为您|帮您|给您)?(?:完成|支付|付款|付了|发货|确认|提交|处理|解决|取消|验证|预订|到货|签收|"
        r"退款|送到|送达)|完成了|"
        r"搞定了|待(?:确认|处理|支付|发货|审核)|进行中|尚未|正在处理|还在等",
        0.85,
        0.5,
        roles=ANY_ROLE,
    ),
)

# --- Signals ----------------------------------------------------------------------------------

HEDGE_EN = re.compile(
    r"\b(?:if|unless|maybe|perhaps|probably|possibly|might|may be|i think|i guess|not sure|depending on|"
    r"assuming|hopefully|could be|kind of|sort of)\b",
    re.IGNORECASE,
)
HEDGE_ZH = re.compile(r"如果|假如|要是|的话|可能|也许|大概|或许|不确定|看情况|说不定|考虑一下|差不多")

QUESTION_EN = re.compile(
    r"\?\s*$|^(?:can|could|would|will|is|are|am|do|does|did|what|when|where|who|whom|why|how|should|shall|"
    r"have|has|which|any idea)\b",
    re.IGNORECASE,
)
QUESTION_ZH = re.compile(r"[吗呢么][？?。！!]?$|[？?]\s*$|^(?:请问|能不能|可不可以|是否|能否)")

FILLER_ZH = re.compile(
    r"你好|您好|嗨|哈喽|谢谢|多谢|感谢|好的|好吧|好啊|嗯+|哦+|噢|行|没问题|收到|明白|了解|知道了|哈+|再见|拜拜|不客气|"
    r"早上好|晚上好|晚安|是的|对的|对|好|啊|呀|吧|了|呢|啦|[\s，。！？、~～…!?,.]"
)

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

KIND_DEFAULTS = {
    "episode": (0.8, 0.3),  # confidence, importance of a verbatim turn
}
ASSISTANT_EPISODE = (0.7, 0.2)
# A longer turn becomes several episode units of about the same length, cut at sentence ends: a unit
# of a few sentences is about one thing, and ten still fit a prompt (docs/benchmarks.md, tuning notes).
EPISODE_MAX_CHARS = {"en": 250, "zh": 600}
# A sentence of more clauses than this is a narrative: its plain statements stay one episode
MAX_SPLIT_CLAUSES = 3
MAX_SPLIT_SENTENCES = 1  # ...and so is a turn of more sentences than this
QUOTE_MAX_CHARS = 200  # the other speaker's question an answer's episode quotes (and cites)
MIN_CONTENT_WORDS_EN = 3
MIN_CONTENT_CHARS_ZH = 4

# --- Noise, wrapping, claims (read by clean.py) ----------------------------------------------------

# Leading greetings and discourse markers: they frame the claim and go ("Actually, if …" → "If …").
# Their meaning was read from the whole sentence first (the `correction` rule, the hedges).
WRAPPING_EN = re.compile(
    r"(?:(?:hi|hello|hey|hiya|wow|woah|whoa|aw+|ooh|omg|haha|yay|well|oh|ah|okay|ok|um+|uh+|hmm+|hm|er|erm|yes|"
    r"yeah|yep|no|nope|sorry|anyway|anyways|btw|by the way|oh right|oh wait|i mean|you know|honestly|"
    r"to be honest|basically|also|plus|so|and|but|actually|wait|correction|scratch that|let me correct "
    r"(?:that|myself)|great|cool|thanks|thank you|alright|right|sure|one more thing|quick question|"
    r"understood|got it|noted|of course|certainly|absolutely|perfect|"
    r"(?:just )?to be clear)(?:,?\s+(?:there|[A-Z][a-z]+))?\s*[,!.:;-]+\s*"
    r"|(?:actually|well|so|oh|also|anyway|by the way|btw|and|but|plus|um+|uh+|hmm+|basically|honestly)\s+)",
    re.IGNORECASE,
)
# Openings that say the sentence corrects an earlier one (the unit gets the `correction` tag), and
# hedges (a lower confidence): read, then taken off like any other wrapping.
CORRECTION_OPENING_EN = re.compile(
    r"(?:(?:sorry|oops|no|wait),?\s+)?(?:i meant|i mean(?=,)|correction|scratch that|let me correct"
    r"(?: that| myself)?|i misspoke|make (?:that|it)|actually|wait(?=,?\s+(?:no|it'?s|my)\b)|"
    r"no(?=,\s+it'?s\b))"
    r"\s*[,!.:;-]*\s*",
    re.IGNORECASE,
)
HEDGE_OPENING_EN = re.compile(
    r"(?:maybe|perhaps|probably|possibly|hopefully|i think|i guess|i suppose|i believe|kind of|sort of)"
    r"\s*[,]?\s+",
    re.IGNORECASE,
)
WRAPPING_ZH = re.compile(
    r"(?:(?:你好|您好|嗨|哈喽|[哦噢喔]?对了|话说|其实吧|其实|就是说|不对|说错了|我更正一下|更正一下|我纠正一下|纠正一下|"
    r"顺便说一下|顺便|另外|此外|而且|并且|不过|但是)"
    r"[，,。！!、：:\s]*"
    r"|(?:嗯+|哦+|噢|喔|呃|额|哎|唉|诶|欸|啊|好的|好吧|好了|还有|然后|所以|那个|更正|喂|是的|对)[，,。！!、：:]+)"
)
CORRECTION_OPENING_ZH = re.compile(
    r"(?:不对|说错了|我?更正一下|我?纠正一下|更正|纠正|其实|我是说|我的意思是|不好意思[，,]?(?=是|应该))[，,。！!、：:\s]*"
)
HEDGE_OPENING_ZH = re.compile(r"(?:可能|也许|大概|好像|我觉得|我想想|估计|或许)[，,]?")
# Pleasantries, offers, apologies and closings (either role): no unit.
PLEASANTRY_EN = re.compile(
    r"^(?:how|what) (?:can|may|could) i (?:help|assist|do for)|\bhow (?:can|may) i (?:help|assist)\b|"
    r"\b(?:is there )?anything else (?:i can|you(?:'d like| need| want))|\blet me know if\b|"
    r"\b(?:i'?m |i am |i'?d be |i would be )?(?:happy|glad) to help\b|\bfeel free to\b|"
    r"\bhope (?:this|that|it) helps\b|"
    r"\bhave a (?:great|nice|good|wonderful) (?:day|one|time|weekend|evening)\b|"
    r"^(?:you'?re|you are) (?:very |so )?welcome\b|^no (?:problem|worries)\b|"
    r"^(?:i'?m |i am |so )?(?:really |very |so )?sorry (?:to hear|for (?:the|any)|about (?:the|that))|"
    r"^(?:i )?apologi[sz]e\b|^my apologies\b|"
    r"^(?:i )?(?:can|will|'ll) (?:gladly )?help you with (?:that|this)\b|"
    r"^is there anything\b|^(?:i'?m |i am )?(?:here|always here) (?:to help|for you)\b|"
    r"^see (?:you|ya)\b|^(?:talk|speak) (?:to you )?(?:soon|later|tomorrow)\b|"
    r"\bthanks? (?:you )?for (?:contacting|reaching out to|calling|choosing|your patience)\b",
    re.IGNORECASE,
)
PLEASANTRY_ZH = re.compile(
    r"有什么(?:可以|能|需要)?(?:帮|为|帮助)(?:您|你)|还有(?:什么|其他)(?:可以|需要|能)|"
    r"很高兴(?:为您|帮您|能帮|为你|帮你|认识)|(?:非常|很)?(?:抱歉|对不起)[，,]?(?:给您|让您|打扰)|祝您|祝你|"
    r"随时(?:联系|告诉|找)|^不客气|^没关系|辛苦了|^好的[，,]?(?:已|我)(?:经)?(?:记录|记下|了解|明白|知道)|"
    r"^(?:收到|明白|了解)了?$|^已(?:经)?(?:为您|帮您)?(?:记下|记录|修改|更新|收到|备注)了?[。！.!]?$"
)
# An assistant's offer to act ("I'll look for hotels", "Let me check", "我会…", "我来…"): no claim yet
PROMISE = re.compile(
    r"^(?:I'll|I will|I can|let me|I'm going to|我会|我来|我这就|我马上|稍后|我可以)", re.IGNORECASE
)
# Words of small talk: a sentence made of nothing else says nothing ("That's awesome, Noor!").
SMALL_TALK_EN = frozenset(
    """awesome amazing great good nice cool wonderful fantastic beautiful gorgeous lovely incredible inspiring
    impressive sweet fun glad happy proud excited thrilled sorry hear hearing heard sounds sound sounded
    seems seem looks look like love loved totally agree true feel feeling hope hoping wish luck care mean
    means lot lots kind words sharing share appreciate appreciated congrats congratulations wow woah whoa
    yay omg brilliant super stunning cute neat talk talking chat chatting catch catching touch blast
    interesting exciting fascinating enjoy enjoyed sure right yes totally seriously honestly truly
    glad day week weekend lately recently doing going things stuff everything anything something news life
    long time keep up work job well done wonder wonderful hey yeah ya y'all guys dear buddy pal man girl
    cheers hug hugs xoxo wishing best stay safe soon see later tell know knew think thought really such
    much so own us way ever even bit little always never too more most sharing glad hear take look""".split()
)
SMALL_TALK_ZH = re.compile(
    r"太好了|太棒了|真不错|不错|真棒|好棒|厉害|加油|辛苦|谢谢|感谢|哈哈|好的|没问题|当然|是啊|对啊|确实|有道理|"
    r"原来如此|这样啊|那就好|好主意|听起来|很好|挺好|非常|特别|真的|真|很|呀|啊|吧|呢|了|的|你|您|哇|棒"
)
# What an assistant turn can add beyond pleasantries: a decision, a recommendation, a result.
DECISION_EN = re.compile(
    r"\b(?:recommend(?:ed)?|suggest(?:ed)?|decided|chose|chosen|selected|approved|rejected|declined|denied|"
    r"scheduled|booked|reserved|ordered|shipped|refund(?:ed)?|cancell?ed|will (?:ship|send|deliver|arrive|"
    r"call|email)|found|results?|returned|error|failed|succeeded|total)\b",
    re.IGNORECASE,
)
DECISION_ZH = re.compile(
    r"推荐|建议|决定|选了|批准|拒绝|安排|预订|已经|已|结果|找到|失败|成功|共计|总价|报价"
)
# Words that frame an echo ("Got it, you mentioned …") without adding to it.
ECHO_FRAME_WORDS = frozenset(
    "got noted understood understand mentioned said told confirm confirming looking need needs want wants "
    "within around about".split()
)
# ...and in Chinese ("好的，预算5000以内的电脑，已记录"): taken off before the overlap is counted
ECHO_FRAME_ZH = re.compile(
    r"已(?:经)?(?:记录|记下|记住|确认|收到|了解)|(?:帮您|为您)?记(?:录|下)|以内|以下|左右|您说|你说|提到"
)
ECHO_OVERLAP = 0.5  # this share of an assistant sentence's content words said by the user: an echo
ECHO_WINDOW = 3  # the other speakers' last turns an echo may restate

# A sentence joining unrelated claims: one unit per claim ("…, and my order number is …", "…，另外…").
CLAIM_SPLIT_EN = re.compile(
    r",?(?<!\s)\s+(?:and|plus)\s+(?:also\s+)?(?=(?:my|our)\s)"  # from the first space of a run
    r"|,\s*(?:and\s+)?(?:also|plus|by the way|btw|oh and)\s*,?\s+(?=(?:my|our|I|I'm|I've|I'd|we)\b)"
    r"|,\s+and\s+(?=(?:I|I'm|I've|I'd|we)\b)",
    re.IGNORECASE,
)
CLAIM_SPLIT_ZH = re.compile(r"[，,；;]\s*(?=另外|还有|对了|顺便|此外|而且我的|我的)")
# A part that points back to the first one belongs with it ("… and I need it by Friday").
REFERS_BACK_EN = re.compile(
    r"\b(?:it|its|them|they|there|those|these|that one|this one|the same|too|either)\b", re.I
)
REFERS_BACK_ZH = re.compile(r"它|这个|那个|这些|那些|同样")

# Words that name the bank's subject or a role, never an entity of a unit.
ROLE_WORDS = frozenset(
    {"the user", "user", "用户", "the assistant", "assistant", "助手", "a tool", "tool", "工具"}
    | set("i me you we he she they 我 你 您 我们 他 她".split())
)
ZH_NAMED_THING = re.compile(r"《|[A-Z]")  # a title, a brand: a Chinese "other" entity worth a node
NOT_NAMES = frozenset(
    """I The A An My Our Your Hi Hello Hey Thanks Thank Yes No Ok Okay Sure Also But And So Then Well Oh
    Actually Sorry Please Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March
    April May June July August September October November December It This That What When Where Who Why
    How If Maybe Can Could Would Will Do Does Did Is Are Was Were We You He She They Just Great Good Nice
    Wow Correction Let Not Today Tomorrow Yesterday Wait Probably Perhaps Hopefully Anyway Last
    Next Call Got Noted Understood Happy Glad Certainly Absolutely Of Perfect Honestly Definitely Totally
    Really Seriously Luckily Thankfully Unfortunately Finally Yup Yep Yeah Nah Nope Haha Lol""".split()
)


# --- Slots across turns -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """A value said right after its slot was discussed fills it: "如果配置能升级的话，可以到8000" after a
    budget is a budget. `value`: "amount", "date" or "place" (what fills it)."""

    tag: str
    trigger: re.Pattern[str]
    value: str
    relation: str | None = None
    confidence: float = 0.9  # as sure as the rule that names the slot; a hedge lowers it the same way
    importance: float = 0.8


SLOTS: tuple[Slot, ...] = (
    Slot(
        "constraint.budget",
        re.compile(r"\b(?:budget|price range)\b|预算|价位", re.I),
        "amount",
        relation="has_budget",
        importance=0.85,
    ),
    Slot("constraint.time", re.compile(r"\b(?:deadline|due date)\b|截止|期限|最晚什么时候", re.I), "date"),
    Slot(
        "constraint.location",
        re.compile(r"\b(?:address|deliver(?:y|ed)? to|ship(?:ped|ping)? to)\b|地址|送到|寄到", re.I),
        "place",
    ),
)
SLOT_WINDOW = 3  # turns after a slot was discussed in which a bare value still fills it
SLOT_AMOUNT = re.compile(
    r"[$€£¥]\s?\d[\d,]*|(?<![\d.,])\d{3,}(?:,\d{3})*(?:\.\d+)?(?![\d%])|(?<![\d.])\d+(?:\.\d+)?\s*(?:k|元|块|万)(?![A-Za-z])|"
    r"(?<![一二两三四五六七八九十])[一二两三四五六七八九十]+[千万]"
)
# Relations whose object describes rather than names ("prefers window seats"): kept only when the
# object is a thing with a name ("prefers Inception").
DESCRIPTIVE_RELATIONS = frozenset({"prefers", "dislikes"})
# A reaction to what the other speaker said ("That's awesome!", "It sounds like you're doing impressive
# work", "Your passion is inspiring"): an evaluation with nothing specific (no name, number or date).
REACTION_EN = re.compile(
    r"^(?:wow,? |oh,? |aw+,? )?(?:that'?s|that is|this is|it'?s|it is|what an?|how|sounds|it sounds|"
    r"that sounds|"
    r"you'?re|you are|you'?ve|you have|your|you)\b.*\b(?:awesome|amazing|great|good|nice|cool|wonderful|"
    r"fantastic|beautiful|gorgeous|lovely|incredible|inspiring|impressive|sweet|fun|proud|exciting|"
    r"interesting|brilliant|super|stunning|cute|neat|special|admirable|courageous|brave|strong|talented|"
    r"awesome|rad|epic|dope|powerful|meaningful|touching|heartwarming|remarkable|outstanding)\b",
    re.IGNORECASE,
)
# Encouragement and support between friends ("Keep it up!", "You got this", "I'm proud of you"), and
# what is said to the other about themselves ("Your hard work will pay off"): small talk unless it
# names something specific.
ENCOURAGEMENT_EN = re.compile(
    r"\bkeep (?:it up|me posted|you posted|on (?:trying|going|believing)|going|up the good work|pushing|"
    r"at it|shining|rocking)\b|\byou(?:'ve)? got this\b|\bway to go\b|\bgood for you\b|"
    r"\bbelieve in yourself\b|\bhave faith in (?:you|yourself)\b|\bproud of you\b|"
    r"\b(?:i'?m|i am) (?:always )?here for you\b|\bthanks? (?:you )?(?:so much )?for (?:your|the) "
    r"(?:support|kind words|sharing|encouragement|advice)|\blet me know\b|"
    r"\bi (?:totally )?(?:get|understand) "
    r"(?:it|that|you)\b|\bcan'?t wait\b|\bsounds like a plan\b|\bi couldn'?t agree more\b|\btake care\b|"
    r"\bsorry (?:that|this) happened\b|\bhave (?:fun|a blast)\b|\bi'?m (?:so )?(?:happy|glad) for you\b|"
    r"^(?:you|your|you'?re|you'?ve|you'?ll|you'?d)\b|^(?:(?:i'?m|so|really|i am)\s+)*glad\b|"
    r"\bappreciate (?:your|the|it|you|that)\b|\bthanks? (?:you )?(?:so much )?for\b|\bhad a blast\b|"
    r"\bis the best\b|\blife'?s too short\b|\bsounds like\b|^let'?s\b|\bmake a (?:real |big )?difference\b|"
    r"^(?:nice one|good on you|well done|great job|good job|nice job|awesome job)\b|\bso talented\b",
    re.IGNORECASE,
)

"""The closed classes claims are read with: change words, hedges, retirements, additive words, people
a statement may be about (English and Chinese); the attribute heads are in `app.claims.heads`.
Every entry is a word of the language, never a phrase from a data set."""

from __future__ import annotations

import re

# --- English -----------------------------------------------------------------------------------------
# "from A to B", "instead of A", "rather than A", "A, not B": the value a change names as replaced
# the old value is a short phrase of one clause ("from the 2nd to the 4th"): never a span across a colon
# or a semicolon ("news from the review: they raised it to …" names no old value)
EN_FROM_TO = re.compile(
    r"\bfrom\s+(?P<old>(?:[^\s:;!?]+\s+){0,4}?[^\s:;!?]+)\s+(?:to|into)\s+(?P<new>.+)", re.IGNORECASE
)
# "traded the Golf for a Polo", "swapped Jira for Linear"
EN_SWAP = re.compile(
    r"\b(?:trad|swapp|exchang|replac)(?:ed|ing)\s+(?P<old>.+?)\s+(?:for|with)\s+(?P<new>.+)", re.IGNORECASE
)
# Any verb in the past done to what was spoken of, moving it to a value ("upped it to 100mg", "scaled
# them out to 10", "took that down to 3"): the construction says a change, whatever the verb.
_MOVED_IT = (
    r"\b[a-z]+(?:ed|t)\s+(?:it|them|that|this)\s+(?:(?:up|down|out|back|over)\s+)?(?:to|into)(?=\s+[\d$€£¥])"
)
# a verb of change and what it moves the value to ("we lowered the timeout to 12 s", "pushed the
# launch back to May", "the rent went up to 900")
EN_CHANGE_TO = re.compile(
    r"\b(?:switch|mov|chang|push|rais|lower|increas|decreas|reduc|cut|upgrad|downgrad|bump|extend|swap|shift|"
    r"relocat|transferr?|rebook|reassign|rerout|"
    r"shorten|reschedul|postpon|delay|migrat|updat|adjust|set|doubl|halv|tripl|renam)\w*\b[^.;]*?\b(?:to|into|until|till)\s+(?P<new>.+)"
    r"|\b(?:up|down)\s+to\s+(?P<new2>.+)"
    r"|" + _MOVED_IT + r"\s+(?P<new3>[\d$€£¥].*)",
    re.IGNORECASE,
)
EN_INSTEAD = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?P<old>(?:[^,.;]|\.(?=\d))+)", re.I
)
EN_NOT = re.compile(r",\s*(?:and\s+)?not\s+(?P<old>(?:[^,.;]|\.(?=\d))+)$", re.IGNORECASE)
# "my new number is …": a new thing of the same name, whose value replaces the old one's
_MY_NEW = r"(?:my|our)\s+new(?=\s+[a-z]+(?:\s+[a-z]+)?\s+(?:is|are)\b)"
EN_CHANGE = re.compile(
    r"\b(?:switch(?:ed|ing)?|mov(?:ed|ing)|chang(?:ed|ing)|push(?:ed|ing)?|rais(?:ed|ing)|lower(?:ed|ing)?|"
    r"increas(?:ed|ing)|decreas(?:ed|ing)|reduc(?:ed|ing)|cut(?:ting)?|upgrad(?:ed|ing)|downgrad(?:ed|ing)|"
    r"bump(?:ed|ing)?|slash(?:ed|ing)?|extend(?:ed|ing)?|shorten(?:ed|ing)?|resched(?:uled|uling)?|postpon(?:ed|ing)?|"
    # (a price hiked, not a trail: "hiking in the Alps" changes nothing)
    r"hiked\s+(?:it|them|that|up)\b|hiked\s+(?:the|our|my)\s+(?:price|rent|fee|rate|cost|premium|bill)s?\b|"
    r"delay(?:ed|ing)?|stretch(?:ed|ing)?|migrat(?:ed|ing)|replac(?:ed|ing)|mov(?:e)|became|become|swapp(?:ed|ing)|"
    r"shift(?:ed|ing)?|relocat(?:ed|ing)|transferr(?:ed|ing)|rebook(?:ed|ing)?|reassign(?:ed|ing)?|"
    r"rerout(?:ed|ing)|renam(?:ed|ing)|(?:doubl|halv|tripl|quadrupl|downsiz|upsiz)(?:ed|ing)|"
    # a phrase of time that starts a new state ("going forward", "from now on", "as of Monday")
    r"going\s+forward|from\s+(?:(?:now|here|today|this\s+\w+)\s+on|next\s+\w+|tomorrow)\b|henceforth|"
    r"(?:as\s+of|starting|effective)\s+(?:today|now|immediately|this|next|tomorrow|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday)|"
    # "went" and "gone" move a value ("went up to 9000", "went to 55ms"), not a person ("went to Boston")
    r"(?:went|gone)\s+(?:up|down|from|back)|went\s+to(?=\s+[\d$€£¥])|"
    # "gone" before what one became ("I've gone fully vegan", "we've gone remote"), not where one went
    r"(?:'ve|have|has)\s+gone\s+(?!to\b|into\b|out\b|off\b|over\b|through\b|away\b|home\b|on\b|by\b)|"
    # a direction of change before a value ("down to 77 kg", "back to 9:00"); "up to" is mostly a bound
    r"(?:down|back)\s+to(?=\s+[\d$€£¥])|"
    # a verb of a quantity's change before its new amount ("grew to 9", "the fee rose to £40")
    r"(?:grew|grown|rose|risen|fell|fallen|dropped|climbed|jumped|shrank|shrunk|slipped|dipped)\s+"
    r"(?:(?:up|down|back)\s+)?to(?=\s+[\d$€£¥]|\s+(?:a|an|the|about|around|roughly|just)\s)|"
    # a phrasal verb of change, its object between ("put the rent up to …", "knocked the price down to …")
    r"(?:put|puts|bring|brings|brought|knock(?:ed|s)?|turn(?:ed|s)?)\s+(?:[\w']+\s+){0,3}(?:up|down)\s+to|"
    + _MOVED_IT
    + r"|"
    r"now|nowadays|these\s+days|lately|anymore|any\s+more|instead(?!\s+of)|actually|meant|correction|ended\s+up|"
    # "my new number is …" opening a clause: the value a new thing of the same name holds ("my budget for
    # the new phone is …" is no change)
    rf"(?:^\s*|[,;]\s*){_MY_NEW}|"
    r"mixed\s+(?:it\s+)?up|"
    # a successor said by its anaphor ("my tutor quit, got a new one called …", "a different one")
    r"(?:a|the)\s+(?:new|different|replacement)\s+one|"
    r"no\s+wait|oops|sorry|ugh|updated?|set|configured|"
    r"(?:can|could|will|'ll)\s+(?:go|stretch|do)\s+(?:up\s+)?to)\b",
    re.IGNORECASE,
)
# Owning up to an error ("I had it wrong", "typo", 说错了): what the sentence says corrects what was said
EN_ERROR = re.compile(
    r"\b(?:wrong|mistake|typo|mis(?:typed|spoke|remembered|read|heard|understood|counted|spelled|spelt|"
    r"quoted)|mixed (?:it|that|them|those) up|(?:mix|mixes|mixing) (?:it|that|them|those) up|"
    r"(?:it|that|them|those|things) mixed up|"
    r"my bad|oops|i meant|correction|"
    # taking back what was said ("scratch that figure", "ignore what I said")
    r"(?:scratch|strike|disregard|ignore|forget)\s+(?:that|this|what\s+i\s+(?:said|wrote|told\s+you)))\b",
    re.IGNORECASE,
)
ZH_ERROR = re.compile(r"说错|写错|记错|搞错|弄错|打错|看错|听错|记岔|记混|搞混|弄混|不对|口误|笔误|更正|纠正")


def owns_error(text: str, zh: bool) -> bool:
    """Whether `text` owns up to an error ("scratch that", "I had it wrong", 我记错了)."""
    return (ZH_ERROR if zh else EN_ERROR).search(text) is not None


# the change class's words of time alone ("now", "these days"): a restatement's mark, weaker than a
# verb of change or a correction
# (…and "my new X is": a change of the thing it names, which ties no other thing reworded)
EN_TEMPORAL = re.compile(
    rf"\b(?:now|nowadays|these\s+days|currently|{_MY_NEW})\b",
    re.IGNORECASE,
)
ZH_TEMPORAL = re.compile(r"现在|最近|如今|目前|已经")
# the words that put a value in a role after it ("用MySQL做主库", "X作为备份", "X当备用机")
ZH_ROLE = r"(?:做|作为|当作|当)"
# single words of the change class that end an object ("I take oat milk now")
EN_CHANGE_WORDS = frozenset("now nowadays anymore instead".split())
EN_HEDGE = re.compile(
    r"\b(?:maybe|might|may|perhaps|possibly|probably|potentially|could|would\s+consider|consider(?:ing)?|"
    r"plan(?:ning)?\s+to|hop(?:e|ing)\s+to|(?:would|'d)\s+like\s+to|tempted|wondering|if\s+possible|"
    r"someday|eventually|in\s+the\s+future|(?:would|'d)\s+be\b|"
    # ("Thinking about it, …" before a comma is "on reflection": no hedge)
    r"thinking\s+(?:of|about)(?!\s+it\s*,)|not\s+sure|unsure|likely|hopefully|nothing\s+is\s+signed|"
    r"\w+'d\s+probably|wish(?:es|ed)?|if\s+only|(?:would|'d)\s+love\s+to|dream(?:s|ing)?\s+of)\b",
    re.IGNORECASE,
)
# A cleft names the one value that holds, as "now" does: "Obsidian is where I keep my notes" (the value
# first, the attribute after the wh-word), "what I drive now is a Golf" (the value last)
_WH = r"(?:where|what|who|whom|how)"
EN_CLEFT = re.compile(rf"^(?P<value>.+?)\s+(?:is|are)\s+{_WH}\b(?P<rest>.*)", re.IGNORECASE)
EN_CLEFT_SAID = re.compile(rf"\b(?:is|are)\s+{_WH}\b|^\s*{_WH}\s+(?:i|we)\b.*\b(?:is|are)\b", re.IGNORECASE)
EN_CONDITION = re.compile(r"\b(?:if|unless|in\s+case|provided\s+that|assuming)\b", re.IGNORECASE)
EN_RETIRE = re.compile(
    r"\b(?:no\s+longer|(?:don't|do\s+not|doesn't|didn't|won't|not)\b.*\b"
    r"(?:anymore|any\s+more|at\s+all|after\s+all)|"
    r"no\s+\w+\s+(?:anymore|any\s+more)|no\s+more|"
    r"stop(?:ped)?|quit|closed|cancel(?:l?ed)?|gave\s+up|got\s+rid\s+of|ended(?!\s+up)|expired|lapsed?|"
    r"discontinued|discharged|wrapped\s+up|shelved|called\s+off|signed\s+off(?!\s+on)|done\s+with|ran\s+out|"
    r"(?:didn't|did\s+not|won't|not)\s+renew(?:ed)?|stepped\s+back\s+from|stood\s+down|removed|dropped\s+out|"
    r"cleared\s+out|handed\s+back|shut\s+down|retired|dropped(?!\s+(?:to|by|from)\b)|sold|gave\s+away|unsubscribed|scrapped|ditched|"
    r"(?:turned|switched)\s+off|passed\s+away|died|uninstalled|deleted|left|(?:is|are|'s)\s+gone|"
    r"moved\s+out|decommissioned|step(?:ped|s)?\s+down|resign(?:ed|s)?|withdr[ae]w|pulled\s+out|opted\s+out|giv(?:en|ing)\s+up|abandoned|terminated|wound\s+down|phased\s+out|"
    r"(?:is|are|was|were)\s+over|let\s+(?:[\w']+\s+){1,3}(?:go|expire|lapse)|gave\s+(?:[\w']+\s+){1,3}away|"
    r"giv(?:en|ing)\s+(?:[\w']+\s+){0,3}away|sunset(?:ted)?\s+(?:the|our|my)|returned\s+(?:the|my|our|it|them)\b|"
    r"(?:fizzled|petered)\s+out|parted\s+ways|(?:'m|am|'re|are|is|'s)\s+off\s+(?:the|my|our|his|her|their)\b|"
    # a thing passed on to someone, as 送给…了 ("we gave the old sofa to my cousin")
    r"gave\s+(?:the|my|our|his|her|their)\s+(?:[\w'-]+\s+){1,2}to(?=\s+(?:a|an|the|my|our|his|her|their|[A-Z]))|"
    r"paid\s+(?:it\s+|them\s+)?off|"
    # a phrasal verb of ending around its object ("switched the spare router off", "phased the v1 API out")
    r"(?:shut|switched|turned|wound|phased|closed|tore|torn)\s+(?:the|my|our|that|this|those|these|it|them)\b"
    r"(?:\s+[\w'-]+){0,3}?\s+(?:down|off|out)\b|"
    r"(?:made|paid)\s+the\s+(?:final|last)\s+(?:payment|instal?l?ment)|killed|axed|nixed|binned|dumped|"
    r"(?:you\s+can|please|just)\s+(?:drop|skip|scrap|ditch)|"
    # lost or passed on ("got stolen", "rehomed", "written off"), a medicine stopped ("came off the pill")
    r"stolen|rehomed|re-homed|written\s+off|totall?ed|"
    r"(?:took|taken|takes|came|come|coming)\s+(?:(?:me|us|him|her|them)\s+off|off\s+(?:the|my|our|his|her|its|their))\b)\b",
    re.IGNORECASE,
)
EN_ADDITIVE = re.compile(r"\b(?:also|too|as\s+well|in\s+addition|another|additionally)\b", re.I)
# Saying a thing keeps its value ("parking hasn't changed", "the rest is unchanged", "same dentist as
# before", "stays as it was", 酒店不变, 周末照旧): what it names is still true, whatever its sibling
# clauses change
EN_UNCHANGED = re.compile(
    r"\b(?:unchanged|untouched|(?:has|have|had|did|does|do|is|are)(?:n't|\s+not)\s+(?:chang|mov)\w*|"
    r"(?:stays?|stayed|remains?|remained|is|are|'s)\s+(?:still\s+)?(?:the\s+same|as\s+(?:is|it\s+was|they\s+were"
    r"|before))|same\s+(?P<thing>(?:[\w-]+\s+){0,2})as\s+(?:before|always|ever)|still\s+(?:on|at|in|with)\s+the\s+same)\b",
    re.IGNORECASE,
)
# people a statement may be about other than the speaker ("my sister's city", "my son is allergic")
EN_PEOPLE = frozenset(
    """wife husband partner son daughter kid kids child children mother mom mum father dad parents
    parent sister brother sibling grandma grandpa grandmother grandfather aunt uncle cousin niece nephew
    colleague coworker friend neighbour neighbor roommate flatmate boyfriend girlfriend fiance fiancee
    in-laws mother-in-law father-in-law""".split()
)
# the speaker, "the user" as the distiller writes it included
EN_SELF = frozenset("i me my mine myself we us our ours ourselves user user's".split())
# words that carry no attribute: function words, discourse markers, change and hedge words, generic
# adjectives ("new", "monthly") that do not tell one attribute from another
EN_NOISE = frozenset(
    """a an the this that these those it its it's i me my we our us you your he she they them his her their
    is are was were be been being am 's 're 've 'm 'd have has had do does did will would shall should can
    could may might must to of in on at by with from as about into than then there here for and or but so
    just really actually now currently these days nowadays anymore also too well still already yet very
    new old current latest usual usually monthly weekly daily yearly annual nightly white black red blue
    green yellow grey gray silver fully totally pretty quite every each per a.m. p.m. everything everyone
    everybody everything's all both one ones who whom whose which where what
    around about approximately roughly
    maybe might perhaps probably possibly if not no yes big news oh ugh oops sorry wait meant mean please
    okay ok think guess firm most least max maximum minimum up down over under again since ago last next
    yesterday today tomorrow week weekend month year time all at lot get got gotten go going went set
    i'm i've i'd i'll we're we've we'd it's that's there's don't doesn't didn't can't won't isn't
    aren't wasn't he's she's they're they've he'd she'd they'd you're you've""".split()
)

# The words after an ordinal that leave it a day of a month ("the 4th of May", "the 2nd to the 4th", "the
# 14th, so …", "the 3rd works"); any other lower-case word after it makes it count a noun ("the 7th floor")
AFTER_A_DAY_EN = frozenset(
    """of to and or at in on for through till until so but because instead now this next then from by as is
    was when if with please again work works""".split()
)
# Interjections: a clause of one of them alone ("Ha, …", "Welp, …") states nothing, and is no name
EN_INTERJECTIONS = frozenset(
    """ha haha hah heh hehe lol lmao hmm hm huh yeah yep yup yea nope nah welp phew whoa wow ugh oops meh
    ah aha oh ooh aw aww ok okay uh um umm er erm eh argh yikes gosh jeez""".split()
)

# --- Chinese -----------------------------------------------------------------------------------------
# (the old side is a value: a short phrase of one clause, no 的 — "从成都回来的航班改到…" names no old value)
ZH_FROM_TO = re.compile(
    r"从(?P<old>[^的，。,；;！!？?]{1,12}?)(?:改成|改为|改到|换成|换到|变成|变为|涨到|涨至|升到|升级到|加到|增加到|提高到|"
    r"降到|降至|减到|减少到|调到|调整到|调成|推迟到|延后到|延期到|提前到|搬到|搬去|迁到|迁移到|扩到|"
    r"缩到|到)(?P<new>.+)"
)
ZH_INSTEAD = re.compile(r"(?:而不是|不是|不要|别|不用|不再用|代替|取代)(?P<old>[^，。,；;！!]+)")
ZH_CHANGE = re.compile(
    r"改成|改为|改到|换成|换到|换了|变成|变为|转到|转去|转学|改签|[涨降加调]价|涨到|升到|升级|加到|提高到|降到|减到|调到|调整|推迟|延后|"
    r"延期|提前到|挪到|挪去|改期|顺延|延到|改在|搬到|搬去|搬家|改用|换用|扩到|缩到|入职|跳槽|现在|最近|如今|目前|已经|其实|说错|不对|更正|"
    r"记错|搞错|弄错|纠正|(?:可以|能|愿意)(?:出|加|涨|提)?到|"
    # a verb of altering with a result complement: whatever the verb, the thing ends as the value
    # ("续成五年", "缩至三天", "增到20人"); 提到 (mentioned) is no change
    # 换 with what it changes before 了 ("换健身房了", "换工作了"): that thing changed; a new thing of
    # the same name ("新号码是…", "新地址：…")
    r"换[\u4e00-\u9fff]{1,4}了|(?:^|[，,。])新(?=[\u4e00-\u9fff]{1,3}(?:是|为|[:：]))|"
    # 改 before a one-character verb: now done another way or with another thing (改坐国航, 改喝茶)
    r"改(?=[坐乘搭骑吃喝])|"
    r"[改换变调转升降涨加减增缩扩挪推延续迁]了?(?:成|为|至)(?!为止)|[改换调转升降涨加减增缩扩挪推延续瘦胖跌迁]了?到|"
    # precisely speaking (准确地说是…): what follows corrects what was said
    r"(?:准确|确切|严格)(?:地|来)说|减半|翻倍|加倍|以后(?=每|都|就|改|统一)|(?:周|月|年|天|号|日)起(?![来床身])"
)
ZH_HEDGE = re.compile(
    r"可能|也许|或许|说不定|大概会|考虑|看情况|不一定|还没定|未定|打算|计划|希望|争取|将来|有望|"
    r"(?:要是|如果|假如)[^，。,]*就好了|梦想"  # a wish ("要是能搬到海边就好了")
)
ZH_CONDITION = re.compile(r"如果|要是|假如|万一|的话|只要|倘若")
ZH_RETIRE = re.compile(
    r"不再|没再|不.{0,12}了[。！!]*$|没.{0,3}了[。！!]*$|到期了|关了[。！!]*$|吊销|辞了|"
    r"退订|停用|不续|没续|已经停|停了|停掉|取消了|作废|注销|关掉|关闭了|"
    r"戒.{0,6}了|没有了|不用了|退掉|退了|退出|销户|下线|搬出去|搬走了|放弃|停办|废弃|解约|退租|"
    r"卖掉了|结束了|黄了|砍掉|卸任|辞去|辞掉|退掉|退订|下线了|停掉了|拆掉|撤掉|撤销|换掉|下掉|终止|退货|散了[。！!]*$|"
    # giving a thing up: sold, given away, passed on, thrown out
    r"卖了[。！!]*$|送人了?|转手了|转卖了|扔了|扔掉|处理掉了|捐掉|捐了[。！!]*$|"
    # passed on to someone, lost, stolen or written off (送给亲戚了, 被偷了, 弄丢了, 报废了)
    r"(?:送|卖|转|让)给[^，。！]{1,8}了[。！!]*$|被偷|被盗|弄丢|丢了[。！!]*$|报废|"
    # the Chinese of the English class's other endings: left a job or a school, paid off, moved out,
    # died, uninstalled or deleted, broke up, taken off the market
    r"离职|辞职|退休|退学|毕业了|还清|还完了|付清|结清|搬出|搬离|去世|过世|死了|卸载|删了|删掉|删除了|"
    r"分手|离婚|停产|停运|关停|下架"
)
ZH_UNCHANGED = re.compile(
    r"不变|没变|没有变|没改|没有改|不改|照旧|照常|老样子|原样|(?:跟|和|与)(?:原来|以前|之前)一样|没动"
)
# A choice said as the one a person keeps to (我平时用的手机, 看病一般都去, 主力机): an attribute holding one
# thing at a time
ZH_HABITUAL_CHOICE = re.compile(
    r"平时|一般都|基本都|基本上都|一直|主力|都是|总是|每次都|常用|通常|默认|只用|只在|只去"
)
# A choice said for a while only (这周临时, 暂时, 先用): an exception to the usual one
ZH_FOR_A_WHILE = re.compile(r"临时|暂时|这周|这次|今天|这几天|这阵子|先用|先去|到.{0,6}为止")
# the words of it as jieba cuts them (还 of 还款 and 也 of 也许 are none)
ZH_ADDITIVE_WORDS = frozenset("还 也 又 另外 此外 还有 也有 还会 也会 也在 还在".split())
ZH_ADDITIVE = re.compile(r"^(?:我|我们)?(?:还(?!是)|也|另外|此外|又)|还会|也在|还有|也有|另外")
ZH_GENERIC_VERBS = frozenset(
    "喜欢 通知 知道 觉得 需要 打算 准备 应该 希望 可以 能够 已经 现在 告诉 记得 帮忙 考虑 愿意".split()
)
ZH_PEOPLE = (
    "老婆 老公 妻子 丈夫 爱人 媳妇 儿子 女儿 孩子 父母 爸爸 妈妈 爸 妈 父亲 母亲 哥哥 姐姐 弟弟 妹妹 "
    "爷爷 奶奶 外公 外婆 同事 朋友 室友 邻居 男朋友 女朋友 婆婆 公公 岳父 岳母 隔壁"
).split()
# matched longest first: 男朋友 before 朋友, 妈妈 before 妈
ZH_PEOPLE_LONGEST_FIRST = tuple(sorted(ZH_PEOPLE, key=len, reverse=True))
# one-character kin after "my" (我哥, 我姐, 我的弟弟 is in ZH_PEOPLE already)
ZH_KIN = re.compile(r"(?:我|我的)(?P<who>哥|姐|弟|妹|叔|舅|姨|姑|嫂)(?![哥姐弟妹])")
ZH_SELF = ("我们", "我", "咱们", "用户")  # 用户: the speaker, as the distiller writes it
# Characters that carry no meaning of a word's own (particles, pronouns, measure words, 新 and 旧)
ZH_FUNCTION_CHARS = frozenset(
    "的了是在我们你他她它这那个一有和与也还都就会要想能把被给对从到跟说下吧呢啊新旧"
)
ZH_NOISE = frozenset(
    "的 了 是 在 我 我们 用户 你 他 她 它 这 那 个 一 一个 一台 一辆 有 和 与 "
    "也 还 都 就 会 要 想 能 可以 把 被 给 "
    ""
    "对 从 到 跟 说 下 现在 最近 已经 其实 如果 要是 的话 可能 也许 或许 吧 呢 啊 啦 呀 嘛 哦 了 过 着 "
    "白色 黑色 红色 蓝色 绿色 黄色 灰色 银色 紫色 粉色 每 每个 每天 每周 每月 每年 一下 一点 "
    "这次 那个 这个 定 定了 通知 一般 平时 再 又 刚才 说错 不对 "
    "直属 直接 更正 告诉 记得 跟你说 上个月 下个月 这个月 上周 下周 今年 去年 明年 "
    "刚好 正好 一直 总是 经常 通常 比较 非常 特别 还是 就是 只是 都是 "
    # degree and frequency words jieba tags as nouns (基本都是…, 主要是…)
    "基本 基本上 主要 大概 大多 大部分 多半 一共 总共 一起 差不多 准确 确切 全 全部 全都 所有 "
    # connectives opening a clause (还有啊，…; 另外，…)
    "还有 另外 对了 顺便 然后 而且 并且 此外 同时 "
    # when a state begins (从一月开始, 下周起)
    "开始 起".split()
)

# A reported statement ("The user says …", 用户说…): the claim is what is reported; the reporting frame
# would make every statement of one speaker look alike.
REPORTED = re.compile(
    r"^\s*(?:(?:the )?(?:user|assistant)|[A-Z][\w'-]*(?: [A-Z][\w'-]*)?|(?:my|our|the user's)\s+"
    r"(?:boss|manager|doctor|landlord|teacher|coach|colleague|partner|wife|husband))\s+"
    # ("reports to" is a relation: "the user reports to Priya now")
    r"(?:says|said|adds|added|mentions|mentioned|notes|noted|asks|asked|reports(?!\s+to\b)|reported(?!\s+to\b))"
    r"(?:\s+that)?\s*[:,]?\s+"
    r"|^\s*(?:用户|助手|客服)(?:说|问|提到|表示|补充)(?:道)?[：:，,]?"
    r"|^\s*(?:领导|老板|上司|经理|医生|大夫|老师|房东|物业|同事|朋友|老婆|老公|他|她)(?:说|讲|通知我)[：:，,]?",
    re.IGNORECASE,
)


# 用户 as the distiller writes the speaker ("有事请打电话通知用户"): the speaker, never a value; not
# the users of a product (用户数, 用户量)
SPEAKER_ZH = re.compile(
    r"用户(?![数量群名体验反馈需求画像增长留存们]|服务|中心|系统|模块|协议|管理|端|侧|表|库)"
)


# What the distiller writes into a unit that no claim says. The date beside a relative time phrase
# ("next month (2026-12)", 下周（2026-12-07那一周）): the phrase is the clause's own, the note would be read
# as its value.
DATE_NOTE = re.compile(r"\s?[（(](?:the week of )?\d{4}(?:-\d{2}(?:-\d{2})?)?(?:那一周)?[）)]")
# The question a distilled unit answers, quoted after it ("… (replying to the assistant's question
# "…")", "…（回复助手的问题“…”）"): the other speaker's words, no claim of this one.
REPLY_QUOTE = re.compile(r"\s*(?:\(replying to [^()]*\)|[（(]回复[^（）()]*[）)])$")

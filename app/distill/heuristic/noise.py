"""What is not a claim, as tables (read by `clean.py`): wrapping and openings taken off a claim,
pleasantries, small talk, reactions and offers that make no unit, echoes, sentences joining claims, and
words that are never an entity's name."""

from __future__ import annotations

import re

# Leading greetings and discourse markers: they frame the claim and go ("Actually, if …" → "If …").
# Their meaning was read from the whole sentence first (the `correction` rule, the hedges).
WRAPPING_EN = re.compile(
    r"(?:(?:hi|hello|hey|hiya|wow|woah|whoa|aw+|ooh|omg|haha|yay|well|oh|ah|okay|ok|um+|uh+|hmm+|hm|er|erm|yes|"
    r"ugh|argh|meh|phew|yikes|oof|ouch|damn|darn|"
    r"yeah|yep|no|nope|sorry|anyway|anyways|btw|by the way|oh right|oh wait|i mean|you know|honestly|"
    r"to be honest|basically|also|plus|so|and|but|actually|wait|correction|scratch that|let me correct "
    r"(?:that|myself)|gracias|merci|danke|ciao|cheers|just so you know|for the record|fyi|"
    r"great|cool|lovely|brilliant|excellent|wonderful|awesome|fantastic|"
    r"thanks(?: (?:so|very) much| a lot| a bunch)?|thank you(?: (?:so|very) much)?|alright|right|sure|"
    r"one more thing|quick question|"
    r"understood|got it|noted|of course|certainly|absolutely|perfect|"
    # who is addressed after it: a capitalised name or a word of address ("Hey Sam,", "Thanks, everyone,");
    # "Ugh, no," is two markers, the second read alone
    r"(?:just )?to be clear)(?:,?\s+(?:there|(?-i:[A-Z][a-z]+)|everyone|everybody|all|team|guys|folks|"
    r"mate|buddy|dear|please))?\s*[,!.:;-]+\s*"
    r"|(?:actually|well|so|oh|also|anyway|by the way|btw|and|but|plus|um+|uh+|hmm+|basically|honestly)\s+"
    # a heading of a few words before a colon ("Big news:", "Heads up:", "Quick update before I forget:")
    r"|(?:[a-z]+\s+){0,2}(?:news|update|heads\s+up|fact|note|reminder|question|thing|tip|alert)"
    r"(?:\s+[a-z']+){0,4}\s*:\s*)",
    re.IGNORECASE,
)
# Openings that say the sentence corrects an earlier one (the unit gets the `correction` tag), and
# hedges (a lower confidence): read, then taken off like any other wrapping.
CORRECTION_OPENING_EN = re.compile(
    # (a correction as a heading: "Small correction on the dates:")
    r"(?:(?:sorry|oops|no|wait),?\s+)?(?:i meant|i mean(?=,)|"
    r"(?:[a-z]+\s+)?correction(?:(?:\s+[a-z']+){1,4}(?=:))?|scratch that|let me correct"
    r"(?: that| myself| what i said(?: earlier| before)?)?|i misspoke(?: earlier| before)?|i was wrong|"
    r"my (?:mistake|bad)|i said \w+(?: \w+)? (?:before|earlier)(?:,? but)?|i got (?:it|that) wrong|"
    r"make (?:that|it)|actually|wait(?=,?\s+(?:no|it'?s|my|the)\b)|no(?=,\s+(?:it'?s|the|my)\b))"
    r"\s*[,!.:;-]*\s*",
    re.IGNORECASE,
)
HEDGE_OPENING_EN = re.compile(
    r"(?:maybe|perhaps|probably|possibly|hopefully|i think|i guess|i suppose|i believe|kind of|sort of)"
    r"\s*[,]?\s+",
    re.IGNORECASE,
)
WRAPPING_ZH = re.compile(
    r"(?:(?:你好|您好|嗨|哈喽|等等|等一下|[哦噢喔]?对了|话说|(?:帮我|请|麻烦)?(?:记一下|记下|记住)|其实吧|其实|实际上|实际(?=[\u4e00-\u9fff]{2})|就是说|不对|说错了|我更正一下|更正一下|我纠正一下|纠正一下|"
    r"顺便说一下|顺便|另外|此外|而且|并且|不过|但是)"
    r"[，,。！!、：:\s]*"
    r"|(?:嗯+|哦+|噢|喔|呃|额|哎|唉|诶|欸|啊|好的|好吧|好了|还有|然后|所以|那个|更正|喂|是的|对|明白了?|了解了?|收到|"
    r"没问题|好)[，,。！!、：:…]+"
    # a hum that is never a word's first character, typed without a pause ("嗯我想想")
    r"|(?:嗯+|呃+)(?=[\u4e00-\u9fff]))"
)
CORRECTION_OPENING_ZH = re.compile(
    # (an interjection may stand before it unpunctuated: 哦我说错了; the verbs of owning an error as the
    # claims read them: 说/记/搞/弄/写/看/听/打 + 错/岔/混)
    r"(?:哦|噢|哎呀|哎|唉|呃|啊|嗯)?[，,]?"
    r"(?:(?:不好意思|抱歉)[，,]?)?(?:不对|我?(?:刚才|之前|前面)?我?(?:[说记搞弄写看听打](?:错|岔|混)了)|"
    r"我?(?:更正|纠正)一下(?:(?:之前|刚才|前面)的?(?:说法|信息)?)?|更正|纠正|我是说|我的意思是|"
    r"(?:准确|确切|严格)(?:地|来)说(?:的话)?|"
    # 其实 ("in fact") is a discourse marker; before a comparison or a contrast it corrects ("其实我更喜欢…")
    r"(?:其实|实际上)(?=[^。！？]*?(?:更|而不是|不是|才是))|"
    r"不好意思[，,]?(?=是|应该))[，,。！!、：:\s]*"
)
HEDGE_OPENING_ZH = re.compile(r"(?:可能|也许|大概|好像|我觉得|我想想|估计|或许)[，,…]*")
# Pleasantries, offers, apologies and closings (either role): no unit.
PLEASANTRY_EN = re.compile(
    r"^(?:go ahead|hold on|one moment|just a (?:moment|sec(?:ond)?|minute)|let me (?:think|check)|"
    r"i'?ll (?:wait|think about it))\b|"
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
    # closings and thanks for what was done ("that's everything for today", "cheers for sorting that")
    r"^(?:that'?s|that is|that was) (?:all|everything|it)(?: for (?:now|today|this week))?"
    r"(?: from me)?[.!]*$|"
    r"^(?:thanks|thank you|cheers|many thanks)(?: (?:so|very) much)?(?: for (?:sorting|handling|fixing|"
    r"helping|checking|looking into|doing) (?:that|this|it|me|everything)(?: out)?)?[.!]*$|"
    r"\bthanks? (?:you )?for (?:contacting|reaching out to|calling|choosing|your patience)\b|"
    r"^(?:this is|you'?ve reached|welcome to) .{1,30}\b(?:support|customer service|help ?desk|team)\b|"
    # wishes, and the note that what the user said was recorded ("I've updated your preferences")
    r"^(?:i )?hope (?:the|your|you|it|this|everything)\b|^enjoy (?:your|the)\b|^good luck\b|"
    r"^have (?:fun|a (?:safe|great|good|nice|lovely))\b|"
    r"\b(?:updated|noted|saved|recorded|logged|made a note of)\b.{0,24}\b(?:preferences?|profile|notes?|"
    r"details|info(?:rmation)?|records?|file)\b|^(?:noted|i'?ve noted|i'?ve made a note of) (?:that|it)\b",
    re.IGNORECASE,
)
PLEASANTRY_ZH = re.compile(
    r"有什么(?:可以|能|需要)?(?:帮|为|帮助)(?:您|你)|还有(?:什么|其他)(?:可以|需要|能)|"
    r"很高兴(?:为您|帮您|能帮|为你|帮你|认识)|(?:非常|很)?(?:抱歉|对不起)[，,]?(?:给您|让您|打扰)|祝您|祝你|"
    r"随时(?:联系|告诉|找)|^不客气|^没关系|辛苦了|^好的[，,]?(?:已|我)(?:经)?(?:记录|记下|了解|明白|知道)|"
    r"^(?:收到|明白|了解)了?$|^已(?:经)?(?:为您|帮您)?(?:记下|记录|修改|更新|收到|备注)了?[。！.!]?$|"
    r"^这里是.{1,12}(?:客服|助手|服务|中心)|^我是.{0,10}(?:客服|助手)|"
    r"(?:更新|记录|记下|备注|保存)(?:好)?了?(?:您|你)的(?:偏好|资料|信息|要求|习惯)"
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
    much so own us way ever even bit little always never too more most sharing glad hear take look
    understand understood frustrating frustration annoying inconvenience patience wait waiting question
    questions ask asked asking customers choice option options help helping walk through process happen
    happens happened sense worry worries hold on ahead works think moment minute second""".split()
)
SMALL_TALK_ZH = re.compile(
    r"太好了|太棒了|真不错|不错|真棒|好棒|厉害|加油|辛苦|谢谢|感谢|哈哈|好的|没问题|当然|是啊|对啊|确实|有道理|"
    r"原来如此|这样啊|那就好|好主意|听起来|很好|挺好|非常|特别|真的|真|很|呀|啊|吧|呢|了|的|你|您|哇|棒|"
    r"理解|心情|着急|不便|耐心|等待|重视|这种情况|确实|让人|"
    # managing the conversation: agreeing, deferring, waiting, thanking ("就按你说的办", "稍等，我找一下")
    r"就这样|就按|说的办|考虑一下|再想想|等(?:你|您)的?消息|稍等|等一下|找一下|麻烦(?:你|您)|帮助|那就|这样|再|那|我|行|可以"
)
# Words that only manage the conversation (thinking it over, looking, asking later, understanding,
# declining): a Chinese sentence of these and function words says nothing to recall ("让我想想", "回头再聊")
CHAT_WORDS_ZH = frozenset(
    """想 想想 想一想 考虑 考虑考虑 琢磨 看 看看 瞧瞧 说 聊 再聊 回头 问 问问 懂 明白 知道 了解 清楚 收到
    谢谢 感谢 多谢 解释 意思 不用 不必 只能 算了 让 晚点 一会 一会儿 再来 来 好 行 对 对对 可以 没事 没关系
    不急 不着急 着急 等 等等 稍等 先 这样 那样 是 是的 嗯 哦 唉 哎 呃 嘛""".split()
)
# Function words by jieba's part of speech: pronouns, adverbs, particles, modal and interjection words,
# prepositions, conjunctions, measure words, punctuation
CHAT_FUNCTION_POS = ("r", "d", "u", "y", "e", "p", "c", "q", "x")
# Idioms that defer, dismiss or acknowledge within the conversation ("I'll sleep on it", "never mind",
# "fair enough"): what is left of a sentence without them is what it says
DEFERRAL_EN = re.compile(
    r"\b(?:get back to (?:you|me)|sleep on it|think (?:it|this|that) (?:over|through)|let (?:you|me) know|"
    r"never ?mind|fair enough|forget (?:i|that i) (?:asked|said (?:it|that|anything))|"
    r"give me (?:a|one) (?:sec|second|minute|moment)|(?:come|check) back (?:later|tomorrow|soon)|"
    r"not sure yet|(?:that |it )?makes (?:total |perfect |complete )?sense|leave it (?:there|at that)|"
    r"that'?s (?:all|everything|it) for (?:now|today))\b",
    re.IGNORECASE,
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
    r"已(?:经)?(?:记录|记下|记住|确认|收到|了解)|(?:帮您|为您)?记(?:录|下)|以内|以下|左右|您说|你说|提到|"
    r"(?:帮您|为您|跟您)?(?:总结|确认|核对|复述|汇总|重复)一下"
)

# A read-back: the speaker repeats what was agreed ("Just to confirm: …", "So that's …", "我总结一下",
# "帮您核对一下"). What it holds is an echo of the whole conversation so far, not only of the last turns.
RECAP = re.compile(
    r"\b(?:(?:just )?to (?:confirm|recap|sum up|summari[sz]e)|"
    r"let me (?:confirm|recap|repeat|read (?:that|it) back|summari[sz]e)|"
    r"so that'?s|so that (?:is|makes)|to double-check)\b|"
    r"(?:总结|确认|核对|复述|汇总|重复)一下|跟您(?:确认|核对)|也就是说",
    re.IGNORECASE,
)

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

# An assistant's offer to act ("I'll look for hotels", "Let me check", "我会…", "我来…"): no claim yet
PROMISE = re.compile(
    r"^(?:I'll|I will|I can|let me|I'm going to|(?:I'm |I am |I'd be )?(?:happy|glad) to|"
    r"我会|我来|我这就|我马上|稍后|我可以)"
    r"|\b(?:will|'ll) (?:let you know|notify you|get back to you|keep you (?:posted|updated)|update you)\b"
    r"|(?:会|将)[^，。]{0,8}(?:通知|联系|告知|回复|答复)(?:您|你)|^(?:下次|以后|之后)?(?:会|将)(?:优先|尽快|及时)?(?:安排|处理)"
    # the listener asked to wait, tell or rate: the conversation's own business ("Please hold", "Please
    # share the reference", "请稍等", "请您提供订单号")
    r"|(?:^|[，；,;]\s*)(?:请|麻烦|(?:您|你)?(?:如果)?方便的话[，,]?)(?:您|你)?(?:先|再)?"
    r"(?:稍等|稍候|耐心|等待|等一下|提供|告诉|发一下|确认一下|打分|评价)"
    r"|(?:^|[,;]\s*)(?:please|kindly)\s+(?:hold|wait|bear with|provide|give me|send me|share|confirm|rate|"
    r"tell me|let me know)\b",
    re.IGNORECASE,
)
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
# What the assistant tells the user about their own things is no encouragement ("Your refund was approved")
_SERVICE_OBJECTS = (
    "order|account|refund|booking|ticket|plan|subscription|package|parcel|appointment|payment|card|password|"
    "request|application|claim|reservation|flight|visa|invoice|delivery|device|laptop|phone|certificate|"
    "license|licence|policy|test drive|replacement"
)
# Encouragement and support between friends ("Keep it up!", "You got this", "I'm proud of you"), and
# what is said to the other about themselves ("Your patience will be rewarded"): small talk unless it
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
    r"^(?:you|your(?! (?:" + _SERVICE_OBJECTS + r")\b)|you'?re|you'?ve|you'?ll|you'?d)\b|"
    r"^(?:(?:i'?m|so|really|i am)\s+)*glad\b|"
    r"\bappreciate (?:your|the|it|you|that)\b|\bthanks? (?:you )?(?:so much )?for\b|\bhad a blast\b|"
    r"\bis the best\b|\blife'?s too short\b|\bsounds like\b|^let'?s\b|\bmake a (?:real |big )?difference\b|"
    r"^(?:nice one|good on you|well done|great job|good job|nice job|awesome job)\b|\bso talented\b",
    re.IGNORECASE,
)

# Light verbs and pointing words: a clause made of nothing else says nothing of its own ("I'll give that a
# try", "Can you explain that again?", "我试试看", "这个怎么弄"); it is talk about what was just said
LIGHT_EN = frozenset(
    """do does did done doing get gets got getting make makes made take takes took give gives gave go goes
    went going try tries tried trying check checks checked look looks looked see sees saw start started
    starting begin continue explain repeat help sense means mean out later again now soon first then
    that's it's that this these those it them things thing""".split()
)
LIGHT_ZH = re.compile(
    r"试试看|试试|试一下|看看|看一下|弄|搞|问问|问一下|咨询一下|咨询|了解一下|一下|这个|那个|这样|那样|怎么|什么|"
    r"知道了|知道|开始吧|开始|继续|原来|考虑考虑|考虑|[那也再我你您他她它们的了吧呢啊吗？?，。！!、\s]"
)

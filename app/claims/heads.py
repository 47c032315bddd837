"""The attribute heads claims are read with: the relation verbs and the few attribute nouns every domain
shares (English and Chinese), the tag slots and the value types that fill them. Every entry is a word
of the language, never a phrase from a data set."""

from __future__ import annotations

import re

# The relation verbs (a closed class: works at, reports to, lives in, uses, owns, belongs to, manages,
# depends on, has a problem; 在…工作, 向…汇报, 住在, 用的是, 属于, 负责, 有…问题) and the few attribute
# nouns every domain shares; any other wording is compared by its frame (app/claims/frames.py).
# one word of manner between a relation verb and its preposition ("report straight to", "moved back to")
_MANNER = r"(?:\s+(?:\w+ly|straight|back|up|down|over|out|away|now|still|full-time|part-time))?"
# verbs whose role follows "as" ("I work as a pharmacist", "hired as an intern")
ROLE_VERBS_EN = tuple("work works worked working employed hired serve serves served".split())
RELATIONS_EN = [
    (
        re.compile(
            rf"\b(?:work(?:s|ed|ing)?{_MANNER}\s+(?:at|for)|employed\s+(?:at|by)|joined|employer|"
            r"start(?:ed|ing)\s+(?:(?:a\s+)?(?:new\s+)?(?:job|work(?:ing)?|role)\s+)?at|"
            r"(?:took|got|landed|accepted|taken)\s+(?:a\s+|the\s+)?(?:new\s+)?(?:job|position|role|post)\s+(?:at|with))\b",
            re.I,
        ),
        "employer",
    ),
    # (not a role the speaker holds: "I'm an account manager now")
    (
        re.compile(
            rf"\breport(?:s|ed|ing)?{_MANNER}\s+to\b|"
            r"^(?!.*\b(?:a|an)\s+(?:[\w-]+\s+){0,2}(?:manager|boss)\b).*?\b(?:manager|boss)\b",
            re.I,
        ),
        "manager",
    ),
    (
        re.compile(
            rf"\b(?:live[sd]?{_MANNER}\s+(?:in|at)|living{_MANNER}\s+in|reside[sd]?\s+in|based\s+in|"
            rf"mov(?:ed|ing){_MANNER}\s+to|relocat(?:ed|ing){_MANNER}\s+to|settled\s+in|home\s+is\s+in|"
            r"rent(?:s|ed|ing)?\s+(?:an?\s+|the\s+|my\s+|our\s+)?(?:[\w-]+\s+){0,2}?"
            r"(?:house|flat|apartment|place|room|studio|home|cottage)\s+in)\b",
            re.I,
        ),
        "address.home",
    ),
    (re.compile(r"\b(?:allergic\s+to|allergy)\b", re.I), "allergy"),
    # money kept for a thing is its budget ("set aside $900 for a phone", "can spend up to 300 on it")
    (
        re.compile(
            r"\b(?:budget|(?:set|put)(?:ting)?\s+aside|earmark(?:ed)?|(?:can|could|willing\s+to)\s+spend)\b",
            re.I,
        ),
        "budget",
    ),
    (re.compile(r"\b(?:uses?|using|used|runs?\s+on|built\s+on)\b", re.I), "uses"),
    # "own" after a possessive is no verb ("its own bucket", "my own car")
    (
        re.compile(
            r"(?<!\bits\s)(?<!\bmy\s)(?<!\bour\s)(?<!\bhis\s)(?<!\bher\s)(?<!\byour\s)(?<!\btheir\s)"
            r"\b(?:own(?:s|ed)?)\b",
            re.I,
        ),
        "owns",
    ),
    (re.compile(r"\bbelong(?:s|ed)?\s+to\b", re.I), "belongs_to"),
    (re.compile(r"\bdepend(?:s|ed)?\s+on\b", re.I), "depends_on"),
    (
        re.compile(r"\b(?:has|have|had|hit)\b.{0,30}\b(?:bugs?|issues?|problems?|outages?|defects?)\b", re.I),
        "has_issue",
    ),
    (
        re.compile(r"\b(?:(?:is|are|was|were|'s)\s+called|named|name\s+is|name's|goes\s+by)\b", re.I),
        "name",
    ),
    (
        re.compile(rf"\b(?:(?:{'|'.join(ROLE_VERBS_EN)})\s+as|occupation|profession)\b", re.I),
        "occupation",
    ),
]
RELATIONS_ZH = [
    (
        re.compile(r"在(?P<v>[^在]{2,12}?)(?:工作|上班|任职|就职)|(?:入职|跳槽到|加入)(?P<v2>.+)"),
        "employer",
    ),
    (re.compile(r"向(?P<v>.{2,4}?)汇报|(?:领导|上司)是(?P<v2>.+)|领导|上司|汇报"), "manager"),
    (
        # (住 before its place after a person or opening the clause: "我们现在住福田", "…，现在住福田")
        re.compile(
            r"(?:住在|搬到|搬去|家在|家住|租住在|租在|(?:租的)?(?:房子|公寓)在)(?P<v>.+)"
            r"|(?:^|我们|我|咱们|咱家)(?:现在|目前|如今|也|还|一直|都)?住(?!在|院|宿|了|过|不|得|酒店|宾馆|民宿|旅馆|客栈|[一二两三四五六七八九十几\d])(?P<v2>.+)"
        ),
        "address.home",
    ),
    (re.compile(r"过敏"), "allergy"),
    (re.compile(r"预算"), "budget"),
    (re.compile(r"用的是|改用|换用|使用|在用"), "uses"),
    (re.compile(r"属于"), "belongs_to"),
    (re.compile(r"负责"), "manages"),
    (re.compile(r"依赖"), "depends_on"),
    (re.compile(r"有.{0,8}(?:bug|BUG|问题|故障|漏洞|缺陷)"), "has_issue"),
    # a name: 叫 before two to four characters that end the clause (叫王雨萱; not 叫外卖, 叫车)
    (
        re.compile(
            r"(?:名字(?:是|叫)|名叫|叫做|(?<![把被给让])叫(?!外卖|车|醒|好|人|我|你|他|她))"
            r"(?P<v>[\u4e00-\u9fff]{2,4})(?=[，。！,!；;\s]|$)"
        ),
        "name",
    ),
]
# Tags that name a single-valued slot, and the value types that fill it
TAG_HEADS = {"constraint.budget": "budget"}
TAG_HEAD_VALUES = {"budget": ("amount", "number")}
# Relations whose object is a name (a place, a person, an organisation): a date or an amount after
# "moved to" is no address ("Football moved to Sundays").
NAME_HEADS = frozenset({"employer", "manager", "address.home", "name"})
# Relations a person holds of their own (not a name, the cat's, nor 住 of a trip's hotel): the clause
# before narrows none of them ("Background for the review doc, my manager is …")
PERSONAL_HEADS = frozenset({"employer", "manager", "occupation"})
# Relations whose object is named (a place, a person, an organisation, a product)
NAMED_OBJECTS = NAME_HEADS | {"uses", "owns", "belongs_to", "depends_on"}
# Relations one subject holds many objects of (uses Slack and Jira, owns a car and a bike, allergic to
# two things): a new object replaces an old one only when the statement says it changes.
MULTI_VALUED_HEADS = frozenset(
    {"uses", "owns", "belongs_to", "depends_on", "allergy", "manages", "has_issue"}
)
# words of the relation table that name the relation, not its object (left out of the qualifier)
RELATION_WORDS = frozenset(
    """work employ employer report manag boss live resid move allerg allergi budget asid earmark spend use run
    built own belong depend bug issu problem name call occup profess money cash
    名字 名叫 叫做 叫 工作 上班 任职 就职 入职 跳槽 加入 领导 上司 汇报 住 家住
    搬 家 过敏 预算 钱 使用 在用 属于 负责 依赖""".split()
)

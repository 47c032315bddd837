"""The Chinese tagging rules (the type and the reading order: `rules.py`)."""

from __future__ import annotations

from app.distill.heuristic.rules import ANY_ROLE, Rule, rule

# A number starts where a run of numerals starts: a match tried from inside a long run would scan the
# rest of it again from every character (quadratic on 30,000 digits).
_ZH_NUM = r"(?<![0-9零一二两三四五六七八九十百千万.])[0-9零一二两三四五六七八九十百千万]+"
_ZH_MONEY = rf"{_ZH_NUM}(?:\.\d+)?\s*(?:元|块|万|千|美元|rmb|RMB)?"

ZH_RULES: tuple[Rule, ...] = (
    rule(
        "correction",
        r"^(?:不对|更正|纠正|(?:其实|实际上)(?=[^。！？]*?(?:更|而不是|不是|才是))|我是说|我的意思是|说错了|应该是|改成|改为|不好意思，?(?:是|应该))",
        0.9,
        0.7,
    ),
    rule("correction", r"不是\S{1,12}而是|是[^，。不]{1,12}[，,]?(?:而)?不是\S{1,12}", 0.85, 0.7),
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
    rule("constraint.diet", r"过敏|吃素|素食|不吃|忌口|清真|不(?:太|大|怎么)?能吃", 0.9, 0.9),
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

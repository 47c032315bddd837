"""Chinese aspect (issue 32): whether a clause says a step was done, by the perfective 已/已经 before a
verb of doing, a resultative (签好了, 部署完成), or a verb of doing in the completed form."""

from __future__ import annotations

import re

from app.text import pos_words

# The perfective 已/已经 before a verb of doing is a step done ("服务已重启", "已为您重新发送"); before a
# verb of state it describes ("已经是最新版本", "已达到上限"). A resultative (签好了, 部署完成) is done too.
_ALREADY_ZH = re.compile(r"已经|已")
_STATIVE_ZH = frozenset("是 有 在 达到 超过 过期 满 成为 习惯 知道 属于 包括 包含 没有 不是 经".split())
_RESULT_ZH = re.compile(r"[\u4e00-\u9fff](?:好|完)了|(?:完成|完毕|搞定)(?:了|[，。！,.]|$)")
_MODAL_ZH = re.compile(r"必须|需要|要|得|之前|以前|前|尽快|希望|想|打算")
_DONE_ZH = re.compile(
    r"已(?:经)?(?:为您|帮您|给您)?[^，。]{0,4}(?:创建|签发|开通|修改|写好|申请|上传|提交|安排|完成|支付|发货|确认|处理|"
    r"解决|取消|验证|预订|退款|退回|寄出|发出|到账|生效|更换|预约|登记|办理|重置|递交|上交|交上)|"
    r"(?:上传|提交|递交|写好|办好|发出|签发|创建)了"
)


def done_zh(text: str, role: str) -> bool:
    """A step done: a verb of doing in its done form (_DONE_ZH), 已/已经 before a verb of doing (skipping
    为您, 把…, an adverb), or a resultative with no modal or deadline before it ("合同签好了", not
    "必须周三前完成"), whoever opens the clause: the resultative says someone finished it ("搬家公司约好了").
    Else the user's step has the user as its agent ("我已经重启了路由器"); a thing of theirs that changed is a
    state ("旧号码已经停用了")."""
    if _DONE_ZH.search(text) or (_RESULT_ZH.search(text) and not _MODAL_ZH.search(text)):
        return True
    # (the object may open the clause: "表我已经交了")
    if role == "user" and not re.match(r"(?:我们|我|已|[^，。]{1,6}?我)", text):
        return False
    found = _ALREADY_ZH.search(text)
    if found is None:
        return False
    for word, flag in pos_words(text[found.end() :])[:5]:
        if word in _STATIVE_ZH or flag.startswith("ul"):
            return False
        if flag.startswith("v"):
            return True
    return False

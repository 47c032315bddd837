"""The events: realistic conversation turns, LoCoMo's (English, two people over many sessions) with
Chinese sessions mixed in (everyday talk with preferences, budgets, dates, places, names, tasks)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.harness.services import LOCOMO

BATCH = 100  # events per append


# Everyday Chinese conversation between two people: (speaker index, template). Slots are filled
# from the word lists below, so sessions differ while reading like real chat.
ZH_DIALOGUE = (
    (0, "最近怎么样？好久没聊了。"),
    (1, "还不错，就是工作有点忙。我上个月刚换到{org}做{job}。"),
    (0, "恭喜啊！通勤远吗？"),
    (1, "还好，我搬到{place}了，离公司二十分钟。"),
    (0, "我下周{weekday}要去{place2}出差，预算不超过{amount}块。"),
    (1, "那边的{food}很有名，一定要尝尝。"),
    (0, "可惜我对{allergen}过敏，很多菜都不能吃。"),
    (1, "那你点菜的时候跟服务员说一声就好。"),
    (0, "对了，我的订单号是ORD-{order}，帮我查一下物流好吗？"),
    (1, "好的，我查到了，已经发货，预计明天到。"),
    (0, "谢谢！另外我更喜欢微信联系，别打电话。"),
    (1, "没问题。你女儿今年上几年级了？"),
    (0, "她今年{grade}年级，最近迷上了{hobby}。"),
    (1, "挺好的。我周末一般去{hobby2}，有空一起？"),
    (0, "好啊，不过我周六上午要加班，下午可以。"),
    (1, "其实我记错了，不是周六，是周日下午。"),
    (0, "行，那就周日下午三点在{place}见。"),
    (1, "报告我已经写完了，还在等{name}确认。"),
    (0, "如果来得及的话，我们可以月底前提交。"),
    (1, "好的，我会提醒你的。晚安！"),
)
ZH_WORDS: dict[str, tuple[str, ...]] = {
    "org": ("腾讯", "阿里巴巴", "华为", "字节跳动", "小米", "京东", "美团", "招商银行"),
    "job": ("产品经理", "工程师", "设计师", "会计", "老师", "销售"),
    "place": ("杭州", "上海", "深圳", "成都", "南京", "北京"),
    "place2": ("西安", "重庆", "厦门", "青岛", "长沙", "昆明"),
    "weekday": ("一", "二", "三", "四", "五"),
    "amount": ("三千", "五千", "八千", "一万", "两千五"),
    "food": ("火锅", "小笼包", "烤鸭", "兰州拉面", "麻婆豆腐", "螺蛳粉"),
    "allergen": ("花生", "海鲜", "牛奶", "鸡蛋", "芒果"),
    "order": tuple(str(n) for n in range(10231, 10299, 7)),
    "grade": ("一", "二", "三", "四", "五"),
    "hobby": ("画画", "钢琴", "游泳", "围棋", "跳舞"),
    "hobby2": ("爬山", "打羽毛球", "骑车", "钓鱼", "跑步"),
    "name": ("王伟", "李娜", "张敏", "刘洋", "陈静"),
}
ZH_SPEAKERS = (("王芳", "李强"), ("张伟", "刘娜"), ("陈静", "赵磊"), ("周杰", "吴敏"))


def zh_sessions(count: int, seed: int, start: datetime) -> list[list[dict[str, Any]]]:
    """`count` Chinese sessions of 20 turns, each with its own names, places and amounts."""
    rng = random.Random(seed)
    sessions = []
    for n in range(count):
        a, b = ZH_SPEAKERS[n % len(ZH_SPEAKERS)]
        words = {k: rng.choice(v) for k, v in ZH_WORDS.items()}
        at = start + timedelta(days=3 * n, hours=rng.randint(8, 20))
        turns = []
        for i, (who, template) in enumerate(ZH_DIALOGUE):
            turns.append(
                {
                    "role": "user",
                    "speaker": (a, b)[who],
                    "content": template.format(**words),
                    "occurred_at": (at + timedelta(seconds=30 * i)).isoformat(),
                    "external_id": f"zh{n}:{i}",
                }
            )
        sessions.append(turns)
    return sessions


def conversation(events: int, zh_share: float, seed: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """(session id, turns) in the order they were said: LoCoMo's sessions with Chinese ones
    interleaved, cut at `events` turns in all."""
    from app.eval.locomo import load_dataset, turn_event

    english: list[tuple[str, list[dict[str, Any]]]] = []
    for c in load_dataset(LOCOMO):
        for s in c.sessions:
            english.append((f"{c.sample_id}-{s.session_id}", [turn_event(t) for t in s.turns]))
    zh_events = int(events * zh_share)
    chinese = [
        (f"zh-{i}", turns)
        for i, turns in enumerate(
            zh_sessions(-(-zh_events // len(ZH_DIALOGUE)), seed, datetime(2023, 5, 1, tzinfo=UTC))
        )
    ]
    # Interleave by events so that every prefix of the conversation holds about `zh_share` Chinese.
    mixed: list[tuple[str, list[dict[str, Any]]]] = []
    zh_so_far = total_so_far = 0
    queue = list(english)
    while queue or chinese:
        take_zh = bool(chinese) and (not queue or zh_so_far < zh_share * max(total_so_far, 1))
        sid, turns = chinese.pop(0) if take_zh else queue.pop(0)
        mixed.append((sid, turns))
        zh_so_far += len(turns) if take_zh else 0
        total_so_far += len(turns)
    out, total = [], 0
    for sid, turns in mixed:
        if total >= events:
            break
        turns = turns[: events - total]
        out.append((sid, turns))
        total += len(turns)
    return out

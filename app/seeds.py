"""The seeds' scenario, the product's running example: a user shopping for a laptop states a budget,
raises it, states a preference and an order number (English and Chinese). The README's quickstart, the
OpenAPI examples and the off-topic benchmark all use it, so they tell one story."""

from __future__ import annotations

BANK_ID = "support-bot"
SESSION_ID = "chat-1"

BUDGET_CONVERSATION: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("user", "Hello!"),
        ("assistant", "Hello! How can I help you today?"),
        ("user", "I want to buy a laptop, my budget is 5000."),
        ("assistant", "Got it, a laptop within 5000."),
        ("user", "Actually, if the configuration can be upgraded, I can go up to 8000."),
        ("assistant", "Great, that opens up more options."),
        ("user", "Can the price we just discussed be negotiated?"),
        ("assistant", "Sure, I can help you with that."),
        ("user", "I prefer short answers, and my order number is ORD-12345."),
        ("assistant", "You're welcome! Have a great day."),
    ],
    "zh": [
        ("user", "你好"),
        ("assistant", "您好，有什么可以帮您？"),
        ("user", "我想买一台笔记本电脑，预算是5000元。"),
        ("assistant", "好的，预算5000以内的电脑，已记录。"),
        ("user", "如果配置能升级的话，可以到8000。"),
        ("assistant", "好的，明白了。"),
        ("user", "刚才说的那个价格还能再谈吗？"),
        ("assistant", "很高兴为您服务，还有什么可以帮您？"),
        ("user", "我喜欢简洁的回答，另外我的订单号是ORD-12345"),
        ("assistant", "不客气，祝您生活愉快！"),
    ],
}

# Questions the scenario answers, and a word the answer's units hold.
ON_TOPIC: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("What is the user's budget?", "8000"),
        ("How much can the user spend on the laptop?", "8000"),
        ("What is my order number?", "ORD-12345"),
        ("How does the user like answers?", "short"),
        ("What does the user want to buy?", "laptop"),
    ],
    "zh": [
        ("用户的预算是多少？", "8000"),
        ("我的订单号是什么？", "ORD-12345"),
        ("用户喜欢什么样的回答？", "简洁"),
        ("用户想买什么？", "电脑"),
    ],
}


def events(lang: str = "en") -> list[dict[str, str]]:
    """The conversation as an append's `events`."""
    return [{"role": role, "content": content} for role, content in BUDGET_CONVERSATION[lang]]

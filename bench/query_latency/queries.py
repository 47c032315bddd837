"""The benchmark's questions: realistic ones (not unit texts), EN and ~15 % ZH, some naming people of
the bank, some with a time phrase, some with request tags."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from string import Formatter
from typing import Any, NamedTuple

import numpy as np

from bench.query_latency.world import (
    DELIVERABLES,
    FOODS,
    HOBBIES,
    ORGS,
    PLACES,
    PRODUCTS,
    World,
)


@dataclass
class BenchQuery:
    text: str
    category: str  # plain | person | time | tags | zh
    tags: list[str] | None = None

    def body(self, anchor: datetime) -> dict[str, Any]:
        body: dict[str, Any] = {"query": self.text, "top_k": 10, "now": anchor.isoformat()}
        if self.tags:
            body["tags"] = self.tags
        return body


class Question(NamedTuple):
    """A kind of question the benchmark asks: its `{slot}`s are drawn afresh each time it is asked,
    in the order the text names them (`make_queries`)."""

    weight: float  # how often it is asked, relative to the others
    category: str  # plain | person | time | tags | zh
    text: str
    tags: tuple[str, ...] = ()  # the request's tags


QUESTIONS = (
    Question(3, "person", "What is {who}'s budget for the {product}?"),
    Question(2, "person", "Where does {who} live now?"),
    Question(2, "person", "Which company does {who} work for?"),
    Question(2, "person", "What kind of food does {who} like?"),
    Question(1, "person", "Is {who} allergic to anything?"),
    Question(1, "person", "What did {who} say about the trip to {place}?"),
    Question(1, "person", "How can I reach {who}?"),
    Question(1, "person", "What is {who}'s order number?"),
    Question(2, "plain", "Has the {product} order shipped yet?"),
    Question(1, "plain", "Who has kids or pets?"),
    Question(1, "plain", "Who lives in {place}?"),
    Question(1, "plain", "Any restaurant recommendations for {food}?"),
    Question(1, "plain", "How much can I spend on a new {product}?"),
    Question(1, "plain", "When is the {deliverable} due?"),
    Question(1, "plain", "which seat do they usually want on long flights"),
    Question(1, "plain", "Did anyone mention {org} in a meeting?"),
    Question(1, "plain", "hobbies involving {hobby}"),
    Question(2, "time", "What happened last week?"),
    Question(1, "time", "What did we discuss yesterday about the {product}?"),
    Question(1, "time", "What did {who} do last weekend?"),
    Question(1, "time", "Summarise what {who} mentioned in the past 3 days"),
    Question(1, "time", "What did {who} tell me in March?"),
    Question(1, "time", "Did anyone talk about {place} last month?"),
    Question(1, "tags", "What is {who}'s budget?", ("constraint",)),
    Question(1, "tags", "What does {who} prefer?", ("preference",)),
    Question(0.5, "tags", "job changes at {org}", ("fact.work",)),
    Question(0.5, "tags", "deliveries to {place}", ("constraint.location", "task_state")),
    Question(1.2, "zh", "{zh_name}的预算是多少？"),
    Question(1, "zh", "{zh_name}住在哪里？"),
    Question(0.8, "zh", "{zh_name}在哪家公司工作？"),
    Question(0.8, "zh", "{zh_name}喜欢吃什么？"),
    Question(0.7, "zh", "上周我们聊了什么？"),
    Question(0.7, "zh", "{zh_name}昨天说了什么？"),
    Question(0.4, "zh", "最近三天有什么新的订单？"),
    Question(0.4, "zh", "{zh_name}对什么过敏？"),
)


def make_queries(world: World, n: int, seed: int) -> list[BenchQuery]:
    """Realistic questions (not unit texts): EN and ~15 % ZH, some naming people of the bank, some
    with a time phrase, some with request tags."""
    rng = random.Random(f"{seed}:queries")

    def who() -> str:
        p = rng.choices(world.en, cum_weights=world.en_cum)[0]
        return p.first if rng.random() < 0.3 else p.name

    slots: dict[str, Callable[[], str]] = {
        "who": who,
        "zh_name": lambda: rng.choices(world.zh, cum_weights=world.zh_cum)[0].name,
        "product": lambda: rng.choice(PRODUCTS),
        "place": lambda: rng.choice(PLACES),
        "org": lambda: rng.choice(ORGS),
        "food": lambda: rng.choice(FOODS),
        "deliverable": lambda: rng.choice(DELIVERABLES),
        "hobby": lambda: rng.choice(HOBBIES),
    }

    def ask(question: Question) -> BenchQuery:
        parts = Formatter().parse(question.text)
        text = "".join(literal + (slots[slot]() if slot else "") for literal, slot, _, _ in parts)
        return BenchQuery(text, question.category, list(question.tags) or None)

    cum = list(np.cumsum([q.weight for q in QUESTIONS]))
    return [ask(rng.choices(QUESTIONS, cum_weights=cum)[0]) for _ in range(n)]

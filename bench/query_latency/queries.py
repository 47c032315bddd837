"""The benchmark's questions: realistic ones (not unit texts), EN and ~15 % ZH, some naming people of
the bank, some with a time phrase, some with request tags."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from bench.query_latency.world import (
    DELIVERABLES,
    FOODS,
    HOBBIES,
    ORGS,
    PLACES,
    PRODUCTS,
    Person,
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


def make_queries(world: World, n: int, seed: int) -> list[BenchQuery]:
    """Realistic questions (not unit texts): EN and ~15 % ZH, some naming people of the bank, some
    with a time phrase, some with request tags."""
    rng = random.Random(f"{seed}:queries")

    def en() -> Person:
        return rng.choices(world.en, cum_weights=world.en_cum)[0]

    def zh() -> Person:
        return rng.choices(world.zh, cum_weights=world.zh_cum)[0]

    def who() -> str:
        p = en()
        return p.first if rng.random() < 0.3 else p.name

    def product() -> str:
        return rng.choice(PRODUCTS)

    def place() -> str:
        return rng.choice(PLACES)

    def org() -> str:
        return rng.choice(ORGS)

    makers: list[tuple[float, Callable[[], BenchQuery]]] = [
        (3, lambda: BenchQuery(f"What is {who()}'s budget for the {product()}?", "person")),
        (2, lambda: BenchQuery(f"Where does {who()} live now?", "person")),
        (2, lambda: BenchQuery(f"Which company does {who()} work for?", "person")),
        (2, lambda: BenchQuery(f"What kind of food does {who()} like?", "person")),
        (1, lambda: BenchQuery(f"Is {who()} allergic to anything?", "person")),
        (1, lambda: BenchQuery(f"What did {who()} say about the trip to {place()}?", "person")),
        (1, lambda: BenchQuery(f"How can I reach {who()}?", "person")),
        (1, lambda: BenchQuery(f"What is {who()}'s order number?", "person")),
        (2, lambda: BenchQuery(f"Has the {product()} order shipped yet?", "plain")),
        (1, lambda: BenchQuery("Who has kids or pets?", "plain")),
        (1, lambda: BenchQuery(f"Who lives in {place()}?", "plain")),
        (1, lambda: BenchQuery(f"Any restaurant recommendations for {rng.choice(FOODS)}?", "plain")),
        (1, lambda: BenchQuery(f"How much can I spend on a new {product()}?", "plain")),
        (1, lambda: BenchQuery(f"When is the {rng.choice(DELIVERABLES)} due?", "plain")),
        (1, lambda: BenchQuery("which seat do they usually want on long flights", "plain")),
        (1, lambda: BenchQuery(f"Did anyone mention {org()} in a meeting?", "plain")),
        (1, lambda: BenchQuery(f"hobbies involving {rng.choice(HOBBIES)}", "plain")),
        (2, lambda: BenchQuery("What happened last week?", "time")),
        (1, lambda: BenchQuery(f"What did we discuss yesterday about the {product()}?", "time")),
        (1, lambda: BenchQuery(f"What did {who()} do last weekend?", "time")),
        (1, lambda: BenchQuery(f"Summarise what {who()} mentioned in the past 3 days", "time")),
        (1, lambda: BenchQuery(f"What did {who()} tell me in March?", "time")),
        (1, lambda: BenchQuery(f"Did anyone talk about {place()} last month?", "time")),
        (1, lambda: BenchQuery(f"What is {who()}'s budget?", "tags", ["constraint"])),
        (1, lambda: BenchQuery(f"What does {who()} prefer?", "tags", ["preference"])),
        (0.5, lambda: BenchQuery(f"job changes at {org()}", "tags", ["fact.work"])),
        (0.5, lambda: BenchQuery(f"deliveries to {place()}", "tags", ["constraint.location", "task_state"])),
        (1.2, lambda: BenchQuery(f"{zh().name}的预算是多少？", "zh")),
        (1, lambda: BenchQuery(f"{zh().name}住在哪里？", "zh")),
        (0.8, lambda: BenchQuery(f"{zh().name}在哪家公司工作？", "zh")),
        (0.8, lambda: BenchQuery(f"{zh().name}喜欢吃什么？", "zh")),
        (0.7, lambda: BenchQuery("上周我们聊了什么？", "zh")),
        (0.7, lambda: BenchQuery(f"{zh().name}昨天说了什么？", "zh")),
        (0.4, lambda: BenchQuery("最近三天有什么新的订单？", "zh")),
        (0.4, lambda: BenchQuery(f"{zh().name}对什么过敏？", "zh")),
    ]
    cum = list(np.cumsum([w for w, _ in makers]))
    return [rng.choices(makers, cum_weights=cum)[0][1]() for _ in range(n)]

"""Query latency at scale: one bank of N active units, the real app over real HTTP.

    python -m bench.query_latency --units 10000 --units 100000 [--queries 300]
        [--out bench/results/query_latency.json] [--database-url URL --redis-url URL]

For each size: synthetic but realistic units (EN ~90 %, ZH ~10 %: preferences, constraints with
amounts, facts about work / location / family, task states, episodes; tags, importance, confidence,
valid_from over two years, entities and relations) embedded with the real local model
(all-MiniLM-L6-v2; vectors cached in `--cache-dir`), loaded with COPY into a bank, then `hindsight api`
is started as a child process and queried over HTTP (httpx, keep-alive, one request at a time).
Reported: client wall time p50/p95/p99/mean and the server's `took_ms`, the channel SQL alone per
channel (the app's statement builder with only that channel on, through the app's engine settings),
EXPLAIN (ANALYZE, BUFFERS) of one query per channel with the indexes its plan uses, the embedding
time of one query, and the API process's RSS. Writes JSON (`--out`) and the "Query latency at scale"
section of docs/benchmarks.md (`--no-docs` to skip).

Without `--database-url` an embedded PostgreSQL (app.embedded, its own settings untouched) and Redis
run in a temporary directory, one fresh database per size; the bulk load drops the secondary indexes
of the loaded tables and recreates them from their own definitions afterwards (faster than
maintaining them row by row). With `--database-url` the banks `bench-<N>` are (re)loaded there with
the indexes in place (`--rebuild-indexes` to drop and recreate them there too; other banks share them).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import textwrap
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MODEL, DIM = "all-MiniLM-L6-v2", 384
HNSW_INDEX = "ix_memory_embeddings_hnsw_384_default"
SEARCH_INDEX = "ix_memory_units_search"
TARGET = {"units": 100_000, "p50_ms": 30.0, "p95_ms": 60.0}
GENERATOR_VERSION = "units-v1"  # bump when the generator changes: cached vectors are keyed by it
DOCS = ROOT / "docs" / "benchmarks.md"
SECTION = "## Query latency at scale"
FINDINGS = "### Findings"
CHANNEL_ORDER = ("semantic", "keyword", "entity", "temporal", "tag")

# --- the world the units talk about ----------------------------------------------------------------

EN_FIRST = (
    "Alice Ana Ben Carlos Chloe Daniel David Elena Emma Ethan Fatima Felix Grace Hannah Hugo Isabel Ivan "
    "Jack James Julia Kenji Laura Leo Lucas Maria Marco Maya Mei Mohammed Nadia Nina Noah Olivia Omar "
    "Oscar Paula Priya Rahul Rosa Ryan Sam Sara Sofia Tom Victor Yuki Zoe Aisha Diego Ingrid Jonas Kofi "
    "Lena Mateo Nora Pablo Ravi Tariq"
).split()
EN_LAST = (
    "Johnson Smith Garcia Muller Rossi Tanaka Kim Nguyen Patel Silva Novak Costa Schmidt Dubois Jensen "
    "Lopez Martin Brown Wilson Moreau Fischer Sato Khan Okafor Larsen Ricci Romero Weber Ahmed Park "
    "Andersen Cohen Hughes Ivanova Kowalski Lindqvist Mendes Nakamura Olsen Petrov Quinn Reyes Santos "
    "Torres Varga Walsh Young Zhang"
).split()
ZH_SURNAMES = "王 李 张 刘 陈 杨 黄 赵 吴 周 徐 孙 马 朱 胡 郭 何 林 高 罗".split()
ZH_GIVEN = (
    "伟 芳 娜 敏 静 丽 强 磊 军 洋 勇 艳 杰 娟 涛 明 超 秀英 "
    "霞 平 刚 晓东 子涵 浩然 雨萱 欣怡 宇轩 梓涵 一诺 嘉怡"
).split()
PLACES = (
    "Lisbon|Berlin|Toronto|Austin|Seattle|Madrid|Barcelona|Kyoto|Osaka|Tokyo|Seoul|Singapore|Dublin|"
    "Amsterdam|Copenhagen|Oslo|Stockholm|Vienna|Prague|Budapest|Warsaw|Krakow|Munich|Hamburg|Zurich|"
    "Geneva|Lyon|Marseille|Paris|London|Manchester|Edinburgh|Boston|Chicago|Denver|Portland|Vancouver|"
    "Montreal|Mexico City|Buenos Aires|Santiago|Lima|Bogota|Sao Paulo|Cape Town|Nairobi|Lagos|Cairo|"
    "Istanbul|Athens|Rome|Milan|Naples|Porto|Valencia|Bangalore|Mumbai|Sydney|Melbourne|Auckland"
).split("|")
ZH_PLACES = (
    "北京 上海 广州 深圳 杭州 成都 南京 武汉 西安 重庆 苏州 天津 厦门 青岛 长沙 昆明 大连 香港".split()
)
ORGS = (
    "Northwind Traders|Globex|Initech|Contoso|Fabrikam|Blue Harbor Bank|Umbrella Health|Stark Logistics|"
    "Wayne Robotics|Acme Analytics|Vandelay Imports|Hooli|Pied Piper|Soylent Foods|Tyrell Systems|"
    "Cyberdyne Labs|Oceanic Air|Massive Dynamic|Gringotts Capital|Monarch Studios|Greenleaf Energy|"
    "Brightside Schools|Atlas Insurance|Polar Telecom|Redwood Hospital|Summit Consulting|Orbit Media|"
    "Nimbus Cloud|Helix Pharma|Granite Construction|Lumen Design|Copperline Rail|Silverlake Hotels|"
    "Tidewater Shipping|Maple Software|Quantum Retail"
).split("|")
ZH_ORGS = "腾讯 阿里巴巴 华为 字节跳动 小米 京东 美团 百度 网易 招商银行 中国银行 比亚迪".split()
JOBS = (
    "product manager|nurse|data engineer|high school teacher|accountant|UX designer|lawyer|"
    "physiotherapist|civil engineer|sales lead|backend developer|pharmacist|chef|architect|"
    "marketing manager|research scientist|pilot|journalist|electrician|dentist"
).split("|")
ZH_JOBS = "产品经理 护士 工程师 老师 会计 设计师 律师 医生 销售 程序员".split()
FOODS = (
    "Thai green curry|sushi|ramen|tacos al pastor|margherita pizza|dim sum|falafel|pho|paella|"
    "Korean barbecue|butter chicken|pad thai|lasagna|ceviche|bibimbap|dumplings|shakshuka|"
    "grilled salmon|mushroom risotto|spicy Sichuan noodles|fish and chips|pierogi|pastel de nata"
).split("|")
ZH_FOODS = "火锅 小笼包 麻婆豆腐 北京烤鸭 饺子 兰州拉面 烧烤 川菜 粤菜 螺蛳粉 煎饼果子".split()
HOBBIES = (
    "rock climbing|playing the cello|trail running|birdwatching|chess|pottery|salsa dancing|"
    "photography|sailing|gardening|knitting|board games|yoga|cycling|woodworking|surfing|baking "
    "sourdough|learning Japanese|playing the piano|scuba diving"
).split("|")
PRODUCTS = (
    "standing desk|laptop|road bike|espresso machine|noise-cancelling headphones|sofa|winter jacket|"
    "running shoes|tablet|camera lens|washing machine|stroller|electric scooter|mattress|monitor|"
    "phone|dishwasher|tent|car seat|e-reader"
).split("|")
ZH_PRODUCTS = "笔记本电脑 手机 沙发 洗衣机 自行车 咖啡机 耳机 冰箱 婴儿车 显示器".split()
ALLERGENS = "peanuts|shellfish|gluten|lactose|eggs|sesame|tree nuts|strawberries|penicillin".split("|")
ZH_ALLERGENS = "花生 海鲜 牛奶 鸡蛋 芒果 青霉素".split()
GENRES = (
    "jazz|sci-fi novels|true-crime podcasts|Studio Ghibli films|K-dramas|Formula 1|indie rock|"
    "stand-up comedy|classical music|historical fiction|horror movies|anime|opera|hip hop"
).split("|")
TRAVEL = (
    "window seats|aisle seats|overnight trains|boutique hotels|hostels near the old town|"
    "early morning flights|road trips|direct flights only|apartments with a kitchen"
).split("|")
SCHEDULE = (
    "meetings before 10am|calls after 6pm|no meetings on Fridays|a long lunch break|"
    "working from home on Mondays|deep work in the afternoon"
).split("|")
CONTACT = "email over phone calls|WhatsApp messages|text messages|a quick call|Slack|Signal".split("|")
SCHOOLS = (
    "the University of Toronto|MIT|Stanford|Imperial College|TU Munich|Sciences Po|the University of "
    "Lisbon|Kyoto University|McGill|the University of Edinburgh|ETH Zurich"
).split("|")
MAJORS = "computer science|economics|nursing|architecture|biology|law|music|mechanical engineering".split("|")
PETS = (
    "a golden retriever named Biscuit|two cats, Miso and Tofu|a parrot called Kiwi|a beagle named Max|"
    "a rabbit called Clover|an old tabby cat named Pickles"
).split("|")
DELIVERABLES = (
    "quarterly report|grant proposal|tax return|slide deck|design review|contract draft|budget plan|"
    "conference talk|thesis chapter|migration plan"
).split("|")
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
ROUND_AMOUNTS = (150, 200, 300, 450, 500, 800, 1000, 1200, 1500, 2000, 2500, 3000, 5000, 8000, 12000)


@dataclass
class Person:
    name: str
    first: str
    city: str
    org: str
    job: str
    food: str
    hobby: str
    zh: bool


@dataclass
class World:
    en: list[Person]
    zh: list[Person]
    en_cum: list[float]
    zh_cum: list[float]


def _zipf_cum(n: int, s: float = 0.9) -> list[float]:
    total, cum = 0.0, []
    for rank in range(1, n + 1):
        total += 1 / rank**s
        cum.append(total)
    return cum


def _attributes(
    rng: random.Random, places: list[str], orgs: list[str], jobs: list[str], foods: list[str]
) -> tuple[str, str, str, str]:
    """A person's city, employer, job and favourite food."""
    return rng.choice(places), rng.choice(orgs), rng.choice(jobs), rng.choice(foods)


def build_world(seed: int, en_people: int = 1200, zh_people: int = 300) -> World:
    rng = random.Random(f"{seed}:world")
    names = [f"{f} {last}" for f in EN_FIRST for last in EN_LAST]
    rng.shuffle(names)
    en = [
        Person(
            n, n.split()[0], *_attributes(rng, PLACES, ORGS, JOBS, FOODS), hobby=rng.choice(HOBBIES), zh=False
        )
        for n in names[:en_people]
    ]
    zh_names = [s + g for s in ZH_SURNAMES for g in ZH_GIVEN]
    rng.shuffle(zh_names)
    zh = [
        Person(n, n, *_attributes(rng, ZH_PLACES, ZH_ORGS, ZH_JOBS, ZH_FOODS), hobby="", zh=True)
        for n in zh_names[:zh_people]
    ]
    return World(en, zh, _zipf_cum(len(en)), _zipf_cum(len(zh)))


# --- units ------------------------------------------------------------------------------------------


@dataclass
class Unit:
    content: str
    tags: list[str]
    importance: float
    confidence: float
    valid_from: datetime
    created_at: datetime
    session_id: str
    layer: str
    entities: list[tuple[str, str]]  # (name, type)
    relations: list[tuple[tuple[str, str], str, tuple[str, str]]] = field(default_factory=list)


@dataclass
class Ctx:
    rng: random.Random
    world: World
    when: datetime
    p: Person
    ents: list[tuple[str, str]] = field(default_factory=list)
    rels: list[tuple[tuple[str, str], str, tuple[str, str]]] = field(default_factory=list)

    def person(self, zh: bool | None = None) -> Person:
        zh = self.p.zh if zh is None else zh
        people, cum = (self.world.zh, self.world.zh_cum) if zh else (self.world.en, self.world.en_cum)
        return self.rng.choices(people, cum_weights=cum)[0]

    def mention(self, person: Person) -> str:
        """A person as the text names them (sometimes by first name only), recorded as an entity."""
        name = person.first if not person.zh and self.rng.random() < 0.2 else person.name
        self.ents.append((name, "person"))
        return name

    def ent(self, name: str, kind: str) -> str:
        self.ents.append((name, kind))
        return name

    def rel(self, subject: str, relation: str, obj: str, obj_type: str) -> None:
        self.rels.append(((subject, "person"), relation, (obj, obj_type)))

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(options)

    def amount(self, zh: bool = False) -> str:
        n = self.rng.choice(ROUND_AMOUNTS)
        if zh:
            return self.ent(f"{n * 7}元", "amount")
        style = self.rng.randrange(4)
        text = (f"${n:,}", f"{n} euros", f"£{n}", f"{n} dollars")[style]
        return self.ent(text, "amount")

    def day(self, lo: int = -10, hi: int = 21) -> date:
        return (self.when + timedelta(days=self.rng.randint(lo, hi))).date()

    def dated(self, lo: int = -10, hi: int = 21, zh: bool = False) -> str:
        """A resolved relative date the way the distiller writes it: "Friday (2026-12-04)"."""
        d = self.day(lo, hi)
        self.ent(d.isoformat(), "date")
        if zh:
            return f"（{d.isoformat()}）"
        return f"{WEEKDAYS[d.weekday()]} ({d.isoformat()})"


Template = Callable[[Ctx], tuple[str, list[str]]]


def _en_templates() -> list[tuple[float, float, Template]]:
    """(weight, importance, template) — a template writes the content and returns its tags."""

    def food(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        dish = c.p.food if c.rng.random() < 0.6 else c.pick(FOODS)
        other = c.pick(FOODS)
        text = c.pick(
            [
                f"{n} prefers {dish} over {other}.",
                f"{n} loves {dish}, especially on weekends.",
                f"{n}'s favourite dinner is {dish} from the place near the office.",
                f"{n} does not like {other} but always orders {dish}.",
            ]
        )
        return text, ["preference.food"]

    def travel(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n} prefers {c.pick(TRAVEL)} when travelling to {c.ent(c.pick(PLACES), 'place')}.", [
            "preference.travel"
        ]

    def entertainment(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        text = c.pick(
            [
                f"{n} enjoys {c.pick(GENRES)} and listens to it while commuting.",
                f"{n} has been really into {c.pick(HOBBIES)} lately.",
                f"{n}'s favourite hobby is {c.p.hobby}.",
            ]
        )
        return text, ["preference.entertainment"]

    def schedule(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n} prefers {c.pick(SCHEDULE)}.", ["preference.schedule"]

    def contact_pref(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n} prefers {c.pick(CONTACT)} for anything urgent.", ["preference.contact"]

    def budget(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        amount, product = c.amount(), c.pick(PRODUCTS)
        c.rel(n, "has_budget", amount, "amount")
        text = c.pick(
            [
                f"{n}'s budget for the new {product} is {amount}.",
                f"{n} can spend at most {amount} on a {product}.",
                f"{n} wants to keep the {product} under {amount}, including delivery.",
                f"{n} set a budget of {amount} for the trip to {c.ent(c.pick(PLACES), 'place')}.",
            ]
        )
        return text, ["constraint.budget"]

    def deadline(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n} needs the {c.pick(DELIVERABLES)} by {c.dated(1, 30)}.", ["constraint.time"]

    def diet(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        text = c.pick(
            [
                f"{n} is allergic to {c.pick(ALLERGENS)}.",
                f"{n} is vegetarian and avoids {c.pick(['pork', 'beef', 'fish', 'chicken'])}.",
                f"{n} cannot eat {c.pick(ALLERGENS)} and always checks the menu first.",
            ]
        )
        return text, ["constraint.diet"]

    def quantity(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        k = c.rng.randint(2, 12)
        place = c.ent(c.pick(PLACES), "place")
        return f"{n} needs {k} tickets for the concert in {place}.", ["constraint.quantity"]

    def deliver(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        place = c.ent(c.pick(PLACES), "place")
        return f"{n} wants the {c.pick(PRODUCTS)} delivered to the office in {place}.", [
            "constraint.location"
        ]

    def work(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        org = c.ent(c.p.org if c.rng.random() < 0.8 else c.pick(ORGS), "organization")
        c.rel(n, "works_at", org, "organization")
        text = c.pick(
            [
                f"{n} works at {org} as a {c.p.job}.",
                f"{n} joined {org} as a {c.p.job} {c.rng.randint(1, 9)} years ago.",
                f"{n} is a {c.p.job} at {org} and leads a team of {c.rng.randint(2, 15)}.",
            ]
        )
        return text, ["fact.work"]

    def location(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        city = c.ent(c.p.city if c.rng.random() < 0.75 else c.pick(PLACES), "place")
        c.rel(n, "lives_in", city, "place")
        text = c.pick(
            [
                f"{n} lives in {city}.",
                f"{n} moved to {city} in {c.when.year - c.rng.randint(0, 6)}.",
                f"{n} lives in a small flat in {city} close to the river.",
            ]
        )
        return text, ["fact.location"]

    def family(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        q = c.mention(c.person())
        text = c.pick(
            [
                f"{n} has two kids, {c.pick(EN_FIRST)} and {c.pick(EN_FIRST)}.",
                f"{n}'s sister {q} lives in {c.ent(c.pick(PLACES), 'place')}.",
                f"{n} has {c.pick(PETS)}.",
                f"{n} is married to {q}.",
            ]
        )
        return text, ["fact.family"]

    def education(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        school = c.ent(c.pick(SCHOOLS).removeprefix("the "), "organization")
        return f"{n} studied {c.pick(MAJORS)} at {school}.", ["fact.education"]

    def ident(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        code = c.ent(f"ORD-{c.rng.randint(10000, 99999)}", "id")
        return f"{n}'s order number for the {c.pick(PRODUCTS)} is {code}.", ["fact.id"]

    def contact(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        email = c.ent(f"{c.p.first.lower()}.{c.p.name.split()[-1].lower()}@example.com", "contact")
        return f"{n}'s email is {email}.", ["fact.contact"]

    def task(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        product = c.pick(PRODUCTS)
        text = c.pick(
            [
                f"The {product} order for {n} was shipped on {c.dated(-5, 0)}.",
                f"{n}'s refund for the {product} is still pending.",
                f"The visa application for {n} is done.",
                f"{n} is waiting for {c.ent(c.pick(ORGS), 'organization')} to confirm the interview on "
                f"{c.dated(1, 14)}.",
                f"The {c.pick(DELIVERABLES)} for {n} is finished and was sent for review.",
            ]
        )
        return text, ["task_state"]

    def correction(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        amount, old = c.amount(), c.amount()
        c.rel(n, "has_budget", amount, "amount")
        return f"Correction: {n}'s budget for the {c.pick(PRODUCTS)} is actually {amount}, not {old}.", [
            "constraint.budget",
            "correction",
        ]

    def episode(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        q = c.mention(c.person())
        place = c.ent(c.pick(PLACES), "place")
        org = c.ent(c.pick(ORGS), "organization")
        sentences = [
            f"{n} and {q} went hiking near {place} and got caught in a thunderstorm on the way down.",
            f"{n} spent the weekend helping {q} move into a new apartment in {place}.",
            f"{n} said the meeting with {org} went badly because the demo crashed twice.",
            f"{n} is worried that the {c.pick(PRODUCTS)} delivery will be late again.",
            f"{n} mentioned that {q} got promoted to {c.pick(JOBS)} at {org}.",
            f"{n} cooked {c.pick(FOODS)} for {q}'s birthday and it turned out great.",
            f"{n} asked to compare three {c.pick(PRODUCTS)} models under {c.amount()}.",
            f"{n} missed the train to {place} and had to take a taxi, which cost {c.amount()}.",
            f"{n} is planning a trip to {place} with {q} on {c.dated(3, 40)}.",
            f"{n} had a long call with {q} about switching jobs to {org}.",
            f"{n} finally finished the {c.pick(DELIVERABLES)} after staying up late.",
            f"{n} tried {c.pick(HOBBIES)} for the first time and wants to do it again.",
            f"{n} complained that the hotel in {place} was noisy and the wifi kept dropping.",
            f"{n} and {q} argued about whether to book {c.pick(TRAVEL)} for the holidays.",
        ]
        k = c.rng.choices((1, 2, 3), weights=(5, 3, 2))[0]
        return " ".join(c.rng.sample(sentences, k)), ["episode"]

    return [
        (5, 0.6, food),
        (2, 0.5, travel),
        (3, 0.5, entertainment),
        (1.5, 0.5, schedule),
        (1, 0.5, contact_pref),
        (5, 0.85, budget),
        (2.5, 0.8, deadline),
        (2, 0.85, diet),
        (1, 0.7, quantity),
        (1, 0.7, deliver),
        (5, 0.7, work),
        (4, 0.7, location),
        (4, 0.7, family),
        (1.5, 0.6, education),
        (2, 0.7, ident),
        (1, 0.6, contact),
        (7, 0.5, task),
        (1, 0.95, correction),
        (36, 0.3, episode),
    ]


def _zh_templates() -> list[tuple[float, float, Template]]:
    def food(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        dish = c.p.food if c.rng.random() < 0.6 else c.pick(ZH_FOODS)
        return c.pick([f"{n}喜欢吃{dish}，尤其是周末。", f"{n}最爱{dish}，不太喜欢{c.pick(ZH_FOODS)}。"]), [
            "preference.food"
        ]

    def budget(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        amount = c.amount(zh=True)
        c.rel(n, "has_budget", amount, "amount")
        return f"{n}买{c.pick(ZH_PRODUCTS)}的预算是{amount}。", ["constraint.budget"]

    def location(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        city = c.ent(c.p.city, "place")
        c.rel(n, "lives_in", city, "place")
        return c.pick([f"{n}住在{city}。", f"{n}去年搬到了{city}。"]), ["fact.location"]

    def work(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        org = c.ent(c.p.org, "organization")
        c.rel(n, "works_at", org, "organization")
        return f"{n}在{org}工作，是一名{c.p.job}。", ["fact.work"]

    def diet(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n}对{c.pick(ZH_ALLERGENS)}过敏。", ["constraint.diet"]

    def ident(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        code = c.ent(f"ORD-{c.rng.randint(10000, 99999)}", "id")
        return f"{n}的订单号是{code}。", ["fact.id"]

    def task(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n}的{c.pick(ZH_PRODUCTS)}已经发货{c.dated(-5, 0, zh=True)}。", ["task_state"]

    def family(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return c.pick([f"{n}有两个孩子，一个上小学。", f"{n}家里养了一只猫。"]), ["fact.family"]

    def deadline(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        return f"{n}下周要去{c.ent(c.pick(ZH_PLACES), 'place')}开会{c.dated(3, 10, zh=True)}。", [
            "constraint.time"
        ]

    def episode(c: Ctx) -> tuple[str, list[str]]:
        n = c.mention(c.p)
        q = c.mention(c.person())
        place = c.ent(c.pick(ZH_PLACES), "place")
        text = c.pick(
            [
                f"{n}上周和{q}去{place}出差了，住在公司附近的酒店。",
                f"{n}说和{c.ent(c.pick(ZH_ORGS), 'organization')}的会议不太顺利，演示出了问题。",
                f"{n}周末帮{q}搬家，累得不行。",
                f"{n}在{place}吃了{c.pick(ZH_FOODS)}，觉得味道一般。",
                f"{n}打算和{q}一起去{place}旅游，还没订机票。",
            ]
        )
        return text, ["episode"]

    return [
        (6, 0.6, food),
        (6, 0.85, budget),
        (5, 0.7, location),
        (5, 0.7, work),
        (2, 0.85, diet),
        (2, 0.7, ident),
        (6, 0.5, task),
        (3, 0.7, family),
        (2, 0.8, deadline),
        (30, 0.3, episode),
    ]


_A_VOWEL = re.compile(r"(^|\s)a ([aeiou])")


class Generator:
    """Unit i depends only on (seed, i), so a smaller size is a prefix of a larger one."""

    def __init__(self, seed: int, anchor: datetime) -> None:
        self.seed = seed
        self.anchor = anchor
        self.world = build_world(seed)
        self._en = _en_templates()
        self._zh = _zh_templates()
        self._en_cum = list(np.cumsum([w for w, _, _ in self._en]))
        self._zh_cum = list(np.cumsum([w for w, _, _ in self._zh]))

    def unit(self, i: int) -> Unit:
        rng = random.Random(self.seed * 1_000_003 + i)
        zh = rng.random() < 0.1
        age = timedelta(seconds=730 * 86_400 * rng.random() ** 1.15)  # two years, a bit denser lately
        when = self.anchor - age
        world = self.world
        people, cum = (world.zh, world.zh_cum) if zh else (world.en, world.en_cum)
        ctx = Ctx(rng, world, when, rng.choices(people, cum_weights=cum)[0])
        templates, tcum = (self._zh, self._zh_cum) if zh else (self._en, self._en_cum)
        _, importance, template = rng.choices(templates, cum_weights=tcum)[0]
        content, tags = template(ctx)
        if not zh:
            content = _A_VOWEL.sub(r"\1an \2", content)
        # Templates pick among several sentences; only the names the chosen text says are its entities.
        ctx.ents = [e for e in ctx.ents if e[0] in content]
        ctx.rels = [r for r in ctx.rels if r[0][0] in content and r[2][0] in content]
        importance = min(max(importance + rng.uniform(-0.15, 0.15), 0.05), 1.0)
        confidence = round(rng.uniform(0.62, 0.99) * (0.75 if rng.random() < 0.08 else 1.0), 3)
        entities = list(dict.fromkeys(ctx.ents))
        return Unit(
            content=content,
            tags=tags,
            importance=round(importance, 3),
            confidence=max(confidence, 0.6),
            valid_from=when,
            created_at=when + timedelta(minutes=rng.uniform(1, 40)),
            session_id=f"chat-{when:%Y%m%d}-{rng.randrange(3)}",
            layer="semantic" if rng.random() < 0.08 and tags[0] != "episode" else "episodic",
            entities=entities,
            relations=ctx.rels,
        )

    def units(self, n: int) -> list[Unit]:
        return [self.unit(i) for i in range(n)]


# --- queries ----------------------------------------------------------------------------------------


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


# --- embeddings -------------------------------------------------------------------------------------


def load_model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from app.providers.embeddings import LocalEmbedder

    return LocalEmbedder(MODEL, DIM)  # the app's own embedder


def encode(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(model.embed_sync(texts), dtype=np.float32)


@dataclass
class Vectors:
    array: np.ndarray
    embedded: int  # how many were embedded (the rest: pool vectors, perturbed)
    cached: int  # of those, how many came from the cache
    embed_seconds: float  # spent embedding now
    embed_rate: float | None


def vectors_for(
    model_getter: Callable[[], Any], texts: list[str], cache_dir: Path, seed: int, pool: int
) -> Vectors:
    """Vectors of `texts` (a prefix of the generator's stream), reusing and extending the cache,
    which is saved as the embedding goes (an interrupted run loses at most one checkpoint)."""
    need = len(texts) if pool <= 0 else min(pool, len(texts))
    cache_dir.mkdir(parents=True, exist_ok=True)
    stem = cache_dir / f"{GENERATOR_VERSION}-seed{seed}-{MODEL}"
    npy, names = stem.with_suffix(".npy"), stem.with_suffix(".json")
    cached_texts: list[str] = json.loads(names.read_text()) if names.exists() and npy.exists() else []
    cached = np.load(npy) if cached_texts else np.zeros((0, DIM), np.float32)
    same = 0
    for a, b in zip(cached_texts, texts[:need], strict=False):
        if a != b:
            break
        same += 1
    parts, done, embed_seconds, rate = [cached[:same]], same, 0.0, None
    if done < need:
        model = model_getter()
        started, saved = time.perf_counter(), done
        while done < need:
            part = texts[done : min(done + 4096, need)]
            parts.append(encode(model, part))
            done += len(part)
            embed_seconds = time.perf_counter() - started
            rate = (done - same) / embed_seconds
            log(f"  embedding: {done:,}/{need:,} ({rate:,.0f} texts/s, ~{(need - done) / rate:,.0f}s left)")
            if done - saved >= 16_384 or done == need:
                parts = [np.concatenate(parts)]
                np.save(stem.with_suffix(".tmp.npy"), parts[0])
                stem.with_suffix(".tmp.json").write_text(json.dumps(texts[:done], ensure_ascii=False))
                stem.with_suffix(".tmp.npy").replace(npy)
                stem.with_suffix(".tmp.json").replace(names)
                saved = done
    base = np.concatenate(parts)
    if need < len(texts):
        # Past the pool: the pool's vectors again, each moved a little (cosine ~0.97) and renormalised.
        noise = np.random.default_rng(seed).normal(0, 0.0125, (len(texts) - need, DIM)).astype(np.float32)
        extra = base[np.arange(need, len(texts)) % need] + noise
        extra /= np.linalg.norm(extra, axis=1, keepdims=True)
        base = np.concatenate([base, extra])
    return Vectors(base, need, same, embed_seconds, rate)


# --- loading ----------------------------------------------------------------------------------------


def plain_dsn(url: str) -> str:
    return re.sub(r"^postgresql\+\w+://", "postgresql://", url)


async def load_bank(
    url: str, bank_id: str, units: list[Unit], vectors: np.ndarray, rebuild_indexes: bool
) -> dict[str, Any]:
    import asyncpg
    from pgvector.asyncpg import register_vector

    from app.text import search_text

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    conn = await asyncpg.connect(plain_dsn(url))
    try:
        await register_vector(conn)
        async with conn.transaction():
            await conn.execute("SET LOCAL hindsight.allow_purge = 'on'")
            await conn.execute("DELETE FROM banks WHERE id = $1", bank_id)
        await conn.execute("INSERT INTO banks (id, name) VALUES ($1, $2)", bank_id, f"bench {len(units):,}")
        tables = ["memory_units", "memory_embeddings", "entities", "memory_entities", "relations"]
        dropped: list[tuple[str, str]] = []
        if rebuild_indexes:
            dropped = [
                (r["indexname"], r["indexdef"])
                for r in await conn.fetch(
                    """SELECT indexname, indexdef FROM pg_indexes i
                       WHERE schemaname = 'public' AND tablename = ANY($1::text[]) AND NOT EXISTS (
                           SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname,
                           i.indexname)::regclass)""",
                    tables,
                )
            ]
            for name, _ in dropped:
                await conn.execute(f'DROP INDEX "{name}"')

        ids = [uuid.uuid4() for _ in units]
        t = time.perf_counter()
        search = [search_text(u.content) for u in units]
        timings["search_text_s"] = time.perf_counter() - t
        t = time.perf_counter()
        columns = (
            "id bank_id content search_text tags confidence importance status layer session_id source_seqs "
            "source_event_ids valid_from created_at updated_at status_changed_at distiller identity_key "
            "embedding_model"
        ).split()

        def unit_row(i: int, u: Unit) -> tuple[Any, ...]:
            at = u.created_at
            head = (ids[i], bank_id, u.content, search[i], u.tags, u.confidence, u.importance, "active")
            tail: tuple[Any, ...] = (
                u.layer,
                u.session_id,
                [1 + i % 40],
                [],
                u.valid_from,
                at,
                at,
                at,
                "heuristic-1",
            )
            return (*head, *tail, f"bench:{i}", MODEL)

        await conn.copy_records_to_table(
            "memory_units", records=(unit_row(i, u) for i, u in enumerate(units)), columns=columns
        )
        timings["copy_units_s"] = time.perf_counter() - t
        t = time.perf_counter()
        await conn.copy_records_to_table(
            "memory_embeddings",
            records=((ids[i], MODEL, bank_id, DIM, vectors[i], u.created_at) for i, u in enumerate(units)),
            columns=["memory_id", "model", "bank_id", "dim", "embedding", "created_at"],
        )
        timings["copy_embeddings_s"] = time.perf_counter() - t
        t = time.perf_counter()
        from app.db.repositories.graph import canonical

        entity_ids: dict[tuple[str, str], uuid.UUID] = {}
        entity_rows: list[tuple[Any, ...]] = []
        links: set[tuple[uuid.UUID, uuid.UUID]] = set()

        def entity(name: str, kind: str, at: datetime) -> uuid.UUID:
            key = (canonical(name), kind)
            if key not in entity_ids:
                entity_ids[key] = uuid.uuid4()
                entity_rows.append((entity_ids[key], bank_id, name, key[0], kind, at, at))
            return entity_ids[key]

        relation_rows: dict[tuple[uuid.UUID, str, uuid.UUID], tuple[Any, ...]] = {}
        for i, u in enumerate(units):
            for name, kind in u.entities:
                links.add((ids[i], entity(name, kind, u.created_at)))
            for (sname, stype), relation, (oname, otype) in u.relations:
                s, o = entity(sname, stype, u.created_at), entity(oname, otype, u.created_at)
                relation_rows.setdefault(
                    (s, relation, o), (uuid.uuid4(), bank_id, s, relation, o, ids[i], u.created_at)
                )
        await conn.copy_records_to_table(
            "entities",
            records=entity_rows,
            columns=["id", "bank_id", "name", "canonical_name", "type", "created_at", "updated_at"],
        )
        await conn.copy_records_to_table(
            "memory_entities",
            records=((m, e, bank_id) for m, e in links),
            columns=["memory_id", "entity_id", "bank_id"],
        )
        await conn.copy_records_to_table(
            "relations",
            records=list(relation_rows.values()),
            columns=["id", "bank_id", "subject_id", "relation", "object_id", "memory_id", "created_at"],
        )
        timings["copy_entities_s"] = time.perf_counter() - t
        if dropped:
            t = time.perf_counter()
            # Load-time only (the running server's own settings stay as they are): enough memory for the
            # HNSW graph to be built in memory.
            await conn.execute(f"SET maintenance_work_mem = '{index_memory(len(units))}'")
            for name, definition in dropped:
                t_index = time.perf_counter()
                await conn.execute(definition)
                timings[f"index_{name}_s"] = round(time.perf_counter() - t_index, 2)
            await conn.execute("RESET maintenance_work_mem")
            timings["indexes_s"] = time.perf_counter() - t
        t = time.perf_counter()
        for table in tables:
            await conn.execute(f"VACUUM (ANALYZE) {table}")
        timings["vacuum_analyze_s"] = time.perf_counter() - t
        counts = {
            "units": len(units),
            "entities": len(entity_rows),
            "memory_entities": len(links),
            "relations": len(relation_rows),
        }
        sizes = dict(
            await conn.fetch(
                """SELECT relname, pg_total_relation_size(oid) FROM pg_class
                   WHERE relname = ANY($1::text[]) AND relkind = 'r'""",
                tables,
            )
        )
        index_sizes = {
            r["relname"]: r["size"]
            for r in await conn.fetch(
                "SELECT relname, pg_relation_size(oid) AS size FROM pg_class WHERE relname = ANY($1::text[])",
                [HNSW_INDEX, SEARCH_INDEX],
            )
        }
    finally:
        await conn.close()
    timings["total_s"] = time.perf_counter() - t0
    return {
        "counts": counts,
        "rebuilt_indexes": [name for name, _ in dropped],
        "timings": {k: round(v, 2) for k, v in timings.items()},
        "table_bytes": sizes,
        "index_bytes": index_sizes,
    }


def index_memory(units: int) -> str:
    """maintenance_work_mem for the index builds: the HNSW graph in memory (~2 KB a vector at 384 dims)."""
    return f"{max(1, -(-units * 2 // 1_000_000))}GB"


async def active_units(url: str, bank_id: str) -> int:
    import asyncpg

    conn = await asyncpg.connect(plain_dsn(url))
    try:
        query = "SELECT count(*) FROM memory_units WHERE bank_id = $1 AND status = 'active'"
        return int(await conn.fetchval(query, bank_id))
    finally:
        await conn.close()


async def server_facts(url: str) -> dict[str, Any]:
    import asyncpg

    conn = await asyncpg.connect(plain_dsn(url))
    try:
        names = (
            "server_version shared_buffers work_mem effective_cache_size maintenance_work_mem "
            "random_page_cost jit jit_above_cost max_parallel_workers_per_gather "
            "max_connections plan_cache_mode"
        ).split()
        facts = {n: await conn.fetchval(f"SHOW {n}") for n in names}
        facts["jit_available"] = await conn.fetchval("SELECT pg_jit_available()")
        facts["pgvector"] = await conn.fetchval(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        )
    finally:
        await conn.close()
    return facts


# --- the API over HTTP ------------------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    arr = np.asarray(values, dtype=float)
    return {
        "n": len(values),
        "p50": round(float(np.percentile(arr, 50)), 2),
        "p95": round(float(np.percentile(arr, 95)), 2),
        "p99": round(float(np.percentile(arr, 99)), 2),
        "mean": round(float(arr.mean()), 2),
        "max": round(float(arr.max()), 2),
    }


def measure_http(
    base: str,
    admin_key: str,
    bank_id: str,
    queries: list[BenchQuery],
    n: int,
    anchor: datetime,
    warmup: int,
    before: Callable[[], dict[str, Any]],
    ours: Callable[[], list[int]],
) -> dict[str, Any]:
    import httpx

    path = f"/v1/banks/{bank_id}/query"
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {admin_key}"}, timeout=120) as client:
        t = time.perf_counter()
        first = client.post(path, json=queries[0].body(anchor))
        first.raise_for_status()
        first_ms = (time.perf_counter() - t) * 1000
        for q in queries[1 : 1 + warmup]:
            client.post(path, json=q.body(anchor)).raise_for_status()
        conditions = before()
        cpu = CpuAccount(ours)
        wall: list[float] = []
        took: list[float] = []
        results: list[int] = []
        by_category: dict[str, list[float]] = {}
        for k in range(n):
            q = queries[k % len(queries)]
            t = time.perf_counter()
            response = client.post(path, json=q.body(anchor))
            ms = (time.perf_counter() - t) * 1000
            response.raise_for_status()
            body = response.json()
            wall.append(ms)
            took.append(float(body["took_ms"]))
            results.append(len(body["memories"]))
            by_category.setdefault(q.category, []).append(ms)
    return {
        "conditions": {**conditions, **cpu.result()},
        "first_query_ms": round(first_ms, 1),
        "warmup_queries": warmup,
        "client_wall_ms": percentiles(wall),
        "server_took_ms": percentiles(took),
        "by_category_wall_ms": {c: percentiles(v) for c, v in sorted(by_category.items())},
        "mean_results": round(statistics.fmean(results), 2),
        "empty_results": sum(1 for r in results if r == 0),
    }


# --- the channel SQL alone --------------------------------------------------------------------------


@dataclass
class Prepared:
    query: BenchQuery
    filters: Any
    inputs: Any


class _Captured(Exception):
    pass


class _FixedEmbedder:
    model, dim = MODEL, DIM

    def __init__(self, vector: list[float]) -> None:
        self.vector = vector

    async def embed(self, texts: list[str]) -> list[list[float]]:
        return [self.vector for _ in texts]

    async def aclose(self) -> None:
        return None


async def prepare(q: BenchQuery, vector: list[float], bank_id: str, anchor: datetime) -> Prepared:
    """The Filters and ChannelInputs `app.query.service.query` builds for this request, taken from the
    service itself (its `run_channels` call is intercepted), so the channel SQL timed here is exactly
    what the API runs."""
    from types import SimpleNamespace
    from unittest import mock

    from app.query import service
    from app.schemas.query import QueryRequest

    captured: list[Any] = []

    async def intercept(db: Any, filters: Any, inputs: Any) -> list[Any]:
        captured.append((filters, inputs))
        return []

    async def semantic(db: Any, embedder: Any, filters: Any, inputs: Any, text: str) -> list[Any]:
        # The semantic channel (on a connection of its own in the service) ends the capture.
        vector = (await embedder.embed([text]))[0]
        captured.append((filters, replace(inputs, vector=vector, channels=frozenset({"semantic"}))))
        raise _Captured

    deps = service.QueryDeps(
        embedder=_FixedEmbedder(vector),
        working_memory=None,  # type: ignore[arg-type]
        recorder=mock.Mock(),
        working_memory_turns=0,
    )
    bank = SimpleNamespace(id=bank_id, config={})
    with (
        mock.patch.object(service, "run_channels", intercept),
        mock.patch.object(service, "_semantic", semantic),
        mock.patch.object(service, "size_window", _unsized),
        contextlib.suppress(_Captured),
    ):
        db = SimpleNamespace(bind=None)  # never used: the channels are intercepted
        await service.query(db, deps, bank, QueryRequest.model_validate(q.body(anchor)))  # type: ignore[arg-type]
    filters, inputs = captured[0]
    vector = next((i.vector for _, i in captured if i.vector is not None), None)
    channels = frozenset().union(*(i.channels for _, i in captured))
    return Prepared(q, filters, replace(inputs, vector=vector, channels=channels))


async def _unsized(db: Any, filters: Any) -> Any:
    return filters  # run_channels sizes the window on the real connection


def only(inputs: Any, channel: str | None) -> Any:

    return inputs if channel is None else replace(inputs, channels=frozenset({channel}))


def runs_channel(p: Prepared, channel: str) -> bool:
    i = p.inputs
    return {
        "semantic": i.vector is not None,
        "keyword": bool(getattr(i, "keywords", None) or getattr(i, "tsquery", None)),
        "entity": bool(i.entity_names),
        "temporal": True,
        "tag": bool(i.inferred_tags),
    }[channel]


_INDEX_USE = re.compile(r"(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\w+)")
_VECTOR_LITERAL = re.compile(r"'\[[-+0-9.eE,]+\]'")
_SEQ = re.compile(r"Seq Scan on (\w+)")


def plan_summary(plan: str) -> dict[str, Any]:
    def ms(label: str) -> float | None:
        m = re.search(label + r": ([\d.]+) ms", plan)
        return float(m.group(1)) if m else None

    return {
        "execution_ms": ms("Execution Time"),
        "planning_ms": ms("Planning Time"),
        "indexes": sorted(set(_INDEX_USE.findall(plan))),
        "seq_scans": sorted(set(_SEQ.findall(plan))),
        "uses_hnsw": HNSW_INDEX in plan,
        "uses_search_gin": SEARCH_INDEX in plan,
        "jit": "JIT:" in plan,
    }


async def measure_sql(
    url: str, prepared: list[Prepared], explain_cases: list[tuple[str, Prepared, str | None]], rounds: int
) -> dict[str, Any]:
    from sqlalchemy import text

    from app.config import Settings
    from app.db.engine import create_engine
    from app.db.repositories.channels import build_statement, run_channels
    from app.db.repositories.query import rare_words

    settings = Settings(env="test", database_url=url, admin_key="bench-admin-key-unused")
    engine = create_engine(settings, pool_size=1)  # the app's connection settings (hnsw.*) and driver
    timings: dict[str, list[float]] = {c: [] for c in ("all", *CHANNEL_ORDER)}
    hits: dict[str, list[int]] = {c: [] for c in timings}
    plans: list[dict[str, Any]] = []
    from sqlalchemy.ext.asyncio import AsyncSession

    try:
        async with AsyncSession(engine) as db:
            for _ in range(rounds):
                for p in prepared:
                    for channel in (None, *CHANNEL_ORDER):
                        if channel is not None and not runs_channel(p, channel):
                            continue
                        t = time.perf_counter()
                        found = await run_channels(db, p.filters, only(p.inputs, channel))
                        timings[channel or "all"].append((time.perf_counter() - t) * 1000)
                        hits[channel or "all"].append(len(found))
                    await db.rollback()
            for label, p, channel in explain_cases:
                params: dict[str, Any] = {"bank": p.filters.bank_id}
                inputs = only(p.inputs, channel)  # the words `run_channels` keeps, as it would
                inputs = replace(inputs, keywords=await rare_words(db, p.filters.bank_id, inputs.keywords))
                statement = build_statement(p.filters, inputs, params)
                if not statement:  # every word of the query is common in the bank: no keyword channel
                    continue
                rows = (await db.execute(text("EXPLAIN (ANALYZE, BUFFERS) " + statement), params)).all()
                await db.rollback()
                plan = _VECTOR_LITERAL.sub(f"'[{DIM} floats]'", "\n".join(r[0] for r in rows))
                shown = {k: v for k, v in params.items() if k != "qvec"}
                plans.append(
                    {
                        "case": label,
                        "channel": channel or "all",
                        "query": p.query.text,
                        "request_tags": p.query.tags,
                        "params": json.loads(json.dumps(shown, default=str)),
                        **plan_summary(plan),
                        "plan": plan,
                    }
                )
    finally:
        await engine.dispose()
    return {
        "per_channel_ms": {
            c: {**percentiles(v), "mean_hits": round(statistics.fmean(hits[c]), 1)}
            for c, v in timings.items()
            if v
        },
        "plans": plans,
    }


def explain_cases(prepared: list[Prepared]) -> list[tuple[str, Prepared, str | None]]:
    """One representative query per channel (and two for the full statement)."""

    def first(pred: Callable[[Prepared], bool]) -> Prepared:
        return next((p for p in prepared if pred(p)), prepared[0])

    person = first(lambda p: p.query.category == "person" and "budget" in p.query.text)
    plain = first(lambda p: p.query.category == "plain" and p.filters.time_from is None)
    timed = first(lambda p: p.filters.time_from is not None and p.query.text.startswith("What happened"))
    zh = first(lambda p: p.query.category == "zh" and p.filters.time_from is None)
    tagged = first(lambda p: bool(p.query.tags))
    return [
        ("semantic", plain, "semantic"),
        ("semantic, request tags", tagged, "semantic"),
        ("semantic, time filter", timed, "semantic"),
        ("keyword", person, "keyword"),
        ("keyword, Chinese", zh, "keyword"),
        ("entity", person, "entity"),
        ("temporal, no time filter", plain, "temporal"),
        ("temporal, time filter", timed, "temporal"),
        ("tag", person, "tag"),
        ("all channels", person, None),
        ("all channels, time filter", timed, None),
    ]


def embed_query_ms(queries: list[BenchQuery], n: int = 100) -> dict[str, float]:
    """The product's local embedder (ONNX Runtime) on one query at a time, as the API calls it."""
    from app.providers.embeddings import LocalEmbedder

    embedder = LocalEmbedder(MODEL, DIM)
    embedder.embed_sync(["warm up"])
    times = []
    for q in queries[:n]:
        t = time.perf_counter()
        embedder.embed_sync([q.text])
        times.append((time.perf_counter() - t) * 1000)
    return percentiles(times)


# --- the run ----------------------------------------------------------------------------------------


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    import onnxruntime
    import psutil

    cpu = platform.processor()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "onnxruntime": onnxruntime.__version__,
    }


class CpuAccount:
    """CPU the whole machine used from now on, split into ours (the API, its PostgreSQL backends,
    Redis, this process) and other processes', whose work skews the latencies."""

    def __init__(self, ours: Callable[[], list[int]]) -> None:
        import psutil

        self._ours = ours
        self._wall = time.monotonic()
        self._busy = self._machine_busy()
        self._procs = self._own_cpu()
        self._psutil = psutil

    @staticmethod
    def _machine_busy() -> float:
        import psutil

        t = psutil.cpu_times()
        return float(sum(t) - t.idle - getattr(t, "iowait", 0.0))

    def _own_cpu(self) -> dict[int, float]:
        import psutil

        out: dict[int, float] = {}
        for pid in self._ours():
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                for p in (proc, *proc.children(recursive=True)):
                    with contextlib.suppress(psutil.Error):
                        t = p.cpu_times()
                        out[p.pid] = t.user + t.system
        return out

    def result(self) -> dict[str, float]:
        wall = time.monotonic() - self._wall
        busy = self._machine_busy() - self._busy
        now = self._own_cpu()
        ours = sum(v - self._procs.get(pid, 0.0) for pid, v in now.items())
        capacity = wall * (os.cpu_count() or 1)
        return {
            "run_s": round(wall, 1),
            "machine_cpu_percent": round(100 * busy / capacity, 1),
            "our_cpu_percent": round(100 * ours / capacity, 1),
            "other_cpu_percent": round(max(busy - ours, 0.0) * 100 / capacity, 1),
        }


def wait_for_quiet(max_percent: float, timeout: float) -> dict[str, Any]:
    """Wait (up to `timeout` s) until the machine's CPU use, sampled over 2 s, stays under
    `max_percent` three times in a row: other work on a 2-core machine skews every figure."""
    import psutil

    started, quiet, samples = time.monotonic(), 0, []
    while True:
        samples.append(psutil.cpu_percent(interval=2))
        quiet = quiet + 1 if samples[-1] <= max_percent else 0
        waited = time.monotonic() - started
        if quiet >= 3 or waited >= timeout:
            return {"cpu_percent_before": samples[-3:], "waited_s": round(waited, 1), "quiet": quiet >= 3}
        if len(samples) % 15 == 0:
            log(f"  waiting for a quiet machine: CPU {samples[-1]:.0f} % ({waited:.0f}s)")


def rss_mib(pid: int) -> float:
    import psutil

    return round(psutil.Process(pid).memory_info().rss / 2**20, 1)


@dataclass
class Stack:
    database_url: str | None  # None: one embedded database per size
    redis_url: str
    postgres: Any = None

    redis_pid: int | None = None
    rebuild_external: bool = False
    keep_databases: bool = False  # --pgdata --reuse-bank: a size's database from an earlier run is kept

    def own_pids(self) -> list[int]:
        pids = [self.redis_pid] if self.redis_pid else []
        return pids + ([self.postgres.process.pid] if self.postgres else [])

    def url_for(self, units: int) -> tuple[str, bool]:
        """(database URL, whether indexes may be dropped and rebuilt) for a size."""
        if self.database_url:
            return self.database_url, self.rebuild_external
        import psycopg2

        name = f"bench_{units}"
        conn = psycopg2.connect(host="127.0.0.1", port=self.postgres.port, user="postgres", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
            exists = cur.fetchone() is not None
            if not (exists and self.keep_databases):
                cur.execute(f'DROP DATABASE IF EXISTS "{name}"')
                cur.execute(f'CREATE DATABASE "{name}"')
        conn.close()
        return self.postgres.url(name), True


def run_size(
    stack: Stack,
    units_n: int,
    args: argparse.Namespace,
    gen: Generator,
    model_holder: dict[str, Any],
    work: Path,
) -> dict[str, Any]:
    from app.migrate import upgrade
    from bench import harness  # it imports this module's measuring helpers

    log(f"== {units_n:,} units")
    url, rebuild = stack.url_for(units_n)
    upgrade(url)
    t = time.perf_counter()
    units = gen.units(units_n)
    generate_s = time.perf_counter() - t
    log(f"  generated in {generate_s:.1f}s")

    def get_model() -> Any:
        if "model" not in model_holder:
            model_holder["model"] = load_model()
        return model_holder["model"]

    vectors = vectors_for(
        get_model, [u.content for u in units], Path(args.cache_dir), args.seed, args.embed_pool
    )
    bank_id = f"bench-{units_n}"
    loaded: dict[str, Any] = {"reused": True}
    if not (args.reuse_bank and asyncio.run(active_units(url, bank_id)) == units_n):
        log("  loading (COPY) …")
        loaded = asyncio.run(load_bank(url, bank_id, units, vectors.array, rebuild))
        log(f"  loaded in {loaded['timings']['total_s']:.1f}s: {loaded['counts']}")
    else:
        log(f"  reusing the loaded bank {bank_id}")
    db_facts = asyncio.run(server_facts(url))

    queries = make_queries(gen.world, max(args.queries, 50), args.seed)
    admin_key = "bench-admin-" + uuid.uuid4().hex
    env = harness.service_env(url, stack.redis_url, admin_key)
    with harness.api(env, work / f"api-{units_n}.log") as (base, pid):
        log(f"  API up at {base} (pid {pid}); {args.queries} queries over HTTP …")

        def before() -> dict[str, Any]:
            quiet = wait_for_quiet(args.quiet_cpu, args.quiet_wait)
            return {**quiet, "load_average_1m": round(os.getloadavg()[0], 2)}

        def ours() -> list[int]:
            return [pid, os.getpid(), *stack.own_pids()]

        http = measure_http(
            base, admin_key, bank_id, queries, args.queries, gen.anchor, args.warmup, before, ours
        )
        rss = rss_mib(pid)
    log(f"  HTTP p50 {http['client_wall_ms']['p50']} ms, p95 {http['client_wall_ms']['p95']} ms")

    model = get_model()
    distinct: dict[str, BenchQuery] = {}
    for q in queries:
        distinct.setdefault(q.text + str(q.tags), q)
    sample = list(distinct.values())[: args.channel_queries]
    qvecs = encode(model, [q.text for q in sample])
    prepared = [
        asyncio.run(prepare(q, [float(x) for x in v], bank_id, gen.anchor))
        for q, v in zip(sample, qvecs, strict=True)
    ]
    log(f"  channel SQL alone over {len(prepared)} queries, EXPLAIN (ANALYZE, BUFFERS) per channel …")
    sql = asyncio.run(measure_sql(url, prepared, explain_cases(prepared), rounds=2))
    embed = embed_query_ms(sample)
    return {
        "units": units_n,
        "bank_id": bank_id,
        "generate_s": round(generate_s, 1),
        "embedding": {
            "embedded_texts": vectors.embedded,
            "from_cache": min(vectors.cached, vectors.embedded),
            "pool_reused": units_n - vectors.embedded,
            "embed_s": round(vectors.embed_seconds, 1),
            "texts_per_s": round(vectors.embed_rate, 1) if vectors.embed_rate else None,
        },
        "load": loaded,
        "postgres": db_facts,
        "http": http,
        "api_rss_mib": rss,
        "query_embedding_ms": embed,
        "sql": sql,
    }


def print_table(results: list[dict[str, Any]]) -> None:
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("units", lambda r: f"{r['units']:,}"),
        ("HTTP p50 / p95 / p99 ms", lambda r: _ppp(r["http"]["client_wall_ms"])),
        ("HTTP mean ms", lambda r: f"{r['http']['client_wall_ms']['mean']}"),
        ("server took_ms p50 / p95", lambda r: _pp(r["http"]["server_took_ms"])),
        ("query embedding p50 ms", lambda r: f"{r['query_embedding_ms']['p50']}"),
        ("SQL all channels p50 / p95", lambda r: _pp(r["sql"]["per_channel_ms"].get("all"))),
        *[(f"  {c} p50 / p95", functools.partial(_channel_pp, c=c)) for c in CHANNEL_ORDER],
        ("API RSS MiB", lambda r: f"{r['api_rss_mib']}"),
    ]
    width = 30
    print("query latency".ljust(width) + "".join(f"{r['units']:>26,}" for r in results))
    for label, cell in rows[1:]:
        print(label.ljust(width) + "".join(f"{cell(r):>26}" for r in results))
    print("\nEXPLAIN (ANALYZE, BUFFERS):")
    for r in results:
        for p in r["sql"]["plans"]:
            flags = ("HNSW " if p["uses_hnsw"] else "") + ("GIN(search) " if p["uses_search_gin"] else "")
            seq = f" seq: {','.join(p['seq_scans'])}" if p["seq_scans"] else ""
            print(f"  {r['units']:>9,} {p['case']:<28} {p['execution_ms']:>9} ms  {flags}{seq}")


def _channel_pp(r: dict[str, Any], c: str) -> str:
    return _pp(r["sql"]["per_channel_ms"].get(c))


def _pp(p: dict[str, float] | None) -> str:
    return f"{p['p50']} / {p['p95']}" if p else "-"


def _ppp(p: dict[str, float]) -> str:
    return f"{p['p50']} / {p['p95']} / {p['p99']}"


def docs_section(report: dict[str, Any]) -> str:
    m, pg, results = report["machine"], report["postgres"], report["results"]
    wrap = functools.partial(textwrap.fill, width=110, break_on_hyphens=False)
    lines = [
        SECTION,
        "",
        wrap(
            f"Target (retrieval issue): one bank of {TARGET['units']:,} active units, local embedder, end to "
            f"end over HTTP on a {m['cores']}-core machine: p50 ≤ {TARGET['p50_ms']:.0f} ms, p95 ≤ "
            f"{TARGET['p95_ms']:.0f} ms."
        ),
        "",
        "```",
        report["command"],
        "```",
        "",
        wrap(
            f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, "
            f"Python {m['python']}, embedder on ONNX Runtime {m.get('onnxruntime', '?')}, "
            f"PostgreSQL {pg['server_version']} + pgvector {pg['pgvector']} (embedded; shared_buffers "
            f"{pg['shared_buffers']}, work_mem {pg['work_mem']}, jit {pg['jit']}, JIT available: "
            f"{pg['jit_available']}), `hindsight api` (one uvicorn process), {report['queries']} sequential "
            f"queries per size after {report['warmup']} warm-up ones, httpx keep-alive, `top_k` 10, default "
            "fusion (RRF, five channels); the data is synthetic (EN ~90%, ZH ~10%; see "
            "`bench/query_latency.py`), vectors from the real model."
        ),
        "",
        "| | " + " | ".join(f"{r['units']:,} units" for r in results) + " |",
        "|---|" + "---|" * len(results),
    ]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in results) + " |")

    row("HTTP p50 / p95 / p99 (ms)", lambda r: _ppp(r["http"]["client_wall_ms"]))
    row("HTTP mean (ms)", lambda r: str(r["http"]["client_wall_ms"]["mean"]))
    row("server `took_ms` p50 / p95", lambda r: _pp(r["http"]["server_took_ms"]))
    row(
        "HTTP p50 by kind of query (ms)",
        lambda r: ", ".join(f"{k} {v['p50']}" for k, v in r["http"]["by_category_wall_ms"].items()),
    )
    row("query embedding alone p50", lambda r: str(r["query_embedding_ms"]["p50"]))
    row("channel SQL, all five, p50 / p95", lambda r: _pp(r["sql"]["per_channel_ms"].get("all")))
    for c in CHANNEL_ORDER:
        row(f"&nbsp;&nbsp;{c} alone p50 / p95", lambda r, c=c: _pp(r["sql"]["per_channel_ms"].get(c)))  # type: ignore[misc]
    row("API RSS after the run (MiB)", lambda r: str(r["api_rss_mib"]))
    row(
        "CPU of the machine used by other processes during the run",
        lambda r: f"{r['http']['conditions']['other_cpu_percent']} %",
    )
    lines += [
        "",
        "Plans (EXPLAIN ANALYZE, BUFFERS; execution time of the statement with that channel only):",
        "",
    ]
    lines += [
        "| case | " + " | ".join(f"{r['units']:,}" for r in results) + " |",
        "|---|" + "---|" * len(results),
    ]
    cases = list(dict.fromkeys(p["case"] for r in results for p in r["sql"]["plans"]))
    for case in cases:
        cells = []
        for r in results:
            p = next((x for x in r["sql"]["plans"] if x["case"] == case), None)
            if p is None:  # a keyword case whose every word is common in that bank: no statement
                cells.append("— (every word common: no keyword channel)")
                continue
            used = [n for n, hit in (("HNSW", p["uses_hnsw"]), ("GIN search", p["uses_search_gin"])) if hit]
            seq = [f"seq scan {', '.join(p['seq_scans'])}"] if p["seq_scans"] else []
            cells.append(f"{p['execution_ms']} ms" + "".join(f"; {x}" for x in used + seq))
        lines.append(f"| {case} | " + " | ".join(cells) + " |")
    target = next((r for r in results if r["units"] == TARGET["units"]), None)
    lines.append("")
    if target is None:
        lines.append(f"The target size ({TARGET['units']:,}) was not part of this run.")
    else:
        w = target["http"]["client_wall_ms"]
        met = w["p50"] <= TARGET["p50_ms"] and w["p95"] <= TARGET["p95_ms"]
        text = (
            f"**Target {'met' if met else 'not met'}** at {TARGET['units']:,} units: p50 {w['p50']} ms "
            f"(≤ {TARGET['p50_ms']:.0f}), p95 {w['p95']} ms (≤ {TARGET['p95_ms']:.0f})."
        )
        if not met:
            per = target["sql"]["per_channel_ms"]
            slow = sorted(((c, per[c]["p50"]) for c in CHANNEL_ORDER if c in per), key=lambda x: -x[1])
            text += (
                f" Where the time goes (p50): query embedding {target['query_embedding_ms']['p50']} ms, "
                f"the channel statement {per['all']['p50']} ms (slowest channels alone: "
                + ", ".join(f"{c} {ms} ms" for c, ms in slow[:3])
                + "), the rest of the request (HTTP, auth, fusion, reading the units, context) about "
                f"{round(w['p50'] - per['all']['p50'] - target['query_embedding_ms']['p50'], 1)} ms."
            )
        lines.append(wrap(text))
    from bench import harness  # it imports this module's measuring helpers

    lines += harness.footer(report, "Raw figures and the full plans")
    return "\n".join(lines)


def write_docs(section: str) -> None:
    """This program's section of docs/benchmarks.md, keeping its hand-written findings."""
    from bench import harness

    harness.write_section(SECTION.removeprefix("## "), section, keep=FINDINGS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.query_latency", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--units", type=int, action="append", help="bank size; repeat for several (default 100000)"
    )
    parser.add_argument("--queries", type=int, default=300, help="measured HTTP queries per size")
    parser.add_argument(
        "--warmup", type=int, default=30, help="warm-up queries (after the model-loading one)"
    )
    parser.add_argument(
        "--channel-queries", type=int, default=60, help="distinct queries for the SQL timings"
    )
    parser.add_argument("--out", default="bench/results/query_latency.json")
    parser.add_argument("--database-url", default=None, help="use this PostgreSQL (banks bench-<N>)")
    parser.add_argument("--redis-url", default=None)
    parser.add_argument(
        "--pgdata",
        default=None,
        help="keep the embedded cluster (one database per size) in this directory; with --reuse-bank a "
        "later run queries the banks an earlier one loaded",
    )
    parser.add_argument(
        "--rebuild-indexes",
        action="store_true",
        help="with --database-url: drop the loaded tables' secondary indexes for the load and recreate them",
    )
    parser.add_argument("--cache-dir", default="bench/results/cache", help="embedding cache (git-ignored)")
    parser.add_argument(
        "--embed-pool", type=int, default=0, help="embed at most this many texts; reuse after"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument(
        "--reuse-bank",
        action="store_true",
        help="with --database-url or --pgdata: keep a bench-<N> bank already loaded",
    )
    parser.add_argument("--docs-only", action="store_true", help="rewrite the docs section from --out")
    parser.add_argument("--prepare-only", action="store_true", help="generate and embed (cache), then stop")
    parser.add_argument("--quiet-cpu", type=float, default=25.0, help="CPU %% counted as a quiet machine")
    parser.add_argument("--quiet-wait", type=float, default=0.0, help="wait up to this long for it (s)")
    args = parser.parse_args(argv)
    if args.docs_only:
        write_docs(docs_section(json.loads(Path(args.out).read_text())))
        log(f"rewrote the '{SECTION[3:]}' section of {DOCS.relative_to(ROOT)} from {args.out}")
        return 0
    sizes = sorted(set(args.units or [100_000]))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    command = "python -m bench.query_latency " + " ".join(argv if argv is not None else sys.argv[1:])
    # The anchor is the day the vectors were first cached for, so cached data and "last week" agree.
    anchor = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    gen = Generator(args.seed, anchor)
    if args.prepare_only:
        texts = [u.content for u in gen.units(max(sizes))]
        vectors = vectors_for(load_model, texts, Path(args.cache_dir), args.seed, args.embed_pool)
        log(f"cached {vectors.embedded:,} vectors ({vectors.cached:,} were cached already)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="hindsight-bench-"))
    results: list[dict[str, Any]] = []
    model_holder: dict[str, Any] = {}
    with contextlib.ExitStack() as services:
        services.callback(shutil.rmtree, work, True)
        from app.embedded import start_postgres, start_redis

        stack = Stack(args.database_url, args.redis_url or "", rebuild_external=args.rebuild_indexes)
        if not args.database_url:
            pgdata = Path(args.pgdata) if args.pgdata else work / "pgdata"
            log(f"starting embedded PostgreSQL in {pgdata} and Redis in {work}")
            stack.postgres = start_postgres(pgdata)
            stack.keep_databases = bool(args.pgdata and args.reuse_bank)
            services.callback(stack.postgres.stop)
        if not args.redis_url:
            redis = start_redis(work / "redis")
            services.callback(redis.stop)
            stack.redis_url = redis.url
            stack.redis_pid = redis.process.pid
        for n in sizes:
            results.append(run_size(stack, n, args, gen, model_holder, work))
        postgres = results[0]["postgres"] if results else {}
    notes = []
    if any(r["embedding"]["pool_reused"] for r in results):
        notes.append(
            f"Vectors past the first {args.embed_pool:,} units reuse the pool's vectors with a small random "
            "perturbation (cosine ≈ 0.97 to the original), renormalised; their texts are all distinct."
        )
    if not args.database_url or args.rebuild_indexes:
        notes.append(
            "Bulk load: COPY with the tables' secondary indexes dropped and recreated from their own "
            "definitions (maintenance_work_mem 1GB, 2GB per million units, for that session only), then "
            "VACUUM ANALYZE; the server runs with the embedded defaults (app/embedded.py)."
        )
    report = {
        "command": command,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "postgres": postgres,
        "queries": args.queries,
        "warmup": args.warmup,
        "anchor": anchor.isoformat(),
        "target": TARGET,
        "out": args.out,
        "notes": notes,
        "results": results,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False, default=str))
    print_table(results)
    if not args.no_docs:
        write_docs(docs_section(report))
        log(f"wrote {out} and the '{SECTION[3:]}' section of {DOCS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The world the synthetic units talk about: people (EN and ZH, Zipf-weighted, so that a few are
named often) with a city, an employer, a job, a favourite food and a hobby; the vocabulary of the
units; and `Ctx`, what a unit template writes with (its names, amounts and dates recorded as the
unit's entities and relations)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

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

"""The unit templates, English and Chinese: rows of (weight, importance, tags, writer), a writer
writing one unit's content with a `Ctx` and the name its text calls the unit's person by."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from bench.query_latency.world import (
    ALLERGENS,
    CONTACT,
    DELIVERABLES,
    EN_FIRST,
    FOODS,
    GENRES,
    HOBBIES,
    JOBS,
    MAJORS,
    ORGS,
    PETS,
    PLACES,
    PRODUCTS,
    SCHEDULE,
    SCHOOLS,
    TRAVEL,
    ZH_ALLERGENS,
    ZH_FOODS,
    ZH_ORGS,
    ZH_PLACES,
    ZH_PRODUCTS,
    Ctx,
)


class Template(NamedTuple):
    weight: float  # how often the generator picks it, relative to the others of its language
    importance: float
    tags: tuple[str, ...]
    write: Callable[[Ctx, str], str]  # (ctx, the person as the text names them) → the content


def en_templates() -> list[Template]:
    def food(c: Ctx, n: str) -> str:
        dish = c.p.food if c.rng.random() < 0.6 else c.pick(FOODS)
        other = c.pick(FOODS)
        return c.pick(
            [
                f"{n} prefers {dish} over {other}.",
                f"{n} loves {dish}, especially on weekends.",
                f"{n}'s favourite dinner is {dish} from the place near the office.",
                f"{n} does not like {other} but always orders {dish}.",
            ]
        )

    def travel(c: Ctx, n: str) -> str:
        return f"{n} prefers {c.pick(TRAVEL)} when travelling to {c.ent(c.pick(PLACES), 'place')}."

    def entertainment(c: Ctx, n: str) -> str:
        return c.pick(
            [
                f"{n} enjoys {c.pick(GENRES)} and listens to it while commuting.",
                f"{n} has been really into {c.pick(HOBBIES)} lately.",
                f"{n}'s favourite hobby is {c.p.hobby}.",
            ]
        )

    def schedule(c: Ctx, n: str) -> str:
        return f"{n} prefers {c.pick(SCHEDULE)}."

    def contact_pref(c: Ctx, n: str) -> str:
        return f"{n} prefers {c.pick(CONTACT)} for anything urgent."

    def budget(c: Ctx, n: str) -> str:
        amount, product = c.amount(), c.pick(PRODUCTS)
        c.rel(n, "has_budget", amount, "amount")
        return c.pick(
            [
                f"{n}'s budget for the new {product} is {amount}.",
                f"{n} can spend at most {amount} on a {product}.",
                f"{n} wants to keep the {product} under {amount}, including delivery.",
                f"{n} set a budget of {amount} for the trip to {c.ent(c.pick(PLACES), 'place')}.",
            ]
        )

    def deadline(c: Ctx, n: str) -> str:
        return f"{n} needs the {c.pick(DELIVERABLES)} by {c.dated(1, 30)}."

    def diet(c: Ctx, n: str) -> str:
        return c.pick(
            [
                f"{n} is allergic to {c.pick(ALLERGENS)}.",
                f"{n} is vegetarian and avoids {c.pick(['pork', 'beef', 'fish', 'chicken'])}.",
                f"{n} cannot eat {c.pick(ALLERGENS)} and always checks the menu first.",
            ]
        )

    def quantity(c: Ctx, n: str) -> str:
        k = c.rng.randint(2, 12)
        place = c.ent(c.pick(PLACES), "place")
        return f"{n} needs {k} tickets for the concert in {place}."

    def deliver(c: Ctx, n: str) -> str:
        place = c.ent(c.pick(PLACES), "place")
        return f"{n} wants the {c.pick(PRODUCTS)} delivered to the office in {place}."

    def work(c: Ctx, n: str) -> str:
        org = c.ent(c.p.org if c.rng.random() < 0.8 else c.pick(ORGS), "organization")
        c.rel(n, "works_at", org, "organization")
        return c.pick(
            [
                f"{n} works at {org} as a {c.p.job}.",
                f"{n} joined {org} as a {c.p.job} {c.rng.randint(1, 9)} years ago.",
                f"{n} is a {c.p.job} at {org} and leads a team of {c.rng.randint(2, 15)}.",
            ]
        )

    def location(c: Ctx, n: str) -> str:
        city = c.ent(c.p.city if c.rng.random() < 0.75 else c.pick(PLACES), "place")
        c.rel(n, "lives_in", city, "place")
        return c.pick(
            [
                f"{n} lives in {city}.",
                f"{n} moved to {city} in {c.when.year - c.rng.randint(0, 6)}.",
                f"{n} lives in a small flat in {city} close to the river.",
            ]
        )

    def family(c: Ctx, n: str) -> str:
        q = c.mention(c.person())
        return c.pick(
            [
                f"{n} has two kids, {c.pick(EN_FIRST)} and {c.pick(EN_FIRST)}.",
                f"{n}'s sister {q} lives in {c.ent(c.pick(PLACES), 'place')}.",
                f"{n} has {c.pick(PETS)}.",
                f"{n} is married to {q}.",
            ]
        )

    def education(c: Ctx, n: str) -> str:
        school = c.ent(c.pick(SCHOOLS).removeprefix("the "), "organization")
        return f"{n} studied {c.pick(MAJORS)} at {school}."

    def ident(c: Ctx, n: str) -> str:
        code = c.ent(f"ORD-{c.rng.randint(10000, 99999)}", "id")
        return f"{n}'s order number for the {c.pick(PRODUCTS)} is {code}."

    def contact(c: Ctx, n: str) -> str:
        email = c.ent(f"{c.p.first.lower()}.{c.p.name.split()[-1].lower()}@example.com", "contact")
        return f"{n}'s email is {email}."

    def task(c: Ctx, n: str) -> str:
        product = c.pick(PRODUCTS)
        return c.pick(
            [
                f"The {product} order for {n} was shipped on {c.dated(-5, 0)}.",
                f"{n}'s refund for the {product} is still pending.",
                f"The visa application for {n} is done.",
                f"{n} is waiting for {c.ent(c.pick(ORGS), 'organization')} to confirm the interview on "
                f"{c.dated(1, 14)}.",
                f"The {c.pick(DELIVERABLES)} for {n} is finished and was sent for review.",
            ]
        )

    def correction(c: Ctx, n: str) -> str:
        amount, old = c.amount(), c.amount()
        c.rel(n, "has_budget", amount, "amount")
        return f"Correction: {n}'s budget for the {c.pick(PRODUCTS)} is actually {amount}, not {old}."

    def episode(c: Ctx, n: str) -> str:
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
        return " ".join(c.rng.sample(sentences, k))

    return [
        Template(5, 0.6, ("preference.food",), food),
        Template(2, 0.5, ("preference.travel",), travel),
        Template(3, 0.5, ("preference.entertainment",), entertainment),
        Template(1.5, 0.5, ("preference.schedule",), schedule),
        Template(1, 0.5, ("preference.contact",), contact_pref),
        Template(5, 0.85, ("constraint.budget",), budget),
        Template(2.5, 0.8, ("constraint.time",), deadline),
        Template(2, 0.85, ("constraint.diet",), diet),
        Template(1, 0.7, ("constraint.quantity",), quantity),
        Template(1, 0.7, ("constraint.location",), deliver),
        Template(5, 0.7, ("fact.work",), work),
        Template(4, 0.7, ("fact.location",), location),
        Template(4, 0.7, ("fact.family",), family),
        Template(1.5, 0.6, ("fact.education",), education),
        Template(2, 0.7, ("fact.id",), ident),
        Template(1, 0.6, ("fact.contact",), contact),
        Template(7, 0.5, ("task_state",), task),
        Template(1, 0.95, ("constraint.budget", "correction"), correction),
        Template(36, 0.3, ("episode",), episode),
    ]


def zh_templates() -> list[Template]:
    def food(c: Ctx, n: str) -> str:
        dish = c.p.food if c.rng.random() < 0.6 else c.pick(ZH_FOODS)
        return c.pick([f"{n}喜欢吃{dish}，尤其是周末。", f"{n}最爱{dish}，不太喜欢{c.pick(ZH_FOODS)}。"])

    def budget(c: Ctx, n: str) -> str:
        amount = c.amount(zh=True)
        c.rel(n, "has_budget", amount, "amount")
        return f"{n}买{c.pick(ZH_PRODUCTS)}的预算是{amount}。"

    def location(c: Ctx, n: str) -> str:
        city = c.ent(c.p.city, "place")
        c.rel(n, "lives_in", city, "place")
        return c.pick([f"{n}住在{city}。", f"{n}去年搬到了{city}。"])

    def work(c: Ctx, n: str) -> str:
        org = c.ent(c.p.org, "organization")
        c.rel(n, "works_at", org, "organization")
        return f"{n}在{org}工作，是一名{c.p.job}。"

    def diet(c: Ctx, n: str) -> str:
        return f"{n}对{c.pick(ZH_ALLERGENS)}过敏。"

    def ident(c: Ctx, n: str) -> str:
        code = c.ent(f"ORD-{c.rng.randint(10000, 99999)}", "id")
        return f"{n}的订单号是{code}。"

    def task(c: Ctx, n: str) -> str:
        return f"{n}的{c.pick(ZH_PRODUCTS)}已经发货{c.dated(-5, 0, zh=True)}。"

    def family(c: Ctx, n: str) -> str:
        return c.pick([f"{n}有两个孩子，一个上小学。", f"{n}家里养了一只猫。"])

    def deadline(c: Ctx, n: str) -> str:
        return f"{n}下周要去{c.ent(c.pick(ZH_PLACES), 'place')}开会{c.dated(3, 10, zh=True)}。"

    def episode(c: Ctx, n: str) -> str:
        q = c.mention(c.person())
        place = c.ent(c.pick(ZH_PLACES), "place")
        return c.pick(
            [
                f"{n}上周和{q}去{place}出差了，住在公司附近的酒店。",
                f"{n}说和{c.ent(c.pick(ZH_ORGS), 'organization')}的会议不太顺利，演示出了问题。",
                f"{n}周末帮{q}搬家，累得不行。",
                f"{n}在{place}吃了{c.pick(ZH_FOODS)}，觉得味道一般。",
                f"{n}打算和{q}一起去{place}旅游，还没订机票。",
            ]
        )

    return [
        Template(6, 0.6, ("preference.food",), food),
        Template(6, 0.85, ("constraint.budget",), budget),
        Template(5, 0.7, ("fact.location",), location),
        Template(5, 0.7, ("fact.work",), work),
        Template(2, 0.85, ("constraint.diet",), diet),
        Template(2, 0.7, ("fact.id",), ident),
        Template(6, 0.5, ("task_state",), task),
        Template(3, 0.7, ("fact.family",), family),
        Template(2, 0.8, ("constraint.time",), deadline),
        Template(30, 0.3, ("episode",), episode),
    ]

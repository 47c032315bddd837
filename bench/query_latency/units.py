"""The synthetic units: `Generator.unit(i)` depends only on (seed, i), so a smaller bank is a prefix
of a larger one (and of the embedding cache)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from bench.query_latency.templates import en_templates, zh_templates
from bench.query_latency.world import Ctx, build_world

GENERATOR_VERSION = "units-v1"  # bump when the generator changes: cached vectors are keyed by it


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


_A_VOWEL = re.compile(r"(^|\s)a ([aeiou])")


class Generator:
    """Unit i depends only on (seed, i), so a smaller size is a prefix of a larger one."""

    def __init__(self, seed: int, anchor: datetime) -> None:
        self.seed = seed
        self.anchor = anchor
        self.world = build_world(seed)
        self._en = en_templates()
        self._zh = zh_templates()
        self._en_cum = list(np.cumsum([t.weight for t in self._en]))
        self._zh_cum = list(np.cumsum([t.weight for t in self._zh]))

    def unit(self, i: int) -> Unit:
        rng = random.Random(self.seed * 1_000_003 + i)
        zh = rng.random() < 0.1
        age = timedelta(seconds=730 * 86_400 * rng.random() ** 1.15)  # two years, a bit denser lately
        when = self.anchor - age
        world = self.world
        people, cum = (world.zh, world.zh_cum) if zh else (world.en, world.en_cum)
        ctx = Ctx(rng, world, when, rng.choices(people, cum_weights=cum)[0])
        templates, tcum = (self._zh, self._zh_cum) if zh else (self._en, self._en_cum)
        template = rng.choices(templates, cum_weights=tcum)[0]
        content = template.write(ctx, ctx.mention(ctx.p))  # the text names its person first
        tags = list(template.tags)
        if not zh:
            content = _A_VOWEL.sub(r"\1an \2", content)
        # Templates pick among several sentences; only the names the chosen text says are its entities.
        ctx.ents = [e for e in ctx.ents if e[0] in content]
        ctx.rels = [r for r in ctx.rels if r[0][0] in content and r[2][0] in content]
        importance = min(max(template.importance + rng.uniform(-0.15, 0.15), 0.05), 1.0)
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

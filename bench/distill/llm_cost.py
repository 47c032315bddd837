"""LLM calls and tokens per 100 events (`python -m bench.distill --distiller llm`, issue 34): conversations
distilled as the service distils them — a distillation every `distill_every_n_turns` turns, resolution
after each, the session closed at its end — by the LLM distiller and judge in process, against the
project's stand-in OpenAI-compatible server (tests/fake_openai.py). The stand-in answers the distiller with
the heuristic distiller's units for the same turns (a realistic reply size), the judge with "does not
replace", and bills `usage` by counting the real prompts and replies with the local WordPiece tokenizer
(close to, not the same as, a GPT tokenizer's count). Every call goes through the ledger, and the figures
are read back from it with the usage report's own code."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from bench.distill.in_process import InProcess
from bench.harness import services
from bench.harness.measure import log

Sessions = list[tuple[str, list[dict[str, Any]]]]


def locomo_sessions(path: Path, events: int) -> Sessions:
    """The LoCoMo dev split's sessions in order, cut at `events` turns."""
    from app.eval.locomo import load_dataset, turn_event

    out: Sessions = []
    total = 0
    for c in load_dataset(path):
        for s in c.sessions:
            turns = [turn_event(t) for t in s.turns][: max(events - total, 0)]
            if turns:
                out.append((f"{c.sample_id}-{s.session_id}", turns))
                total += len(turns)
    return out


def seed_sessions() -> Sessions:
    """The seeds' scenario (app/seeds.py), English and Chinese, one session each."""
    from app.seeds import BUDGET_CONVERSATION

    return [
        (f"seed-{language}", [{"role": role, "content": content} for role, content in turns])
        for language, turns in BUDGET_CONVERSATION.items()
    ]


async def stand_in_reply(body: dict[str, Any]) -> str:
    """What the stand-in model answers: the heuristic distiller's units for the fenced turns."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    at = datetime.fromisoformat

    from app.distill.heuristic.distiller import HeuristicDistiller
    from app.distill.types import DistillContext, Turn
    from tests.fake_openai import fenced, mirror

    if (body.get("response_format") or {}).get("json_schema", {}).get("name") != "memory_units":
        return await mirror(body)  # the judge's "does not replace", the task stage's "no task"
    turns = [
        Turn(t["seq"], t["seq"], t["role"], t["content"], t["speaker"], at(t["occurred_at"]))
        for t in fenced(body, "turns") or []
    ]
    result = await HeuristicDistiller().distill(DistillContext("bench", "bench", turns, ZoneInfo("UTC")))
    units = [c.model_dump(mode="json", exclude={"occurred_on"}) for c in result.candidates]
    return json.dumps({"units": units}, ensure_ascii=False)


async def measure(
    s: services.Stack, llm_url: str, name: str, sessions: Sessions, every: int
) -> dict[str, Any]:
    """Distil `sessions` into a bank of their own and read what the ledger recorded of it."""
    import redis.asyncio as aioredis

    from app.banks.service import configured_bank
    from app.config import Settings
    from app.db.engine import create_engine, create_sessionmaker
    from app.db.models import Bank
    from app.distill import service as distill
    from app.distill.entry import reflect
    from app.events import service as events
    from app.events.working_memory import WorkingMemory
    from app.jobs.queue import TaskQueue
    from app.jobs.schedule import schedule_distill
    from app.jobs.unit_of_work import UnitOfWork
    from app.providers.embeddings import create_embedder
    from app.providers.metering import charging
    from app.resolve.judge import LLMJudge
    from app.resolve.service import resolve_pending
    from app.schemas.events import AppendRequest
    from app.usage import service as usage
    from app.usage.budget import Budget
    from app.usage.ledger import Ledger
    from worker.factory import create_celery

    settings = Settings(
        env="test",
        database_url=s.database_url,
        redis_url=s.redis_url,
        admin_key="x" * 20,
        embedding_model=services.MODEL,
        distiller="llm",
        llm_base_url=llm_url,
        llm_model="bench-model",
    )
    engine = create_engine(settings, pool_size=4)
    maker = create_sessionmaker(engine)
    bank_id = f"bench-llm-{name}-{every}"
    async with maker() as db, db.begin():
        db.add(Bank(id=bank_id, name=bank_id, config={"distill_every_n_turns": every}))
    ledger = Ledger(maker)
    llm = distill.create_distiller(settings, "llm", ledger)
    heuristic = distill.create_distiller(settings, "heuristic")
    judge = LLMJudge.from_settings(settings, ledger)
    embedder = create_embedder(settings)
    runtime = InProcess(maker, embedder, lambda which: heuristic if which == "heuristic" else llm)
    work = UnitOfWork(maker, TaskQueue(create_celery(settings)))
    redis = aioredis.Redis.from_url(settings.redis_url)
    buffer = WorkingMemory(redis, max_turns=50, ttl_seconds=600)
    started = time.perf_counter()
    n_events = 0
    for sid, turns in sessions:
        for i in range(0, len(turns), every):
            last = i + every >= len(turns)
            async with work.session() as db:
                bank = await configured_bank(db, bank_id)
                assert bank is not None
                body = AppendRequest.model_validate({"events": turns[i : i + every]})
                await events.append(db, events.Appending(bank, sid, body, buffer))
                # The trigger every `every` turns; at the end of a session its close (a reflect).
                job = await reflect(db, bank, sid) if last else (await schedule_distill(db, bank_id, sid))[0]
            with charging(bank_id, job.id):
                await distill.distill_session(runtime, job)
            with charging(bank_id):
                while True:
                    async with maker() as db, db.begin():
                        counts = await resolve_pending(db, bank_id, embedder=embedder, judge=judge)
                    if not any(counts.values()):
                        break
            n_events += len(turns[i : i + every])
    async with maker() as db:
        bank = await configured_bank(db, bank_id)
        assert bank is not None
        report = await usage.bank_report(db, Budget(), bank, since=None, until=None, group_by="operation")
    for closing in (llm, judge, embedder):
        await closing.aclose()
    await redis.aclose()
    await engine.dispose()
    seconds = time.perf_counter() - started
    return _figures(name, every, n_events, len(sessions), report.model_dump(mode="json"), seconds)


def _figures(
    name: str, every: int, n_events: int, n_sessions: int, report: dict[str, Any], seconds: float
) -> dict[str, Any]:
    per_100 = 100 / max(n_events, 1)
    totals = report["totals"]
    by_operation = {
        g["key"]: {
            "calls_per_100_events": round(g["calls"] * per_100, 1),
            "tokens_per_100_events": round(g["total_tokens"] * per_100),
        }
        for g in report["groups"]
    }
    return {
        "dataset": name,
        "distill_every_n_turns": every,
        "sessions": n_sessions,
        "events": n_events,
        "calls": totals["calls"],
        "tokens": totals["total_tokens"],
        "calls_per_100_events": round(totals["calls"] * per_100, 1),
        "prompt_tokens_per_100_events": round(totals["prompt_tokens"] * per_100),
        "completion_tokens_per_100_events": round(totals["completion_tokens"] * per_100),
        "tokens_per_100_events": round(totals["total_tokens"] * per_100),
        "estimated_calls": totals["estimated_calls"],
        "by_operation": by_operation,
        "wall_s": round(seconds, 1),
    }


def run(s: services.Stack, locomo: Path, events: int, everies: list[int]) -> list[dict[str, Any]]:
    """Each data set at each trigger interval, through one stand-in server; the rows of the report."""
    import asyncio

    from app.providers.metering import count_tokens
    from tests.fake_openai import ChatStep, create_fake_openai, serve

    fake = create_fake_openai(count=count_tokens)
    fake.state.chat_script = [ChatStep(answer=stand_in_reply, prompt_tokens=None, completion_tokens=None)]
    rows = []
    with serve(fake) as url:
        for name, sessions in (("locomo-dev", locomo_sessions(locomo, events)), ("seeds", seed_sessions())):
            for every in everies:
                n = sum(len(t) for _, t in sessions)
                log(f"  {name}: {n} events, a distillation every {every} turns …")
                fake.state.usage_sent.clear()
                row = asyncio.run(measure(s, url, name, sessions, every))
                billed = dict(fake.state.usage_sent)
                row["server_billed"] = billed  # what the stand-in answered with: the ledger must say the same
                row["ledger_equals_server"] = (row["calls"], row["tokens"]) == (
                    billed.get("calls", 0),
                    billed.get("prompt_tokens", 0) + billed.get("completion_tokens", 0),
                )
                rows.append(row)
                log(
                    f"    {row['calls_per_100_events']} calls and {row['tokens_per_100_events']:,} tokens "
                    f"per 100 events ({row['wall_s']} s)"
                )
    return rows

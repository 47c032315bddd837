"""Distillation throughput: events through ONE Celery worker, heuristic distiller, local embedder.

    python -m bench.distill [--events 2500] [--zh-share 0.15] [--profile-events 1000]
        [--database-url URL --redis-url URL]

The events are realistic conversation turns: LoCoMo's (../shared/data/locomo, English, two people
over many sessions) with Chinese sessions mixed in (`--zh-share` of the events; everyday talk with
preferences, budgets, dates, places, names, tasks and small talk). They are appended over HTTP to
`hindsight api` in per-session batches with the default bank config (a distillation job every 5
undistilled turns), each session then closed (its last turns distilled), and one `hindsight worker`
(its defaults: one process, queues distill, resolve and maintenance) distils them. The worker is
warmed first (model and dictionaries loaded on a small session), then the clock runs from the first
append until every session's `distilled_seq` reaches its `last_seq`; the time until the last pending
unit is resolved is reported too.

Then the same distillation runs in this process under cProfile (the distill service called
directly on the same kind of events in another bank, same distiller, same local embedder, real
PostgreSQL and Redis): the top items by cumulative time, and the split between the distiller, the
embedder and the database. Writes `--out` and the "Distillation throughput" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import random
import textwrap
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench import harness
from bench.harness import log

SECTION = "Distillation throughput"
FINDINGS = "### Findings"
TARGET_EVENTS_PER_S = 150.0
LOCOMO = harness.ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
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


# --- over HTTP, through the worker ------------------------------------------------------------------


class Api:
    def __init__(self, base: str, key: str) -> None:
        import httpx

        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=120)

    def bank(self, bank_id: str, config: dict[str, Any] | None = None) -> None:
        body: dict[str, Any] = {"bank_id": bank_id} | ({"config": config} if config else {})
        self.client.post("/v1/banks", json=body).raise_for_status()

    def append(self, bank_id: str, session_id: str, turns: list[dict[str, Any]]) -> int:
        appended = 0
        for i in range(0, len(turns), BATCH):
            r = self.client.post(
                f"/v1/banks/{bank_id}/sessions/{session_id}/events", json={"events": turns[i : i + BATCH]}
            )
            r.raise_for_status()
            appended += int(r.json()["appended"])
        # Closed, as a client ends a conversation: the last turns short of `distill_every_n_turns` are
        # distilled now, not after the sweep's idle delay.
        self.client.post(f"/v1/banks/{bank_id}/sessions/{session_id}/close").raise_for_status()
        return appended


async def progress(database_url: str, bank_id: str) -> dict[str, int]:
    import asyncpg

    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        row = await conn.fetchrow(
            """SELECT coalesce(sum(last_seq - distilled_seq), 0) AS undistilled,
                      coalesce(sum(last_seq), 0) AS events,
                      (SELECT count(*) FROM memory_units
                       WHERE bank_id = $1 AND status = 'pending') AS pending,
                      (SELECT count(*) FROM memory_units WHERE bank_id = $1) AS units,
                      (SELECT count(*) FROM memory_units WHERE bank_id = $1 AND status = 'active') AS active,
                      (SELECT count(*) FROM jobs WHERE bank_id = $1 AND kind = 'distill.session') AS jobs,
                      (SELECT count(*) FROM jobs WHERE bank_id = $1 AND status = 'failed') AS failed
               FROM sessions WHERE bank_id = $1""",
            bank_id,
        )
    finally:
        await conn.close()
    return {k: int(v) for k, v in dict(row).items()}


def wait_until(database_url: str, bank_id: str, done: Any, timeout: float) -> tuple[float, dict[str, int]]:
    deadline = time.monotonic() + timeout
    while True:
        state = asyncio.run(progress(database_url, bank_id))
        if done(state):
            return time.perf_counter(), state
        if state["failed"]:
            raise RuntimeError(f"a job failed: {state}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"not done within {timeout:.0f}s: {state}")
        time.sleep(0.25)


def through_worker(
    s: harness.Stack, sessions: list[tuple[str, list[dict[str, Any]]]], args: argparse.Namespace
) -> dict[str, Any]:
    admin_key = "bench-admin-" + uuid.uuid4().hex
    env = harness.service_env(
        s.database_url, s.redis_url, admin_key, HINDSIGHT_RATE_LIMIT_PER_SECOND="100000"
    )
    worker_log = s.work / "worker.log"
    with (
        harness.api(env, s.work / "api.log") as (base, api_pid),
        harness.child(["worker", "--name", "bench-distill@%h"], env, worker_log) as worker,
    ):
        api = Api(base, admin_key)
        log("  warming the worker up (model, dictionaries) …")
        api.bank("bench-warm")
        api.append("bench-warm", "warm", sessions[0][1][:20])
        wait_until(
            s.database_url, "bench-warm", lambda st: st["undistilled"] == 0 and st["pending"] == 0, 300
        )
        quiet = harness.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
        bank_id = "bench-distill"
        api.bank(bank_id)
        total = sum(len(t) for _, t in sessions)
        log(f"  appending {total:,} events in {len(sessions)} sessions; one worker distils them …")
        account = harness.CpuAccount(
            lambda: [*harness.process_tree(api_pid), *harness.process_tree(worker.pid), *s.pids]
        )
        worker_cpu0 = sum(harness.process_cpu_s(p) for p in harness.process_tree(worker.pid))
        started = time.perf_counter()
        appended = sum(api.append(bank_id, sid, turns) for sid, turns in sessions)
        appended_at = time.perf_counter()
        distilled_at, state = wait_until(
            s.database_url, bank_id, lambda st: st["undistilled"] == 0, args.timeout
        )
        worker_cpu = sum(harness.process_cpu_s(p) for p in harness.process_tree(worker.pid)) - worker_cpu0
        conditions = account.result()
        resolved_at, final = wait_until(
            s.database_url, bank_id, lambda st: st["undistilled"] == 0 and st["pending"] == 0, args.timeout
        )
        rss = harness.rss_mib(worker.pid)
    wall = distilled_at - started
    return {
        "events": appended,
        "sessions": len(sessions),
        "append_s": round(appended_at - started, 2),
        "distilled_s": round(wall, 2),
        "events_per_s": round(appended / wall, 1),
        "resolved_s": round(resolved_at - started, 2),
        "events_per_s_resolved": round(appended / (resolved_at - started), 1),
        "worker_cpu_s_until_distilled": round(worker_cpu, 1),
        "worker_cpu_ms_per_event": round(1000 * worker_cpu / appended, 2),
        "at_distilled": state,
        "final": final,
        "conditions": {**quiet, **conditions},
        "worker_rss_mib": rss,
    }


# --- in process, under cProfile ---------------------------------------------------------------------

PHASES = {
    "distiller (heuristic)": ("app/distill/heuristic/distiller.py", "distill"),
    "embedding (local model)": ("app/providers/embeddings.py", "embed_sync"),
}


async def profile_in_process(
    s: harness.Stack, sessions: list[tuple[str, list[dict[str, Any]]]], top: int
) -> dict[str, Any]:
    """Append the events through the events service, then run `distill_session` on each session
    under cProfile; the embedder runs in a worker thread, so it is timed on its own too."""
    from app.config import Settings
    from app.db.engine import create_engine, create_sessionmaker
    from app.db.models import Bank
    from app.distill import service as distill
    from app.distill.triggers import DISTILL
    from app.events import service as events
    from app.jobs import service as jobs
    from app.jobs.queue import TaskQueue
    from app.providers.embeddings import create_embedder
    from app.schemas.events import AppendRequest
    from worker.factory import create_celery

    settings = Settings(env="test", database_url=s.database_url, redis_url=s.redis_url, admin_key="x" * 20)
    engine = create_engine(settings, pool_size=2)
    maker = create_sessionmaker(engine)
    bank_id = "bench-distill-profile"
    async with maker() as db, db.begin():
        db.add(Bank(id=bank_id, name=bank_id, config={"distill_every_n_turns": 1000}))
    for sid, turns in sessions:
        for i in range(0, len(turns), BATCH):
            async with maker() as db:
                bank = await db.get(Bank, bank_id)
                assert bank is not None
                await events.append(
                    db, bank, sid, AppendRequest.model_validate({"events": turns[i : i + BATCH]})
                )
    embedder = create_embedder(settings)
    embedder_s = 0.0
    inner = embedder.embed  # type: ignore[attr-defined]

    async def timed_embed(texts: list[str]) -> list[list[float]]:
        nonlocal embedder_s
        t = time.perf_counter()
        try:
            return await inner(texts)  # type: ignore[no-any-return]
        finally:
            embedder_s += time.perf_counter() - t

    embedder.embed = timed_embed  # type: ignore[method-assign]
    await embedder.embed(["warm up"])
    embedder_s = 0.0
    heuristic = distill.create_distiller(settings)
    await heuristic.distill(_warm_context())  # jieba's dictionary, dateparser's tables
    runtime = distill.DistillRuntime(
        sessionmaker=maker,
        embedder=embedder,
        distiller=lambda name: heuristic,
        queue=TaskQueue(create_celery(settings)),
    )
    job_rows = []
    async with maker() as db, db.begin():
        for sid, _ in sessions:
            job, _ = await jobs.create(db, DISTILL, bank_id=bank_id, params={"session_id": sid})
            job_rows.append(job)
    profiler = cProfile.Profile()
    cpu0, started = time.process_time(), time.perf_counter()
    profiler.enable()
    results = [await distill.distill_session(runtime, job) for job in job_rows]
    profiler.disable()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu0
    await engine.dispose()
    n = sum(r.get("events", 0) for r in results)
    stats = pstats.Stats(profiler)
    return {
        "events": n,
        "units": sum(r.get("units", 0) for r in results),
        "wall_s": round(wall, 2),
        "events_per_s": round(n / wall, 1),
        "process_cpu_s": round(cpu, 2),
        "embedding_s": round(embedder_s, 2),
        "split_s": _split(stats, wall, embedder_s),
        "top_cumulative": _top(stats, top),
        "note": "cProfile slows the profiled (main) thread down; the embedding runs in a worker thread "
        "(asyncio.to_thread), outside the profile, and is timed around its awaits",
    }


def _warm_context() -> Any:
    from zoneinfo import ZoneInfo

    from app.distill.taxonomy import bank_taxonomy
    from app.distill.types import DistillContext, Turn

    turns = [
        Turn(
            1,
            uuid.uuid4(),
            "user",
            "I prefer window seats; my budget is 5000 by next Friday and I live in Lisbon.",
            "Ana",
            datetime.now(UTC),
        ),
        Turn(2, uuid.uuid4(), "user", "我下周三去上海出差，预算不超过八千。", "小王", datetime.now(UTC)),
    ]
    return DistillContext("warm", "warm", turns, ZoneInfo("UTC"), [], bank_taxonomy([]))


def _func_label(key: tuple[str, int, str]) -> str:
    path, line, name = key
    root = str(harness.ROOT) + "/"
    if "site-packages/" in path:
        path = path.split("site-packages/", 1)[1]
    elif path.startswith(root):
        path = path[len(root) :]
    elif path == "~":
        return name
    return f"{path}:{line}({name})"


def _top(stats: pstats.Stats, n: int) -> list[dict[str, Any]]:
    """The top `n` functions by cumulative time, leaving out the event loop and the wrappers every
    call passes through (they are 100 % of everything and say nothing)."""
    skip = (
        "asyncio/",
        "selectors.py",
        "threading.py",
        "greenlet",
        "concurrency.py",
        "contextlib.py",
        "bench/distill.py",
        "{method 'run'",
    )
    rows = []
    for key, (_cc, nc, tt, ct, _) in stats.stats.items():  # type: ignore[attr-defined]
        label = _func_label(key)
        if any(s in label for s in skip) or label.startswith("<"):
            continue
        rows.append({"function": label, "calls": nc, "tottime_s": round(tt, 3), "cumtime_s": round(ct, 3)})
    rows.sort(key=lambda r: -r["cumtime_s"])
    return rows[:n]


def _split(stats: pstats.Stats, wall: float, embedding_s: float) -> dict[str, float]:
    def cum(path: str, name: str) -> float:
        return sum(
            v[3]
            for k, v in stats.stats.items()  # type: ignore[attr-defined]
            if k[0].endswith(path) and k[2] == name
        )

    distiller = cum("app/distill/heuristic/distiller.py", "distill")
    return {
        "wall": round(wall, 2),
        "distiller": round(distiller, 2),
        "embedding": round(embedding_s, 2),
        "database_and_rest": round(max(wall - distiller - embedding_s, 0.0), 2),
    }


def profile_text(stats: pstats.Stats, n: int) -> str:
    out = io.StringIO()
    pstats.Stats(stats, stream=out).sort_stats("cumulative").print_stats(n)  # type: ignore[arg-type]
    return out.getvalue()


# --- the report ---------------------------------------------------------------------------------------


def docs_section(report: dict[str, Any]) -> str:
    m, w, p = report["machine"], report["worker"], report["profile"]
    wrap = lambda s: textwrap.fill(s, width=110, break_on_hyphens=False)  # noqa: E731
    met = w["events_per_s"] >= TARGET_EVENTS_PER_S
    lines = [
        f"## {SECTION}",
        "",
        wrap(
            f"Target (benchmark issue): ≥ {TARGET_EVENTS_PER_S:.0f} events/s through one worker with the "
            "heuristic distiller and the local embedder."
        ),
        "",
        "```",
        report["command"],
        "```",
        "",
        wrap(
            f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
            f"{m['python']}, embedder on ONNX Runtime {m.get('onnxruntime', '?')}; embedded PostgreSQL and "
            "Redis, `hindsight api` and one "
            "`hindsight worker` (one process, queues distill, resolve and maintenance) as child processes. "
            f"{w['events']:,} events in {w['sessions']} sessions ({report['zh_events']:,} of them Chinese): "
            "LoCoMo's dev-split turns with Chinese sessions mixed in, appended in per-session batches of "
            f"{BATCH} with the default bank config (a job every 5 undistilled turns), each session then "
            "closed (its last turns distilled). The worker was warm (model and dictionaries loaded) before "
            "the clock started."
        ),
        "",
        "| | |",
        "|---|---|",
        f"| events/s, first append → every watermark at the end | **{w['events_per_s']}** "
        f"({w['events']:,} events in {w['distilled_s']} s) |",
        f"| events/s, first append → no pending unit left (resolution too) | {w['events_per_s_resolved']} "
        f"({w['resolved_s']} s) |",
        f"| appending alone | {w['append_s']} s |",
        f"| worker CPU per event (until the watermarks) | {w['worker_cpu_ms_per_event']} ms |",
        f"| distillation jobs / units / active units at the end | {w['final']['jobs']} / "
        f"{w['final']['units']:,} / {w['final']['active']:,} |",
        f"| worker RSS (MiB) | {w['worker_rss_mib']} |",
        "| CPU of the machine used by other processes during the run | "
        f"{w['conditions']['other_cpu_percent']} % |",
        "",
        wrap(
            f"**Target {'met' if met else 'not met'}**: {w['events_per_s']} events/s "
            f"(≥ {TARGET_EVENTS_PER_S:.0f})."
        ),
        "",
        wrap(
            f"Where the time goes: the same distillation in process, the distill service called directly "
            f"per session under cProfile ({p['events']:,} events → {p['units']:,} units in {p['wall_s']} s, "
            f"{p['events_per_s']} events/s with the profiler on): heuristic distiller "
            f"{p['split_s']['distiller']} s, local embedder {p['split_s']['embedding']} s (a worker thread, "
            f"timed around its awaits), database and the rest {p['split_s']['database_and_rest']} s. Top 10 "
            "by cumulative time of the main thread (event-loop plumbing left out), the embedder's thread "
            "first:"
        ),
        "",
        "| function | calls | own s | cumulative s |",
        "|---|---|---|---|",
        "| `app/providers/embeddings.py LocalEmbedder.embed_sync` (in its worker thread, outside the "
        f"profile; timed around the awaits) | | | {p['embedding_s']} |",
        *[
            f"| `{r['function']}` | {r['calls']:,} | {r['tottime_s']} | {r['cumtime_s']} |"
            for r in p["top_cumulative"][:10]
        ],
    ]
    lines += harness.footer(report, "Raw figures and the profile")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.distill", description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=2500, help="events distilled by the worker")
    parser.add_argument("--zh-share", type=float, default=0.15, help="share of Chinese events")
    parser.add_argument("--profile-events", type=int, default=1000, help="events of the in-process profile")
    parser.add_argument("--top", type=int, default=25, help="profile rows kept in the JSON")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the worker")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--out", default="bench/results/distill.json")
    parser.add_argument("--no-docs", action="store_true", help="do not write docs/benchmarks.md")
    parser.add_argument("--docs-only", action="store_true", help="rewrite the docs section from --out")
    parser.add_argument("--quiet-cpu", type=float, default=25.0, help="CPU %% counted as a quiet machine")
    parser.add_argument("--quiet-wait", type=float, default=0.0, help="wait up to this long for it (s)")
    args = parser.parse_args(argv)
    if args.docs_only:
        harness.write_section(SECTION, docs_section(json.loads(Path(args.out).read_text())), FINDINGS)
        log(f"rewrote the '{SECTION}' section of docs/benchmarks.md from {args.out}")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sessions = conversation(args.events, args.zh_share, args.seed)
    zh_events = sum(len(t) for sid, t in sessions if sid.startswith("zh-"))
    profiled = [(f"p-{sid}", t) for sid, t in conversation(args.profile_events, args.zh_share, args.seed + 1)]
    with harness.stack(args.database_url, args.redis_url) as s:
        worker = through_worker(s, sessions, args)
        log(
            f"  {worker['events']:,} events distilled in {worker['distilled_s']} s: "
            f"{worker['events_per_s']} events/s ({worker['events_per_s_resolved']} with resolution)"
        )
        log(f"  profiling {args.profile_events:,} events in process …")
        profile = asyncio.run(profile_in_process(s, profiled, args.top))
    report = {
        "command": harness.command_line("bench.distill", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": harness.machine(),
        "target_events_per_s": TARGET_EVENTS_PER_S,
        "zh_events": zh_events,
        "out": args.out,
        "notes": [],
        "worker": worker,
        "profile": profile,
    }
    harness.write_json(args.out, report)
    print(
        f"one worker: {worker['events_per_s']} events/s to the watermark "
        f"({worker['events_per_s_resolved']} until resolved); in process under cProfile "
        f"{profile['events_per_s']} events/s, split {profile['split_s']}"
    )
    for r in profile["top_cumulative"][:10]:
        print(f"  {r['cumtime_s']:>8} s  {r['calls']:>8}  {r['function']}")
    if not args.no_docs:
        harness.write_section(SECTION, docs_section(report), FINDINGS)
        log(f"wrote {args.out} and the '{SECTION}' section of docs/benchmarks.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The run: per API configuration (`--api-workers`), `hindsight api` on the stack, a warm-up, the
single appends and the batches, each with the machine's CPU split by whose it was and PostgreSQL's
own counters, then the count check; the JSON report and the docs section
(`python -m bench.ingest`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import ingest
from bench.harness import cli, measure, services
from bench.harness.measure import CpuAccount, log
from bench.ingest.floor import run_floor
from bench.ingest.load import Client, run_phase, setup_bank, turn_texts
from bench.ingest.report import SECTION, TARGET, docs_section


def measured(phase: Callable[[], dict[str, Any]], ours: dict[str, Callable[[], list[int]]]) -> dict[str, Any]:
    """Run a phase; add the machine's CPU over it, split by whose it was."""
    import psutil

    def cpu(pids: list[int]) -> dict[int, float]:
        out: dict[int, float] = {}
        for pid in pids:
            with contextlib.suppress(psutil.Error):
                t = psutil.Process(pid).cpu_times()
                out[pid] = t.user + t.system
        return out

    before = {name: cpu(pids()) for name, pids in ours.items()}
    account = CpuAccount(lambda: [p for group in ours.values() for p in group()])
    result = phase()
    conditions = account.result()
    capacity = conditions["run_s"] * (os.cpu_count() or 1)
    split = {}
    for name, pids in ours.items():
        # processes started during the phase (a PostgreSQL backend for a new connection) count
        # from zero; those that exited during it are lost
        now = cpu(pids())
        used = sum(v - before[name].get(pid, 0.0) for pid, v in now.items())
        split[f"{name}_cpu_percent"] = round(100 * used / capacity, 1)
    return {**result, "conditions": {**conditions, **split}}


async def pg_counters(database_url: str) -> dict[str, int]:
    """PostgreSQL's own counters for this database: connections opened, commits, rollbacks (the
    pool's pre-ping is a BEGIN / ";" / ROLLBACK, so rollbacks count pings)."""
    import asyncpg

    await asyncio.sleep(1.5)  # backends flush their statistics within a second of going idle
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        row = await conn.fetchrow(
            "SELECT sessions, xact_commit, xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        )
    finally:
        await conn.close()
    return {k: int(v) for k, v in dict(row).items()}


def per_request(before: dict[str, int], after: dict[str, int], requests: int) -> dict[str, float]:
    return {
        "pg_connections_opened_per_1000_requests": round(
            1000 * (after["sessions"] - before["sessions"] - 1) / requests,
            1,  # - our own probe
        ),
        "pg_commits_per_request": round((after["xact_commit"] - before["xact_commit"]) / requests, 2),
        "pg_rollbacks_per_request": round((after["xact_rollback"] - before["xact_rollback"]) / requests, 2),
    }


async def count_check(database_url: str, bank_id: str, expected: int) -> dict[str, Any]:
    """Every appended event is stored, and each session's seqs run 1..last_seq without gaps."""
    import asyncpg

    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        events = await conn.fetchval("SELECT count(*) FROM events WHERE bank_id = $1", bank_id)
        seq_sum = await conn.fetchval(
            "SELECT coalesce(sum(last_seq), 0) FROM sessions WHERE bank_id = $1", bank_id
        )
        gaps = await conn.fetchval(
            """SELECT count(*) FROM (
                   SELECT session_id, max(seq) AS top, count(*) AS n, min(seq) AS low
                   FROM events WHERE bank_id = $1 GROUP BY session_id) s
               WHERE top <> n OR low <> 1""",
            bank_id,
        )
        sessions = await conn.fetchval("SELECT count(*) FROM sessions WHERE bank_id = $1", bank_id)
    finally:
        await conn.close()
    return {
        "expected_events": expected,
        "stored_events": int(events),
        "sum_last_seq": int(seq_sum),
        "sessions": int(sessions),
        "sessions_with_gaps": int(gaps),
        "ok": int(events) == expected == int(seq_sum) and int(gaps) == 0,
    }


def run_config(s: services.Stack, workers: int | None, args: argparse.Namespace) -> dict[str, Any]:
    admin_key = services.admin_key()
    bank_id = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    env = services.service_env(
        s.database_url,
        s.redis_url,
        admin_key,
        # the per-key rate limiter stays on the path (its Redis round trip) without throttling
        HINDSIGHT_RATE_LIMIT_PER_SECOND=str(args.rate_limit),
    )
    texts = turn_texts()
    with services.api(env, s.work / "api.log", workers, args.profile) as (base, pid):
        processes = measure.uvicorn_processes(pid)
        log(f"== API {base}: {processes} uvicorn process(es) ({'default' if workers is None else workers})")
        key = asyncio.run(setup_bank(base, admin_key, bank_id))

        ours = {
            "api": lambda: measure.process_tree(pid),
            "services": lambda: [p for q in s.pids for p in measure.process_tree(q)],
            "client": lambda: [os.getpid()],
        }

        async def phase(
            label: str, requests: int, concurrency: int, size: int, prefix: str
        ) -> dict[str, Any]:
            client = Client(base, key, concurrency)
            try:
                return await run_phase(
                    client,
                    bank_id,
                    label=label,
                    requests=requests,
                    concurrency=concurrency,
                    batch_size=size,
                    sessions=args.sessions,
                    texts=texts,
                    id_prefix=prefix,
                )
            finally:
                await client.aclose()

        asyncio.run(phase("warm", args.warmup, args.clients, 1, "w"))
        quiet = measure.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
        log(f"  {args.appends:,} single appends, {args.clients} clients …")
        counters = asyncio.run(pg_counters(s.database_url))
        single = measured(
            lambda: asyncio.run(phase("single", args.appends, args.clients, 1, "s")),
            ours,
        )
        after = asyncio.run(pg_counters(s.database_url))
        single["postgres"] = per_request(counters, after, args.appends)
        log(
            f"  single: {single['events_per_s']:,} events/s, p50 {single['latency_ms']['p50']} ms, "
            f"p99 {single['latency_ms']['p99']} ms"
        )
        log(f"  {args.batches:,} batches of {args.batch_size}, {args.batch_clients} clients …")
        batched = measured(
            lambda: asyncio.run(phase("batch", args.batches, args.batch_clients, args.batch_size, "b")),
            ours,
        )
        batched["postgres"] = per_request(after, asyncio.run(pg_counters(s.database_url)), args.batches)
        log(
            f"  batched: {batched['events_per_s']:,} events/s, p50 {batched['latency_ms']['p50']} ms, "
            f"p99 {batched['latency_ms']['p99']} ms"
        )
        rss = round(sum(measure.rss_mib(p) for p in measure.process_tree(pid)), 1)
        floor = run_floors(s, base, admin_key, args, texts, single, batched)
    expected = args.warmup + single["events"] + batched["events"]
    check = asyncio.run(count_check(s.database_url, bank_id, expected))
    log(f"  count check: {check}")
    return {
        "api_workers_flag": workers,
        "uvicorn_processes": processes,
        "bank_id": bank_id,
        "quiet": quiet,
        "single": single,
        "batched": batched,
        "count_check": check,
        "api_rss_mib": rss,
        "floor": floor,
    }


def run_floors(
    s: services.Stack,
    base: str,
    admin_key: str,
    args: argparse.Namespace,
    texts: list[tuple[str, str]],
    single: dict[str, Any],
    batched: dict[str, Any],
) -> dict[str, Any]:
    """The same phases by a minimal asyncpg script (bench.ingest.floor), in a bank of their own, and
    the app's figures as a share of them."""
    bank_id = f"bench-floor-{uuid.uuid4().hex[:8]}"
    asyncio.run(setup_bank(base, admin_key, bank_id))
    log("  the floor: the same rows by a minimal asyncpg script …")
    phases = {
        "single": (args.appends, args.clients, 1, single),
        "batched": (args.batches, args.batch_clients, args.batch_size, batched),
    }
    floor: dict[str, Any] = {}
    for name, (requests, concurrency, size, ours) in phases.items():
        result = asyncio.run(
            run_floor(
                s.database_url,
                bank_id,
                label=name,
                requests=requests,
                concurrency=concurrency,
                batch_size=size,
                texts=texts,
            )
        )
        result["app_share"] = round(ours["events_per_s"] / result["events_per_s"], 3)
        floor[name] = result
        log(f"  floor {name}: {result['events_per_s']:,} events/s; the app: {result['app_share']:.0%} of it")
    return floor


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.ingest", ingest.__doc__)
    parser.add_argument("--appends", type=int, default=20_000, help="measured single-event appends")
    parser.add_argument("--clients", type=int, default=32, help="concurrent single-event clients")
    parser.add_argument("--sessions", type=int, default=2_000, help="sessions the appends spread over")
    parser.add_argument("--warmup", type=int, default=500, help="single appends before measuring")
    parser.add_argument("--batches", type=int, default=500, help="measured batch appends")
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--batch-clients", type=int, default=4, help="concurrent batch clients")
    parser.add_argument(
        "--api-workers",
        type=int,
        action="append",
        help="uvicorn workers of `hindsight api` (default: its own default); repeat to compare",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="run the API (one process: --api-workers 1) under pyinstrument; its text report here",
    )
    parser.add_argument("--rate-limit", type=int, default=100_000, help="HINDSIGHT_RATE_LIMIT_PER_SECOND")
    args = cli.parse_program(parser, argv, "bench/results/ingest.json", (SECTION, docs_section))
    if args is None:
        return 0
    results = []
    with services.stack(args.database_url, args.redis_url) as s:
        for workers in args.api_workers or [None]:
            results.append(run_config(s, workers, args))
    report = {
        "command": cli.command_line("bench.ingest", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": measure.machine(),
        "rate_limit": args.rate_limit,
        "target": TARGET,
        "out": args.out,
        "notes": [],
        "results": results,
    }
    cli.write_json(args.out, report)
    for r in results:
        print(
            f"{r['uvicorn_processes']} uvicorn process(es): single {r['single']['events_per_s']:,} events/s "
            f"(p50 {r['single']['latency_ms']['p50']} / p99 {r['single']['latency_ms']['p99']} ms), "
            f"batched {r['batched']['events_per_s']:,} events/s "
            f"(p50 {r['batched']['latency_ms']['p50']} / p99 {r['batched']['latency_ms']['p99']} ms), "
            f"count check {'ok' if r['count_check']['ok'] else 'FAILED'}; "
            f"share of the asyncpg floor: single {r['floor']['single']['app_share']:.0%}, "
            f"batched {r['floor']['batched']['app_share']:.0%}"
        )
    cli.publish(args, SECTION, docs_section, report)
    return 0 if all(r["count_check"]["ok"] for r in results) else 1

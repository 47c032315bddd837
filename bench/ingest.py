"""Ingest throughput: appends to the event log over real HTTP, the real app, the real stack.

    python -m bench.ingest [--appends 20000] [--clients 32] [--batches 500] [--batch-size 100]
        [--batch-clients 4] [--api-workers N ...] [--database-url URL --redis-url URL]

Two phases against one `hindsight api` child process (its default number of uvicorn workers
unless `--api-workers` says otherwise; repeat the flag to compare):
- single-event appends: `--clients` concurrent clients (asyncio tasks over one keep-alive
  connection pool), each appending one turn at a time to its own rotating sessions (`--sessions`
  sessions in all), with an `external_id` as a retrying client sends;
- batches: `--batch-clients` concurrent clients appending `--batch-size` turns per request.
The key is a bank key with the `write` scope (an admin key would skip the key lookup). The
turns are LoCoMo's (../shared/data/locomo), with Chinese ones mixed in. No worker runs: the
append path writes its distillation job rows and sends them to the broker, nobody consumes them.

Reported per phase: events/s, request latency p50/p95/p99, the CPU of the machine split into
the API, PostgreSQL + Redis, this client, and other processes (the client runs on the same
machine and competes for the same cores), and afterwards a count check: every appended event is
in the database, seqs without gaps. Writes `--out` and the "Ingest" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import textwrap
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness
from bench.harness import log

SECTION = "Ingest"
FINDINGS = "### Findings"
TARGET = {"single_events_per_s": 1000.0, "single_p99_ms": 50.0, "batched_events_per_s": 10_000.0}
LOCOMO = harness.ROOT.parent / "shared" / "data" / "locomo" / "locomo_dev.json"
ZH_TURNS = (
    "我下周三要去上海出差，帮我记一下。",
    "预算不超过八千块，最好能在周五之前定下来。",
    "我对花生过敏，订餐的时候别选带坚果的。",
    "上次说的那家火锅店不错，下次还想去。",
    "我女儿今年九月上小学一年级了。",
    "合同我已经发给法务了，还在等他们确认。",
    "其实我更喜欢靠窗的座位，麻烦改一下。",
    "我们公司刚搬到杭州，通勤方便多了。",
)


def turn_texts(limit: int = 5000) -> list[tuple[str, str]]:
    """(speaker, text) pairs: LoCoMo's turns, one Chinese turn in ten."""
    texts: list[tuple[str, str]] = []
    if LOCOMO.exists():
        from app.eval.locomo import load_dataset

        for conversation in load_dataset(LOCOMO):
            texts += [(t.speaker or "user", t.text) for t in conversation.turns]
    if not texts:  # the data set is not there: plain English turns
        texts = [("Ana", f"I booked the table for {n} people at seven, see you there.") for n in range(2, 12)]
    mixed: list[tuple[str, str]] = []
    for i, item in enumerate(texts[:limit]):
        mixed.append(item)
        if i % 9 == 8:
            mixed.append(("小王", ZH_TURNS[i % len(ZH_TURNS)]))
    return mixed


class Client:
    """A lean asyncio HTTP/1.1 keep-alive client (aiohttp: about a tenth of httpx's async client's
    CPU per request here, and the client shares the machine's cores with the server)."""

    def __init__(self, base: str, key: str, connections: int) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(
            base,
            headers={"Authorization": f"Bearer {key}", "content-type": "application/json"},
            connector=aiohttp.TCPConnector(limit=connections),
            timeout=aiohttp.ClientTimeout(total=60),
        )

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        async with self._session.post(path, data=json.dumps(body).encode()) as response:
            return response.status, await response.json(content_type=None)

    async def aclose(self) -> None:
        await self._session.close()


async def run_phase(
    client: Client,
    bank_id: str,
    *,
    label: str,
    requests: int,
    concurrency: int,
    batch_size: int,
    sessions: int,
    texts: list[tuple[str, str]],
    id_prefix: str,
) -> dict[str, Any]:
    """`requests` appends of `batch_size` turns by `concurrency` callers; caller c appends to its
    own sessions c, c + concurrency, … in turn, so no two callers wait on one session's lock."""
    latencies: list[float] = []
    events = 0
    failures: dict[str, int] = {}
    next_index = 0
    per_caller_sessions = max(1, sessions // concurrency)

    async def caller(c: int) -> None:
        nonlocal next_index, events
        turn = 0
        while next_index < requests:
            i = next_index
            next_index += 1
            session = f"{label}-{c + concurrency * (turn % per_caller_sessions)}"
            turn += 1
            batch = []
            for j in range(batch_size):
                speaker, text = texts[(i * batch_size + j) % len(texts)]
                batch.append(
                    {
                        "role": "user" if j % 2 == 0 else "assistant",
                        "speaker": speaker,
                        "content": text,
                        "external_id": f"{id_prefix}{i}-{j}",
                    }
                )
            t = time.perf_counter()
            status, body = await client.post(
                f"/v1/banks/{bank_id}/sessions/{session}/events", {"events": batch}
            )
            latencies.append((time.perf_counter() - t) * 1000)
            if status != 202:
                failures[str(status)] = failures.get(str(status), 0) + 1
                log(f"  {status}: {str(body)[:200]}")
            else:
                events += int(body["appended"])

    started = time.perf_counter()
    await asyncio.gather(*(caller(c) for c in range(concurrency)))
    wall = time.perf_counter() - started
    return {
        "requests": requests,
        "concurrency": concurrency,
        "batch_size": batch_size,
        "sessions": min(sessions, concurrency * per_caller_sessions),
        "events": events,
        "failures": failures,
        "wall_s": round(wall, 2),
        "events_per_s": round(events / wall, 1),
        "requests_per_s": round(requests / wall, 1),
        "latency_ms": harness.percentiles(latencies),
    }


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
    account = harness.CpuAccount(lambda: [p for group in ours.values() for p in group()])
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


async def setup_bank(base: str, admin_key: str, bank_id: str) -> str:
    """The bank and a bank key with the `write` scope (what an agent appends with)."""
    import httpx

    async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {admin_key}"}) as c:
        (await c.post("/v1/banks", json={"bank_id": bank_id})).raise_for_status()
        response = await c.post(f"/v1/banks/{bank_id}/keys", json={"scopes": ["write"]})
        response.raise_for_status()
        return str(response.json()["key"])


def run_config(s: harness.Stack, workers: int | None, args: argparse.Namespace) -> dict[str, Any]:
    admin_key = "bench-admin-" + uuid.uuid4().hex
    bank_id = f"bench-ingest-{uuid.uuid4().hex[:8]}"
    env = harness.service_env(
        s.database_url,
        s.redis_url,
        admin_key,
        # the per-key rate limiter stays on the path (its Redis round trip) without throttling
        HINDSIGHT_RATE_LIMIT_PER_SECOND=str(args.rate_limit),
    )
    texts = turn_texts()
    with harness.api(env, s.work / "api.log", workers) as (base, pid):
        processes = harness.uvicorn_processes(pid)
        log(f"== API {base}: {processes} uvicorn process(es) ({'default' if workers is None else workers})")
        key = asyncio.run(setup_bank(base, admin_key, bank_id))

        ours = {
            "api": lambda: harness.process_tree(pid),
            "services": lambda: [p for q in s.pids for p in harness.process_tree(q)],
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
        quiet = harness.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
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
        rss = round(sum(harness.rss_mib(p) for p in harness.process_tree(pid)), 1)
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
    }


def _lat(p: dict[str, float]) -> str:
    return f"{p['p50']} / {p['p95']} / {p['p99']}"


def docs_section(report: dict[str, Any]) -> str:
    m, runs = report["machine"], report["results"]
    wrap = lambda s: textwrap.fill(s, width=110, break_on_hyphens=False)  # noqa: E731
    lines = [
        f"## {SECTION}",
        "",
        wrap(
            f"Targets (benchmark issue, {m['cores']}-core machine): single-event appends with 32 concurrent "
            f"clients ≥ {TARGET['single_events_per_s']:,.0f} events/s with p99 ≤ "
            f"{TARGET['single_p99_ms']:.0f} ms; 100-event batches ≥ "
            f"{TARGET['batched_events_per_s']:,.0f} events/s."
        ),
        "",
        "```",
        report["command"],
        "```",
        "",
        wrap(
            f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
            f"{m['python']}; embedded PostgreSQL (fsync on, synchronous_commit on) and Redis; "
            "`hindsight api` as a child process; the client (aiohttp, HTTP/1.1 keep-alive, one connection "
            "per concurrent caller) runs on the same machine and takes CPU from the server. A bank "
            "key with the `write` scope, an `external_id` on every turn, default bank config (a distillation "
            "job row every 5 undistilled turns of a session; no worker consumes them). "
            f"HINDSIGHT_RATE_LIMIT_PER_SECOND={report['rate_limit']} keeps the per-key limiter on the path "
            "without throttling."
        ),
        "",
        "| | " + " | ".join(f"{r['uvicorn_processes']} uvicorn process(es)" for r in runs) + " |",
        "|---|" + "---|" * len(runs),
    ]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        lines.append(f"| {label} | " + " | ".join(cell(r) for r in runs) + " |")

    row(
        "single appends: events/s",
        lambda r: (
            f"**{r['single']['events_per_s']:,}** ({r['single']['events']:,} in {r['single']['wall_s']} s)"
        ),
    )
    row("single appends: latency p50 / p95 / p99 (ms)", lambda r: _lat(r["single"]["latency_ms"]))
    row(
        "100-event batches: events/s",
        lambda r: (
            f"**{r['batched']['events_per_s']:,}** ({r['batched']['requests']:,} requests, "
            f"{r['batched']['concurrency']} clients)"
        ),
    )
    row("100-event batches: latency p50 / p95 / p99 (ms)", lambda r: _lat(r["batched"]["latency_ms"]))
    for phase in ("single", "batched"):
        row(
            f"CPU during {phase} (% of the machine): API / PostgreSQL+Redis / client / others",
            lambda r, p=phase: " / ".join(  # type: ignore[misc]
                str(r[p]["conditions"].get(k, "-"))
                for k in (
                    "api_cpu_percent",
                    "services_cpu_percent",
                    "client_cpu_percent",
                    "other_cpu_percent",
                )
            ),
        )
    row(
        "PostgreSQL per single append: commits / rollbacks (pre-ping) / connections opened per 1000",
        lambda r: " / ".join(
            str(r["single"].get("postgres", {}).get(k, "-"))
            for k in (
                "pg_commits_per_request",
                "pg_rollbacks_per_request",
                "pg_connections_opened_per_1000_requests",
            )
        ),
    )
    row(
        "count check (stored / expected events, sessions with seq gaps)",
        lambda r: (
            f"{r['count_check']['stored_events']:,} / {r['count_check']['expected_events']:,}, "
            f"{r['count_check']['sessions_with_gaps']} ({'ok' if r['count_check']['ok'] else 'FAILED'})"
        ),
    )
    row("API RSS after the run, all its processes (MiB)", lambda r: str(r["api_rss_mib"]))
    default = next((r for r in runs if r["api_workers_flag"] is None), runs[0])
    s, b = default["single"], default["batched"]
    met_single = (
        s["events_per_s"] >= TARGET["single_events_per_s"]
        and s["latency_ms"]["p99"] <= TARGET["single_p99_ms"]
    )
    met_batch = b["events_per_s"] >= TARGET["batched_events_per_s"]
    lines += [
        "",
        wrap(
            f"With the API's default ({default['uvicorn_processes']} uvicorn process): single appends "
            f"**target {'met' if met_single else 'not met'}** ({s['events_per_s']:,} events/s, p99 "
            f"{s['latency_ms']['p99']} ms); batches **target {'met' if met_batch else 'not met'}** "
            f"({b['events_per_s']:,} events/s)."
        ),
    ]
    lines += harness.footer(report, "Raw figures")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.split("\n")[0])
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
    parser.add_argument("--rate-limit", type=int, default=100_000, help="HINDSIGHT_RATE_LIMIT_PER_SECOND")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--redis-url", default=None)
    parser.add_argument("--out", default="bench/results/ingest.json")
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
    results = []
    with harness.stack(args.database_url, args.redis_url) as s:
        for workers in args.api_workers or [None]:
            results.append(run_config(s, workers, args))
    report = {
        "command": harness.command_line("bench.ingest", argv),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": harness.machine(),
        "rate_limit": args.rate_limit,
        "target": TARGET,
        "out": args.out,
        "notes": [],
        "results": results,
    }
    harness.write_json(args.out, report)
    for r in results:
        print(
            f"{r['uvicorn_processes']} uvicorn process(es): single {r['single']['events_per_s']:,} events/s "
            f"(p50 {r['single']['latency_ms']['p50']} / p99 {r['single']['latency_ms']['p99']} ms), "
            f"batched {r['batched']['events_per_s']:,} events/s "
            f"(p50 {r['batched']['latency_ms']['p50']} / p99 {r['batched']['latency_ms']['p99']} ms), "
            f"count check {'ok' if r['count_check']['ok'] else 'FAILED'}"
        )
    if not args.no_docs:
        harness.write_section(SECTION, docs_section(report), FINDINGS)
        log(f"wrote {args.out} and the '{SECTION}' section of docs/benchmarks.md")
    return 0 if all(r["count_check"]["ok"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

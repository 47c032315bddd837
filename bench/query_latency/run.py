"""The run: per size, generate, embed (cached), load, then time the API over HTTP and the channel
SQL alone; the JSON report and the docs section (`python -m bench.query_latency`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from bench import query_latency
from bench.harness import cli, services
from bench.harness.measure import log, machine, rss_mib, uvicorn_processes, wait_for_quiet
from bench.query_latency.channel_sql import embed_query_ms, explain_cases, measure_sql, prepare
from bench.query_latency.http_timer import QueryRun, measure_http
from bench.query_latency.loader import active_units, load_bank, server_facts
from bench.query_latency.queries import BenchQuery, make_queries
from bench.query_latency.report import SECTION, TARGET, docs_section, print_table
from bench.query_latency.rerank_overhead import fake_reranker, measure_overhead, summary
from bench.query_latency.under_load import distilling, replica_api
from bench.query_latency.units import Generator
from bench.query_latency.vectors import encode, load_model, vectors_for


@dataclass
class Stack:
    """PostgreSQL (one embedded cluster, a database per size, or `--database-url`) and Redis."""

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
    admin_key = services.admin_key()
    # The limiter stays on the path without throttling the load's appends.
    env = services.service_env(url, stack.redis_url, admin_key, HINDSIGHT_RATE_LIMIT_PER_SECOND="100000")
    query_run = QueryRun(admin_key, bank_id, queries, args.queries, gen.anchor, args.warmup)
    cases: dict[str, Any] = {}
    rerank: dict[str, Any] | None = None
    with contextlib.ExitStack() as running:
        base, pid = running.enter_context(services.api(env, work / f"api-{units_n}.log"))
        log(f"  API up at {base} (pid {pid}); {args.queries} queries over HTTP …")

        def before() -> dict[str, Any]:
            quiet = wait_for_quiet(args.quiet_cpu, args.quiet_wait)
            return {**quiet, "load_average_1m": round(os.getloadavg()[0], 2)}

        def timed(at: str, extra: list[int], wait: Callable[[], dict[str, Any]] = before) -> dict[str, Any]:
            def ours() -> list[int]:
                return [pid, os.getpid(), *stack.own_pids(), *extra]

            return measure_http(at, query_run, wait, ours)

        http = timed(base, [])
        rss = rss_mib(pid)
        processes = uvicorn_processes(pid)
        log(f"  HTTP p50 {http['client_wall_ms']['p50']} ms, p95 {http['client_wall_ms']['p95']} ms")
        apis: dict[str, tuple[str, list[int]]] = {"primary": (base, [])}
        if args.replica:
            replica_base, replica_pids = running.enter_context(
                replica_api(stack.postgres, work, make_url(url).database or "", env)
            )
            apis["replica"] = (replica_base, replica_pids)
            cases["replica, idle"] = timed(replica_base, replica_pids)
        if args.while_distilling:
            load = running.enter_context(distilling(env, base, admin_key, url, work, args.load_events))
            for name, (at, extra) in apis.items():
                case: dict[str, Any] = {}
                with load.window(case):
                    case |= timed(at, [*extra, load.worker_pid], lambda: {"under_load": True})
                cases[f"{name}, while distilling"] = case
        for name, case in cases.items():
            w = case["client_wall_ms"]
            log(f"  {name}: HTTP p50 {w['p50']} ms, p95 {w['p95']} ms {case.get('load', '')}")
        if args.rerank_overhead:
            delay = args.rerank_delay_ms
            rerank_url, _ = running.enter_context(fake_reranker(delay, work / "fake-rerank.log"))
            rerank_env = {**env, "HINDSIGHT_RERANK_URL": rerank_url, "HINDSIGHT_RERANK_KIND": "tei"}
            at, _ = running.enter_context(services.api(rerank_env, work / f"api-rerank-{units_n}.log"))
            rerank = measure_overhead(at, query_run, before, delay)
            log(f"  {summary(rerank)}")

    model = get_model()
    distinct: dict[str, BenchQuery] = {}
    for q in queries:
        distinct.setdefault(q.text + str(q.tags), q)
    sample = list(distinct.values())[: args.channel_queries]
    qvecs = encode(model, [q.text for q in sample])
    prepared = [
        prepare(q, [float(x) for x in v], bank_id, gen.anchor) for q, v in zip(sample, qvecs, strict=True)
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
        "cases": cases,
        "rerank_overhead": rerank,
        "api_rss_mib": rss,
        "api_processes": processes,
        "query_embedding_ms": embed,
        "sql": sql,
    }


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.query_latency", query_latency.__doc__)
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
    parser.add_argument(
        "--reuse-bank",
        action="store_true",
        help="with --database-url or --pgdata: keep a bench-<N> bank already loaded",
    )
    parser.add_argument(
        "--while-distilling",
        action="store_true",
        help="again while one worker distils a backlog of conversation turns at full speed",
    )
    parser.add_argument(
        "--load-events", type=int, default=3000, help="the backlog's turns for --while-distilling"
    )
    parser.add_argument(
        "--replica",
        action="store_true",
        help="again through a second API reading from a streaming replica (embedded PostgreSQL only)",
    )
    parser.add_argument(
        "--rerank-overhead",
        action="store_true",
        help="again through a second API with a rerank provider (a local fake answering in "
        "--rerank-delay-ms), alternating the stage off and on: its overhead",
    )
    parser.add_argument("--rerank-delay-ms", type=float, default=5.0, help="the fake reranker's answer time")
    parser.add_argument("--prepare-only", action="store_true", help="generate and embed (cache), then stop")
    out, database_help = "bench/results/query_latency.json", "use this PostgreSQL (banks bench-<N>)"
    args = cli.parse_program(parser, argv, out, (SECTION, docs_section), database_help)
    if args is None:
        return 0
    if args.replica and args.database_url:
        parser.error("--replica makes a replica of the embedded PostgreSQL; leave out --database-url")
    sizes = sorted(set(args.units or [100_000]))
    command = cli.command_line("bench.query_latency", argv)
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
    with contextlib.ExitStack() as stack_services:
        stack_services.callback(shutil.rmtree, work, True)
        from app.embedded import start_postgres, start_redis

        stack = Stack(args.database_url, args.redis_url or "", rebuild_external=args.rebuild_indexes)
        if not args.database_url:
            pgdata = Path(args.pgdata) if args.pgdata else work / "pgdata"
            log(f"starting embedded PostgreSQL in {pgdata} and Redis in {work}")
            stack.postgres = start_postgres(pgdata)
            stack.keep_databases = bool(args.pgdata and args.reuse_bank)
            stack_services.callback(stack.postgres.stop)
        if not args.redis_url:
            redis = start_redis(work / "redis")
            stack_services.callback(redis.stop)
            stack.redis_url = redis.url
            stack.redis_pid = redis.process.pid
        for n in sizes:
            results.append(run_size(stack, n, args, gen, model_holder, work))
        postgres = results[0]["postgres"] if results else {}
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
        "notes": _notes(args, results),
        "results": results,
    }
    cli.write_json(args.out, report)
    print_table(results)
    cli.publish(args, SECTION, docs_section, report)
    return 0


def _notes(args: argparse.Namespace, results: list[dict[str, Any]]) -> list[str]:
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
    return notes

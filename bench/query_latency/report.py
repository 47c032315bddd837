"""What a run reports: the table it prints and its "Query latency at scale" section of
docs/benchmark-runs.md, both from the JSON report (so `--docs-only` rewrites the section unchanged)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from bench.harness import docs
from bench.query_latency.channel_sql import CHANNEL_ORDER

SECTION = "Query latency at scale"
TARGET = {"units": 100_000, "p50_ms": 30.0, "p95_ms": 60.0}


def print_table(results: list[dict[str, Any]]) -> None:
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("units", lambda r: f"{r['units']:,}"),
        ("HTTP p50 / p95 / p99 ms", lambda r: docs.p50_p95_p99(r["http"]["client_wall_ms"])),
        ("HTTP mean ms", lambda r: f"{r['http']['client_wall_ms']['mean']}"),
        ("server took_ms p50 / p95", lambda r: docs.p50_p95(r["http"]["server_took_ms"])),
        ("query embedding p50 ms", lambda r: f"{r['query_embedding_ms']['p50']}"),
        ("SQL all channels p50 / p95", lambda r: docs.p50_p95(r["sql"]["per_channel_ms"].get("all"))),
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
    return docs.p50_p95(r["sql"]["per_channel_ms"].get(c))


def docs_section(report: dict[str, Any]) -> str:
    m, pg, results = report["machine"], report["postgres"], report["results"]
    lines = docs.section_head(
        SECTION,
        f"Target (retrieval issue): one bank of {TARGET['units']:,} active units, local embedder, end to "
        f"end over HTTP on a {m['cores']}-core machine: p50 ≤ {TARGET['p50_ms']:.0f} ms, p95 ≤ "
        f"{TARGET['p95_ms']:.0f} ms.",
        report["command"],
        f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, "
        f"Python {m['python']}, embedder on ONNX Runtime {m.get('onnxruntime', '?')}, "
        f"PostgreSQL {pg['server_version']} + pgvector {pg['pgvector']} (embedded; shared_buffers "
        f"{pg['shared_buffers']}, work_mem {pg['work_mem']}, jit {pg['jit']}, JIT available: "
        f"{pg['jit_available']}), `hindsight api` ({_processes(results)}), {report['queries']} sequential "
        f"queries per size after {report['warmup']} warm-up ones, httpx keep-alive, `top_k` 10, default "
        "fusion (RRF, five channels); the data is synthetic (EN ~90%, ZH ~10%; see "
        "`bench/query_latency/`), vectors from the real model.",
    )
    table = docs.RunTable(results, lambda r: f"{r['units']:,} units")
    table.each("HTTP p50 / p95 / p99 (ms)", lambda r: docs.p50_p95_p99(r["http"]["client_wall_ms"]))
    table.each("HTTP mean (ms)", lambda r: str(r["http"]["client_wall_ms"]["mean"]))
    table.each("server `took_ms` p50 / p95", lambda r: docs.p50_p95(r["http"]["server_took_ms"]))
    table.each(
        "HTTP p50 by kind of query (ms)",
        lambda r: ", ".join(f"{k} {v['p50']}" for k, v in r["http"]["by_category_wall_ms"].items()),
    )
    table.each("query embedding alone p50", lambda r: str(r["query_embedding_ms"]["p50"]))
    table.each(
        "channel SQL, all five, p50 / p95", lambda r: docs.p50_p95(r["sql"]["per_channel_ms"].get("all"))
    )
    for c in CHANNEL_ORDER:
        table.each(f"&nbsp;&nbsp;{c} alone p50 / p95", functools.partial(_channel_pp, c=c))
    table.each("API RSS after the run (MiB)", lambda r: str(r["api_rss_mib"]))
    table.each(
        "CPU of the machine used by other processes during the run",
        lambda r: f"{r['http']['conditions']['other_cpu_percent']} %",
    )
    lines += table.lines
    lines += [
        "",
        "Plans (EXPLAIN ANALYZE, BUFFERS; execution time of the statement with that channel only):",
        "",
    ]
    plans = docs.Table("case", [f"{r['units']:,}" for r in results])
    for case in dict.fromkeys(p["case"] for r in results for p in r["sql"]["plans"]):
        plans.row(case, *(_plan_cell(r, case) for r in results))
    lines += plans.lines
    lines += _cases(results)
    lines += ["", docs.wrap(_verdict(results))]
    lines += docs.footer(report, "Raw figures and the full plans")
    return "\n".join(lines)


def _cases(results: list[dict[str, Any]]) -> list[str]:
    """The same queries again: through an API reading from a streaming replica, and while one worker
    distils a backlog at full speed (`--replica`, `--while-distilling`)."""
    runs = [r for r in results if r.get("cases")]
    if not runs:
        return []
    lines = [
        "",
        docs.wrap(
            "The same queries through a second API reading from a streaming replica (`--replica`: "
            "`pg_basebackup` of the primary, hot standby, `HINDSIGHT_READ_DATABASE_URL`), and while one "
            "`hindsight worker` (queues distill,resolve, one process) distils a backlog of conversation "
            "turns appended to another bank of the same database (`--while-distilling`); the CPU column is "
            "the whole machine's (other processes' share in brackets):"
        ),
        "",
    ]
    columns = ["units", "HTTP p50 / p95 / p99 (ms)", "server `took_ms` p50 / p95", "worker meanwhile", "CPU"]
    table = docs.Table("case", columns)
    for r in runs:
        idle = r["http"]
        table.row(
            "primary, idle",
            f"{r['units']:,}",
            docs.p50_p95_p99(idle["client_wall_ms"]),
            docs.p50_p95(idle["server_took_ms"]),
            "—",
            _cpu(idle["conditions"]),
        )
        for name, case in r["cases"].items():
            load = case.get("load")
            worker = "—"
            if load:
                worker = (
                    f"{load['events_per_s']} events/s, {load['worker_cpu_percent_of_a_core']} % of a "
                    f"core{'' if load['busy_throughout'] else ' (backlog ran out)'}"
                )
            table.row(
                name,
                f"{r['units']:,}",
                docs.p50_p95_p99(case["client_wall_ms"]),
                docs.p50_p95(case["server_took_ms"]),
                worker,
                _cpu(case["conditions"]),
            )
    return lines + table.lines


def _plan_cell(run: dict[str, Any], case: str) -> str:
    p = next((x for x in run["sql"]["plans"] if x["case"] == case), None)
    if p is None:  # a keyword case whose every word is common in that bank: no statement
        return "— (every word common: no keyword channel)"
    used = [n for n, hit in (("HNSW", p["uses_hnsw"]), ("GIN search", p["uses_search_gin"])) if hit]
    seq = [f"seq scan {', '.join(p['seq_scans'])}"] if p["seq_scans"] else []
    return f"{p['execution_ms']} ms" + "".join(f"; {x}" for x in used + seq)


def _verdict(results: list[dict[str, Any]]) -> str:
    """The target met or not at its size, and where the time goes when it is not."""
    target = next((r for r in results if r["units"] == TARGET["units"]), None)
    if target is None:
        return f"The target size ({TARGET['units']:,}) was not part of this run."
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
    return text


def _processes(results: list[dict[str, Any]]) -> str:
    counts = {r.get("api_processes") for r in results}
    if len(counts) == 1 and None not in counts:
        n = counts.pop()
        return "one uvicorn process" if n == 1 else f"{n} uvicorn processes"
    return "its default: one uvicorn process per core"


def _cpu(conditions: dict[str, Any]) -> str:
    return f"{conditions['machine_cpu_percent']} % ({conditions['other_cpu_percent']} %)"

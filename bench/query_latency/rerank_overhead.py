"""The rerank stage's overhead (`--rerank-overhead`): a second `hindsight api` whose HINDSIGHT_RERANK_URL is
a local fake rerank server (tests/fake_rerank.py, TEI's `/rerank`, a word-overlap toy, no model) answering
after `--rerank-delay-ms` (5 ms), queried with the same questions alternately with the stage off
(`rerank: false`) and on (the service's defaults: top 30, 150 ms budget). Alternating keeps both arms under
the same machine load. Reported per arm and as the difference of their p50 and p95, with what became of
the stage (`applied`, or skipped and why) for the arm that ran it: the cost of the stage beyond the
reranker's own answer time (the fake's delay), that is, the text of the top 30 read, the HTTP round trip
and the reordering."""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.harness.measure import percentiles
from bench.harness.services import ROOT
from bench.query_latency.http_timer import QueryRun, query_client


@contextlib.contextmanager
def fake_reranker(delay_ms: float, log_path: Path) -> Iterator[tuple[str, int]]:
    """`python -m tests.fake_rerank` on a free loopback port; yields (its base URL, pid)."""
    from app.embedded import free_port, stop_process

    port = free_port()
    with open(log_path, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fake_rerank", "--port", str(port), "--delay-ms", str(delay_ms)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the fake rerank server exited ({proc.returncode}); see {log_path}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline:
                raise TimeoutError("the fake rerank server did not listen within 30 s")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}", proc.pid
    finally:
        stop_process(proc, signal.SIGTERM, timeout=10)


def measure_overhead(
    base: str, run: QueryRun, before: Callable[[], dict[str, Any]], delay_ms: float
) -> dict[str, Any]:
    """`n` queries with the stage off and `n` with it on, alternately, after `warmup` of each."""
    queries, anchor = run.queries, run.anchor
    wall: dict[bool, list[float]] = {False: [], True: []}
    took: dict[bool, list[float]] = {False: [], True: []}
    outcomes: Counter[str] = Counter()
    with query_client(base, run) as post:
        for k in range(run.warmup):
            for on in (False, True):
                post({**queries[k % len(queries)].body(anchor), "rerank": on})
        conditions = before()
        for k in range(2 * run.n):
            on = k % 2 == 1
            ms, answer = post({**queries[(k // 2) % len(queries)].body(anchor), "rerank": on})
            wall[on].append(ms)
            took[on].append(float(answer["took_ms"]))
            if on:
                outcomes[answer["rerank"]] += 1
    off_wall, on_wall = percentiles(wall[False]), percentiles(wall[True])
    off_took, on_took = percentiles(took[False]), percentiles(took[True])
    return {
        "conditions": conditions,
        "delay_ms": delay_ms,
        "queries_per_arm": run.n,
        "off": {"client_wall_ms": off_wall, "server_took_ms": off_took},
        "on": {"client_wall_ms": on_wall, "server_took_ms": on_took, "outcomes": dict(outcomes)},
        "overhead_ms": {
            "wall_p50": round(on_wall["p50"] - off_wall["p50"], 2),
            "wall_p95": round(on_wall["p95"] - off_wall["p95"], 2),
            "took_p50": round(on_took["p50"] - off_took["p50"], 2),
            "took_p95": round(on_took["p95"] - off_took["p95"], 2),
        },
    }


def summary(result: dict[str, Any]) -> str:
    """One line: the overhead and what became of the stage."""
    o, on = result["overhead_ms"], result["on"]
    stages = ", ".join(f"{k} {v}" for k, v in sorted(on["outcomes"].items()))
    return (
        f"rerank (fake server answering in {result['delay_ms']:g} ms): HTTP p50 +{o['wall_p50']} ms, "
        f"p95 +{o['wall_p95']} ms; server took_ms p50 +{o['took_p50']} ms "
        f"(off p50 {result['off']['client_wall_ms']['p50']} ms, on {on['client_wall_ms']['p50']} ms; "
        f"{stages})"
    )

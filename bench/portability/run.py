"""The run: per size, seed a bank, export it over HTTP to a file, import the file under a new id, each
timed with the API's RSS sampled; the JSON report and the docs section (`python -m bench.portability`)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import portability
from bench.harness import cli, docs, measure, services
from bench.harness.measure import log
from bench.portability.seed import count_units, seed_bank

SECTION = "Bank export and import"
WARM_UP_UNITS = 1000
CHUNK = 256 * 1024


class RssSampler:
    """The peak RSS of a process while a block runs, sampled every `interval` s in a thread."""

    def __init__(self, pid: int, interval: float = 0.05) -> None:
        self.pid, self.interval = pid, interval
        self.before = self.peak = measure.rss_mib(pid)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, measure.rss_mib(self.pid))

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, measure.rss_mib(self.pid))

    def result(self) -> dict[str, float]:
        return {
            "rss_before_mib": self.before,
            "rss_peak_mib": self.peak,
            "rss_growth_mib": round(self.peak - self.before, 1),
        }


def timed(pid: int, work: Callable[[], int]) -> dict[str, Any]:
    with RssSampler(pid) as rss:
        start = time.perf_counter()
        size = work()
        wall = time.perf_counter() - start
    return {"wall_s": round(wall, 2), "bytes": size, **rss.result()}


def export_to(base: str, key: str, bank_id: str, path: Path) -> int:
    import httpx

    size = 0
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.stream("GET", f"{base}/v1/banks/{bank_id}/export", headers=headers, timeout=None) as response:
        response.raise_for_status()
        with open(path, "wb") as out:
            for chunk in response.iter_bytes(CHUNK):
                out.write(chunk)
                size += len(chunk)
    return size


def import_from(base: str, key: str, bank_id: str, path: Path) -> int:
    import httpx

    def chunks() -> Iterator[bytes]:
        with open(path, "rb") as source:
            while chunk := source.read(CHUNK):
                yield chunk

    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/x-ndjson"}
    response = httpx.post(
        f"{base}/v1/banks/{bank_id}/import", content=chunks(), headers=headers, timeout=None
    )
    if response.status_code != 201:
        raise RuntimeError(f"import failed: {response.status_code} {response.text[:500]}")
    return path.stat().st_size


def round_trip(s: services.Stack, base: str, pid: int, key: str, units: int) -> dict[str, Any]:
    bank, copy = f"bench-export-{uuid.uuid4().hex[:8]}", f"bench-import-{uuid.uuid4().hex[:8]}"
    seeded = asyncio.run(seed_bank(s.database_url, bank, units))
    path = s.work / f"{bank}.ndjson"
    exported = timed(pid, lambda: export_to(base, key, bank, path))
    lines = sum(1 for _ in open(path, "rb"))
    imported = timed(pid, lambda: import_from(base, key, copy, path))
    check = asyncio.run(count_units(s.database_url, copy))
    for phase in (exported, imported):
        phase["lines_per_s"] = round(lines / phase["wall_s"])
        phase["mib_per_s"] = round(phase["bytes"] / 2**20 / phase["wall_s"], 1)
    log(f"  {units:,} units, {lines:,} lines: export {exported['wall_s']} s, import {imported['wall_s']} s")
    return {"seeded": seeded, "lines": lines, "export": exported, "import": imported, "imported_units": check}


def docs_section(report: dict[str, Any]) -> str:
    m, runs = report["machine"], report["results"]
    lines = docs.section_head(
        SECTION,
        "Target (issue 20): an export of a 50,000-unit bank streams with flat memory: the API's RSS "
        "growth bounded and not growing with the bank's size.",
        report["command"],
        f"Run {report['date']} on {m['cores']} cores ({m['cpu']}), {m['memory_gib']} GiB, Python "
        f"{m['python']}; embedded PostgreSQL and Redis; one `hindsight api` process; the client (httpx, "
        "streaming both ways through a file) on the same machine. The machine was shared with other "
        f"work (CPU {report['conditions'].get('machine_cpu_percent', '-')} % busy over the run, ours "
        f"{report['conditions'].get('our_cpu_percent', '-')} %): rates are indicative, memory is not "
        f"affected. Synthetic banks (see `bench/portability`); a {WARM_UP_UNITS:,}-unit bank went "
        "through first. RSS growth = peak during the request minus RSS just before.",
    )
    table = docs.RunTable(runs, lambda r: f"{r['seeded']['units']:,} units")
    table.each(
        "lines (bank, sessions, events, units, entities, links, relations, history, end)",
        lambda r: f"{r['lines']:,}",
    )
    table.each("export size (MiB)", lambda r: f"{r['export']['bytes'] / 2**20:.1f}")
    table.each(
        "export: lines/s (MiB/s)",
        lambda r: f"**{r['export']['lines_per_s']:,}** ({r['export']['mib_per_s']})",
    )
    table.each(
        "export: API RSS growth (MiB)",
        lambda r: f"**{r['export']['rss_growth_mib']}** (from {r['export']['rss_before_mib']})",
    )
    table.each(
        "import: lines/s (MiB/s)",
        lambda r: f"**{r['import']['lines_per_s']:,}** ({r['import']['mib_per_s']})",
    )
    table.each(
        "import: API RSS growth (MiB)",
        lambda r: f"**{r['import']['rss_growth_mib']}** (from {r['import']['rss_before_mib']})",
    )
    table.each("units in the imported bank", lambda r: f"{r['imported_units']:,}")
    lines += table.lines
    lines += docs.footer(report, "Raw figures")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = cli.parser("bench.portability", portability.__doc__)
    parser.add_argument("--units", default="5000,50000", help="bank sizes, comma-separated")
    args = cli.parse(parser, argv, "bench/results/portability.json")
    if args.docs_only:
        return cli.rewrite_docs(SECTION, docs_section, args.out)
    if args.quiet_wait:
        measure.wait_for_quiet(args.quiet_cpu, args.quiet_wait)
    sizes = [int(n) for n in args.units.split(",")]
    key = "bench-admin-" + uuid.uuid4().hex
    with services.stack(args.database_url, args.redis_url) as s:
        env = services.service_env(s.database_url, s.redis_url, key)
        with services.api(env, s.work / "api.log") as (base, pid):
            account = measure.CpuAccount(lambda: [pid, *s.pids])
            log(f"warm-up: {WARM_UP_UNITS:,} units")
            round_trip(s, base, pid, key, WARM_UP_UNITS)
            results = [round_trip(s, base, pid, key, n) for n in sizes]
            conditions = account.result()
    report = {
        "command": cli.command_line("bench.portability", argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "machine": measure.machine(),
        "conditions": conditions,
        "results": results,
        "out": args.out,
        "notes": [
            "No worker runs: each import's `reembed` job stays queued, so the import figures are the "
            "request alone (validation, id remapping, inserts, one commit).",
        ],
    }
    cli.write_json(args.out, report)
    cli.publish(args, SECTION, docs_section, report)
    return 0

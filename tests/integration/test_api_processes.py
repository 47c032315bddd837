"""`hindsight api` runs several uvicorn processes, and `/metrics` counts every one of them (prometheus_client
multiprocess mode), whichever process answers the scrape."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from app.cli import api_workers
from app.embedded import free_port, stop_process
from tests.conftest import ROOT, Stack, wait_for

PROCESSES = 2


class Api:
    def __init__(self, url: str, metrics_dir: Path) -> None:
        self.url, self.metrics_dir = url, metrics_dir

    def healthz_served_by(self) -> dict[str, float]:
        """GET /healthz requests counted per process, from each process's own `counter_<pid>.db`."""
        served: dict[str, float] = {}
        for path in self.metrics_dir.glob("counter_*.db"):
            pid = path.stem.removeprefix("counter_")
            families = MultiProcessCollector.merge([str(path)])  # type: ignore[no-untyped-call]
            served[pid] = sum(
                s.value
                for family in families
                for s in family.samples
                if s.name == "hindsight_http_requests_total" and s.labels.get("route") == "/healthz"
            )
        return served


@pytest.fixture(scope="module")
def api(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    work = tmp_path_factory.mktemp("api")
    port = free_port()
    # No --workers: the setting decides (its default is the machine's cores, see the unit test below).
    env = stack.env(HINDSIGHT_API_WORKERS=str(PROCESSES), PROMETHEUS_MULTIPROC_DIR=str(work / "metrics"))
    with open(work / "api.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "api", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield Api(f"http://127.0.0.1:{port}", work / "metrics")
    finally:
        stop_process(proc, signal.SIGTERM, timeout=30)
    assert proc.returncode == 0, (work / "api.log").read_text()[-3000:]


def test_the_default_is_one_process_per_core(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    from app.config import get_settings

    monkeypatch.delenv("HINDSIGHT_API_WORKERS", raising=False)
    get_settings.cache_clear()
    try:
        assert api_workers(None) == len(os.sched_getaffinity(0))
        assert api_workers(3) == 3
    finally:
        get_settings.cache_clear()


def healthz_requests(metrics: str) -> tuple[float, float]:
    """(requests counted for GET /healthz, observations of its latency histogram)."""
    counted = observed = 0.0
    for family in text_string_to_metric_families(metrics):
        for sample in family.samples:
            if sample.labels.get("route") != "/healthz":
                continue
            if sample.name == "hindsight_http_requests_total":
                counted += sample.value
            elif sample.name == "hindsight_http_request_duration_seconds_count":
                observed += sample.value
    return counted, observed


async def test_metrics_sum_the_counts_of_every_api_process(api: Api) -> None:
    # Every request on a connection of its own, many at once, so the processes share them.
    # A long timeout: a request that reaches the socket before the processes are up waits, not fails.
    limits = httpx.Limits(max_keepalive_connections=0)
    async with httpx.AsyncClient(base_url=api.url, limits=limits, timeout=60) as client:

        async def up() -> bool:
            try:
                return (await client.get("/healthz")).status_code == 200
            except httpx.TransportError:
                return False

        await wait_for(up, within=90, interval=0.2)
        sent = 1

        async def both_served() -> bool:
            nonlocal sent
            answers = await asyncio.gather(*(client.get("/healthz") for _ in range(20)))
            assert all(a.status_code == 200 for a in answers)
            sent += len(answers)
            served = api.healthz_served_by()
            return len(served) == PROCESSES and all(served.values())

        await wait_for(both_served, within=60, interval=0)
        # Whichever process answers a scrape, it reports every process's requests, summed.
        scrapes = [(await client.get("/metrics")).text for _ in range(8)]
    assert {healthz_requests(text) for text in scrapes} == {(float(sent), float(sent))}

"""Prometheus metrics (served at GET /metrics). With several API processes (`hindsight api --workers
N`), prometheus_client's multiprocess mode: each process writes its values to files under
`PROMETHEUS_MULTIPROC_DIR`, and `/metrics`, whichever process answers, sums them all."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, generate_latest, multiprocess

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def use_multiprocess_dir() -> Path:
    """Before the API's worker processes start: the directory they share for metrics
    (`PROMETHEUS_MULTIPROC_DIR` if set, else a new temporary one), emptied of an earlier run's files
    (they would be summed in), and exported to the children."""
    configured = os.environ.get(MULTIPROC_ENV)
    path = Path(configured) if configured else Path(tempfile.mkdtemp(prefix="hindsight-metrics-"))
    path.mkdir(parents=True, exist_ok=True)
    for stale in path.glob("*.db"):
        stale.unlink()
    os.environ[MULTIPROC_ENV] = str(path)
    return path


def exposition() -> bytes:
    """The text `/metrics` serves: this process's metrics, or every API process's, summed."""
    if not os.environ.get(MULTIPROC_ENV):
        return generate_latest(REGISTRY)
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return generate_latest(registry)


HTTP_REQUESTS = Counter("hindsight_http_requests_total", "HTTP requests", ["method", "route", "status"])
HTTP_LATENCY = Histogram(
    "hindsight_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
EVENTS_APPENDED = Counter("hindsight_events_appended_total", "Raw events appended")
EVENTS_DUPLICATE = Counter("hindsight_events_duplicate_total", "Appends skipped as repeated external_id")
WORKING_MEMORY_FAILURES = Counter(
    "hindsight_working_memory_failures_total",
    "Redis working-memory writes that failed (append still succeeded)",
)
TASK_SEND_FAILURES = Counter(
    "hindsight_task_send_failures_total", "Task messages not sent (the sweep re-sends them)"
)
JOBS_FINISHED = Counter("hindsight_jobs_finished_total", "Jobs finished", ["kind", "status"])
RATE_LIMITED = Counter("hindsight_rate_limited_total", "Requests refused with 429 by the per-key rate limit")
RATE_LIMIT_ERRORS = Counter(
    "hindsight_rate_limit_errors_total",
    "Rate-limit checks skipped because Redis failed (the requests were let through)",
)
RERANK_OUTCOMES = Counter(
    "hindsight_rerank_total",
    "Queries by what became of the rerank stage (applied, skipped and why)",
    ["outcome"],
)

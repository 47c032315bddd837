"""Prometheus metrics, process-wide (served at GET /metrics)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

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

"""No Docker engine runs here, so the compose file and Dockerfile are checked statically."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import yaml

from app.cli import build_parser
from app.config import Settings
from app.jobs.queue import QUEUES, WORKER_POOLS

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_compose_has_every_service_with_healthchecks() -> None:
    services = _compose()["services"]
    workers = {f"worker-{pool.name}" for pool in WORKER_POOLS}
    assert set(services) == {"postgres", "redis", "migrate", "api", "beat"} | workers
    assert services["postgres"]["image"].startswith("pgvector/pgvector")
    assert "pgdata:/var/lib/postgresql/data" in services["postgres"]["volumes"]
    assert services["redis"]["image"] == "redis:7"
    assert "allkeys-lru" in services["redis"]["command"]
    assert "--maxmemory" in services["redis"]["command"]
    for name in ("postgres", "redis", "api", *workers):
        assert services[name]["healthcheck"]["test"], name
    for name in ("api", "beat", *workers):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully"
        assert deps["postgres"]["condition"] == "service_healthy"
    assert services["migrate"]["command"] == ["hindsight", "migrate"]


def test_every_env_var_compose_sets_is_a_real_setting() -> None:
    fields = {f"HINDSIGHT_{name.upper()}" for name in Settings.model_fields}
    for name, service in _compose()["services"].items():
        env = service.get("environment") or {}
        for var in env:
            if var.startswith("HINDSIGHT_"):
                assert var in fields, f"{name} sets unknown {var}"
    assert _compose()["services"]["api"]["environment"]["HINDSIGHT_ENV"] == "production"


def test_dockerfile_is_multi_stage_non_root_without_torch() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert len(re.findall(r"^FROM ", text, re.M)) >= 2
    assert re.search(r"^USER hindsight", text, re.M)
    installs = " ".join(re.findall(r"pip install [^\n]*", text))
    assert "torch" not in installs
    assert "[" not in installs  # `pip install .`: the runtime dependencies, no extra
    assert "assert not heavy" in text  # the build fails if anything pulled torch in
    # The local model's graphs built in the build stage, into the directory the runtime reads.
    assert re.search(r"^RUN hindsight model --cache-dir /opt/models$", text, re.M)
    assert "COPY --from=build /opt/models /opt/models" in text
    assert "HINDSIGHT_MODEL_CACHE_DIR=/opt/models" in text
    for path in ("app", "worker", "alembic"):
        assert f"COPY {path} ./{path}" in text


def _worker_args(command: list[str]) -> argparse.Namespace:
    assert command[:2] == ["hindsight", "worker"]
    args = build_parser().parse_args(command[1:])
    return args


def test_compose_runs_the_worker_layout_each_pool_alone_on_its_queues() -> None:
    """New events (distill, resolve) and bulk work (replay, maintenance) never share a worker."""
    services = _compose()["services"]
    consumed: list[str] = []
    for pool in WORKER_POOLS:
        service = services[f"worker-{pool.name}"]
        args = _worker_args(service["command"])
        assert tuple(args.queues.split(",")) == pool.queues
        assert args.concurrency == pool.concurrency
        assert args.name == f"{pool.name}@%h"
        assert service["cpu_shares"] < services["api"].get("cpu_shares", 1024)  # queries first
        assert f"'{pool.name}@'" in service["healthcheck"]["test"][-1]  # its own heartbeat, not any
        consumed += pool.queues
    assert sorted(consumed) == sorted(QUEUES)  # every queue consumed, by exactly one pool
    realtime = {"distill", "resolve"}
    assert [set(pool.queues) for pool in WORKER_POOLS if set(pool.queues) & realtime] == [realtime]
    assert any(pool.concurrency > 1 for pool in WORKER_POOLS if "resolve" in pool.queues)

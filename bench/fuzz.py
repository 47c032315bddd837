"""Schemathesis over every operation of /openapi.json, authenticated, against a live API.

    python -m bench.fuzz [--examples 200] [--seed 1] [--url URL --api-key KEY]
        [--out bench/results/fuzz.json]

Without `--url` it starts its own stack (embedded PostgreSQL and Redis in a temporary directory,
`hindsight api` and `hindsight worker` as child processes, rate limit off) and removes it at the end.

Each operation is driven by Hypothesis with schemathesis' strategies, positive (data the schema
allows) and negative (data it forbids), `--examples` of each. Path parameters point at real
resources made first (a bank with a session, a unit, an entity, a key and a job), so requests get
past the 404; operations that destroy their target (delete a bank, revoke a key, patch / forget /
restore a unit, accept or reject a proposal) get a fresh one for each example; maintenance tasks are
pinned to the fuzz bank so they never touch other banks. Every response must pass `CHECKS`: no 5xx, a
status code, a content type and a body that the schema declares. Prints a summary per operation and
writes JSON; the bounded version of the same run is tests/integration/test_schemathesis.py.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode
from schemathesis.checks import CheckFunction, not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Err
from schemathesis.schemas import APIOperation, BaseSchema
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

ROOT = Path(__file__).resolve().parent.parent
CHECKS: list[CheckFunction] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
Operation = APIOperation[Any, Any, Any, Any]


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_: Any, value: Any) -> bytes:
    """A bank import's body as sent: the generated text as it is (a string schema), anything else as
    JSON; lone surrogates kept (the server must refuse them, not fail on them)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text.encode("utf-8", "surrogatepass")


@dataclass
class Targets:
    """Real resources the path parameters point at."""

    bank_id: str
    session_id: str
    memory_id: str
    entity_id: str
    key_id: str
    job_id: str
    webhook_id: str

    def path_parameters(self) -> dict[str, str]:
        return {k: str(v) for k, v in vars(self).items()}


@dataclass
class OperationReport:
    label: str
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[dict[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "requests": self.requests,
            "statuses": {str(k): v for k, v in sorted(self.statuses.items())},
            "failures": self.failures,
            "seconds": round(self.seconds, 2),
        }


def _ok(response: httpx.Response, status: int) -> dict[str, Any]:
    if response.status_code != status:
        raise RuntimeError(f"{response.request.method} {response.request.url}: {response.text}")
    body: dict[str, Any] = response.json()
    return body


class Fixtures:
    """Makes the resources the fuzzed requests aim at, over the API itself."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.proposers: dict[str, str] = {}  # bank → a propose-only key of it

    def bank(self, prefix: str = "fuzz") -> str:
        bank = f"{prefix}-{uuid.uuid4().hex[:12]}"
        _ok(self.http.post("/v1/banks", json={"bank_id": bank}), 201)
        return bank

    def memory(self, bank: str, *, forgotten: bool = False) -> str:
        written = self.http.post(
            f"/v1/banks/{bank}/memories",
            params={"wait": "true"},
            json={
                # Each target its own case: a relation shared by two targets ("Ana Lima works at Acme")
                # would make resolution fold the later one into the earlier, and no PATCH could succeed.
                "content": f"Case {uuid.uuid4().hex[:8]}: Ana Lima asked about her laptop order.",
                "tags": ["fact.work"],
                "entities": [{"name": "Ana Lima", "type": "person"}],
            },
        )
        memory_id = str(_ok(written, 201)["memory"]["id"])
        if forgotten:
            _ok(self.http.delete(f"/v1/banks/{bank}/memories/{memory_id}"), 200)
        return memory_id

    def proposal(self, bank: str) -> str:
        """A unit waiting for a review (accept, reject): written with a propose-only key of the bank."""
        if bank not in self.proposers:
            created = _ok(self.http.post(f"/v1/banks/{bank}/keys", json={"scopes": ["propose"]}), 201)
            self.proposers[bank] = str(created["key"])
        written = self.http.post(
            f"/v1/banks/{bank}/memories",
            headers={"Authorization": f"Bearer {self.proposers[bank]}"},
            json={
                "content": f"Case {uuid.uuid4().hex[:8]}: Ana Lima prefers aisle seats.",
                "tags": ["preference"],
            },
        )
        return str(_ok(written, 202)["memory"]["id"])

    def key(self, bank: str) -> str:
        return str(_ok(self.http.post(f"/v1/banks/{bank}/keys", json={"scopes": ["read"]}), 201)["id"])

    def webhook(self, bank: str) -> str:
        hook = {"url": "http://127.0.0.1:9/fuzz", "events": ["job.failed"]}  # port 9: discard, never sent
        return str(_ok(self.http.post(f"/v1/banks/{bank}/webhooks", json=hook), 201)["id"])

    def targets(self) -> Targets:
        bank = self.bank()
        session = "session-1"
        events = [
            {"role": "user", "speaker": "Ana", "content": "My budget is 5000.", "external_id": "m1"},
            {"role": "assistant", "content": "Noted: a budget of 5000.", "external_id": "m2"},
        ]
        _ok(self.http.post(f"/v1/banks/{bank}/sessions/{session}/events", json={"events": events}), 202)
        memory_id = self.memory(bank)
        entities = _ok(self.http.get(f"/v1/banks/{bank}/entities"), 200)["entities"]
        job = _ok(self.http.post(f"/v1/banks/{bank}/sessions/{session}/distill"), 202)
        return Targets(
            bank_id=bank,
            session_id=session,
            memory_id=memory_id,
            entity_id=str(entities[0]["id"]),
            key_id=self.key(bank),
            job_id=str(job["job_id"]),
            webhook_id=self.webhook(bank),
        )


class Consumables:
    """Targets of the operations that use them up (delete a bank, revoke a key, patch / forget /
    restore a unit, review a proposal; an import: an id no bank has): each gets its own, made again
    only after a 2xx used it up. Maintenance is pinned to the fuzz bank: a task without a bank runs
    over every bank, with the fuzzer's `now`."""

    def __init__(self, fixtures: Fixtures, targets: Targets) -> None:
        self.fixtures = fixtures
        self.targets = targets
        self.current: dict[str, str] = {}
        self.imported = False

    def _make(self, kind: str) -> str:
        bank = self.targets.bank_id
        if kind == "bank":
            return self.fixtures.bank("fuzz-doomed")
        if kind == "key":
            return self.fixtures.key(bank)
        if kind == "webhook":
            return self.fixtures.webhook(bank)
        if kind == "unused":  # an import creates its bank: an id no bank has
            return f"fuzz-import-{uuid.uuid4().hex[:12]}"
        if kind == "proposed":
            return self.fixtures.proposal(bank)
        return self.fixtures.memory(bank, forgotten=kind == "forgotten")

    @staticmethod
    def _kind(operation: Operation) -> tuple[str, str] | None:
        method, path = operation.method.upper(), operation.path
        if path == "/v1/banks/{bank_id}" and method == "DELETE":
            return "bank_id", "bank"
        if path.endswith("/import"):
            return "bank_id", "unused"
        if path.endswith("/keys/{key_id}"):
            return "key_id", "key"
        if path.endswith("/webhooks/{webhook_id}") and method == "DELETE":
            return "webhook_id", "webhook"
        if path.endswith("/restore"):
            return "memory_id", "forgotten"
        if path.endswith(("/accept", "/reject")):  # a review uses its proposal up
            return "memory_id", f"proposed-{path.rsplit('/', 1)[1]}"
        if path.endswith("/memories/{memory_id}") and method in ("PATCH", "DELETE"):
            return "memory_id", f"memory-{method}"
        return None

    def before(self, operation: Operation, case: Case[Operation]) -> None:
        if operation.path.endswith("/import") and not self.imported:
            # No generated string is an export stream: the first import sends a real one (the fuzz
            # bank's own export), the rest what the strategies make.
            self.imported = True
            case.body = self.fixtures.http.get(f"/v1/banks/{self.targets.bank_id}/export").text
        if operation.path.startswith("/v1/admin/maintenance/"):
            body = case.body if isinstance(case.body, dict) else {}
            case.body = {**body, "bank_id": self.targets.bank_id}
        found = self._kind(operation)
        if found is not None and case.path_parameters is not None:
            name, kind = found
            if kind not in self.current:
                self.current[kind] = self._make(kind.partition("-")[0])
            case.path_parameters[name] = self.current[kind]

    def after(self, operation: Operation, status: int) -> None:
        found = self._kind(operation)
        if found is not None and 200 <= status < 300:
            self.current.pop(found[1], None)


@dataclass
class Fuzzer:
    """What the runs of all operations share: the server and the key's headers, the targets, the
    consumables, and how many cases of each mode with which seed (None: derandomized)."""

    base_url: str
    headers: dict[str, str]
    targets: Targets
    consumables: Consumables
    session: requests.Session
    examples: int
    seed_value: int | None = None

    def run(self, operation: Operation) -> OperationReport:
        """Run `examples` positive and `examples` negative cases of one operation; collect, don't raise."""
        report = OperationReport(label=operation.label)
        started = time.monotonic()
        names = {p.name for p in operation.path_parameters}
        pinned = {k: v for k, v in self.targets.path_parameters().items() if k in names}

        def one(case: Case[Operation]) -> None:
            self.consumables.before(operation, case)
            response = case.call(
                base_url=self.base_url, session=self.session, headers=self.headers, timeout=60
            )
            self.consumables.after(operation, response.status_code)
            report.requests += 1
            report.statuses[response.status_code] += 1
            try:
                case.validate_response(response, checks=CHECKS, headers=self.headers)
            except FailureGroup as group:
                for failure in group.exceptions:
                    report.failures.append(
                        {
                            "title": failure.title,
                            "status": str(response.status_code),
                            "message": failure.message[:2000],
                            "curl": case.as_curl_command(headers={"Authorization": "Bearer $KEY"}),
                        }
                    )

        for mode in MODES:
            strategy = operation.as_strategy(
                generation_mode=mode, path_parameters=pinned, headers=self.headers
            )
            run: Callable[[], None] = settings(
                max_examples=self.examples,
                derandomize=self.seed_value is None,
                database=None,
                deadline=None,
                phases=[Phase.explicit, Phase.generate],  # collect failures; no shrinking
                # Each example is a round trip to a live server: Hypothesis' "too slow" is the point here.
                suppress_health_check=list(HealthCheck),
            )(given(case=strategy)(one))
            if self.seed_value is not None:
                run = seed(self.seed_value)(run)
            try:
                run()
            except Unsatisfiable:
                # Every part of the request is pinned or has no schema (GET /healthz, GET one bank):
                # there is nothing to make invalid.
                if mode is not GenerationMode.NEGATIVE:
                    raise
        report.seconds = time.monotonic() - started
        return report


def fuzz(
    schema: BaseSchema, base_url: str, api_key: str, *, examples: int, seed_value: int | None = None
) -> list[OperationReport]:
    """Every operation of the schema, in order; targets made through the API first."""
    headers = {"Authorization": f"Bearer {api_key}"}
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as http, requests.Session() as session:
        fixtures = Fixtures(http)
        targets = fixtures.targets()
        consumables = Consumables(fixtures, targets)
        fuzzer = Fuzzer(base_url, headers, targets, consumables, session, examples, seed_value)
        reports = []
        for result in schema.get_all_operations():
            if isinstance(result, Err):
                raise result.err()
            reports.append(fuzzer.run(result.ok()))
        return reports


def summary(reports: list[OperationReport]) -> str:
    lines = [f"{'operation':<62} {'requests':>8} {'failures':>8} {'s':>6}  statuses"]
    for r in reports:
        statuses = " ".join(f"{k}×{v}" for k, v in sorted(r.statuses.items()))
        lines.append(f"{r.label:<62} {r.requests:>8} {len(r.failures):>8} {r.seconds:>6.1f}  {statuses}")
    total = sum(r.requests for r in reports)
    failed = sum(len(r.failures) for r in reports)
    lines.append(f"{len(reports)} operations, {total} requests, {failed} failures")
    return "\n".join(lines)


@contextlib.contextmanager
def _own_stack() -> Iterator[tuple[str, str]]:
    from bench.harness import services

    admin_key = "fuzz-admin-" + uuid.uuid4().hex
    with services.stack(None, None) as s:
        env = services.service_env(
            s.database_url, s.redis_url, admin_key, HINDSIGHT_RATE_LIMIT_PER_SECOND="0"
        )
        with services.child(["worker", "--name", "fuzz-worker@localhost"], env, s.work / "worker.log"):
            with services.api(env, s.work / "api.log") as (base_url, _):
                yield base_url, admin_key


def main(argv: list[str] | None = None) -> int:
    import schemathesis

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=200, help="cases per operation and mode")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--url", help="a running API (default: start an embedded stack)")
    parser.add_argument("--api-key", help="its admin key")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "fuzz.json"))
    args = parser.parse_args(argv)
    if args.url and not args.api_key:
        parser.error("--url needs --api-key (the admin key)")

    with contextlib.ExitStack() as stack:
        if args.url:
            base_url, api_key = args.url.rstrip("/"), args.api_key
        else:
            base_url, api_key = stack.enter_context(_own_stack())
        schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
        started = time.monotonic()
        reports = fuzz(schema, base_url, api_key, examples=args.examples, seed_value=args.seed)
        took = time.monotonic() - started
    print(summary(reports))
    failures = sum(len(r.failures) for r in reports)
    report = {
        "schemathesis": schemathesis.__version__,
        "examples_per_mode": args.examples,
        "seed": args.seed,
        "checks": [c.__name__ for c in CHECKS],
        "took_s": round(took, 1),
        "requests": sum(r.requests for r in reports),
        "failures": failures,
        "operations": [r.as_json() for r in reports],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    print(f"wrote {out} in {took:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

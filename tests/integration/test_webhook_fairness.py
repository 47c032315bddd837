"""One bank's hanging receivers never delay another bank's webhooks (issue 29): a real Celery worker,
a receiver that accepts connections and never answers, and a bank at its limit of hooks to it."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from app.embedded import free_port
from tests.conftest import Stack, assert_problem, start_worker, stop_worker, wait_for
from tests.factories import Receiver, create_hook, make_bank, write

HOOKS_PER_BANK = 10  # the default HINDSIGHT_WEBHOOK_MAX_PER_BANK


class Hanging:
    """A TCP server on loopback that accepts every connection and never answers on it."""

    def __init__(self) -> None:
        self.port = free_port()
        self.accepted: list[socket.socket] = []
        self._server = socket.create_server(("127.0.0.1", self.port))
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            self.accepted.append(conn)  # held open, never read or answered

    def url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.port}/hook/{n}"

    def close(self) -> None:
        self._closed = True
        self._server.close()
        for conn in self.accepted:
            conn.close()


@pytest.fixture
def hanging() -> Iterator[Hanging]:
    server = Hanging()
    yield server
    server.close()


@pytest.fixture(scope="module")
def patient_worker(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A worker whose sends wait a minute for an answer: a hung attempt outlasts the whole test."""
    log = tmp_path_factory.mktemp("patient") / "worker.log"
    proc = start_worker(stack, log, "patient-worker@localhost", HINDSIGHT_WEBHOOK_TIMEOUT_SECONDS="60")
    yield proc
    stop_worker(proc)


async def test_a_bank_with_hanging_receivers_never_delays_another_banks_delivery(
    client: httpx.AsyncClient, patient_worker: Any, receiver: Receiver, hanging: Hanging, sql: Any
) -> None:
    hostile, other = await make_bank(client), await make_bank(client)
    hooks = [
        await create_hook(client, hostile, hanging.url(n), ["memory.created"]) for n in range(HOOKS_PER_BANK)
    ]
    fast = await create_hook(client, other, receiver.url(), ["memory.created"])
    try:
        await write(client, hostile, "The user's favourite colour is green.", ["preference.color"])

        async def hung() -> bool:  # the hostile bank's sends are in flight and get no answer
            return len(hanging.accepted) > 0

        await wait_for(hung)
        told = await write(client, other, "The user's city is Oslo.", ["fact.place"])

        async def arrived() -> list[dict[str, Any]]:
            return receiver.events()

        [event] = await wait_for(arrived)
        assert event["data"]["memory"]["id"] == told["id"]
        # Causality: when the other bank's event arrived, no hung attempt had ended yet (each waits a
        # minute for its answer); before, every one of them had to time out first, one after another.
        [row] = await sql(
            "SELECT count(*) AS pending, count(*) FILTER (WHERE attempts > 0) AS ended"
            " FROM webhook_deliveries WHERE bank_id = :bank",
            bank=hostile,
        )
        assert (row["pending"], row["ended"]) == (HOOKS_PER_BANK, 0)
    finally:
        for hook in hooks:
            assert (await client.delete(f"/v1/banks/{hostile}/webhooks/{hook['id']}")).status_code == 204
        assert (await client.delete(f"/v1/banks/{other}/webhooks/{fast['id']}")).status_code == 204


async def test_a_bank_has_at_most_its_limit_of_hooks(client: httpx.AsyncClient) -> None:
    bank = await make_bank(client)
    for n in range(HOOKS_PER_BANK):
        await create_hook(client, bank, f"http://127.0.0.1:9/{n}", ["job.failed"])
    body = {"url": "http://127.0.0.1:9/one-more", "events": ["job.failed"]}
    problem = assert_problem(await client.post(f"/v1/banks/{bank}/webhooks", json=body), 409)
    assert "HINDSIGHT_WEBHOOK_MAX_PER_BANK" in problem["detail"]
    listed = (await client.get(f"/v1/banks/{bank}/webhooks")).json()["webhooks"]
    assert len(listed) == HOOKS_PER_BANK
    # Deleting one makes room again; another bank has its own limit.
    assert (await client.delete(f"/v1/banks/{bank}/webhooks/{listed[0]['id']}")).status_code == 204
    await create_hook(client, bank, "http://127.0.0.1:9/again", ["job.failed"])
    await create_hook(client, await make_bank(client), "http://127.0.0.1:9/other", ["job.failed"])

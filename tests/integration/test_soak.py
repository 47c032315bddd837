"""A short soak (the full one is `python -m bench.soak`): concurrent clients of mixed appends and
queries against the API; no 5xx, and the database holds exactly the events the 202s acknowledged."""

from __future__ import annotations

from typing import Any

import httpx

from bench.soak import run_load
from tests.conftest import ADMIN_KEY, make_client
from tests.factories import make_bank


async def test_a_short_soak_answers_no_5xx_and_stores_every_acknowledged_event(
    app: Any, client: httpx.AsyncClient, sql: Any
) -> None:
    # Distillation stays off here: this is the API under load; bench/soak.py runs the worker too.
    bank = await make_bank(client, distill_every_n_turns=1000)
    try:
        tally = await run_load(lambda: make_client(app, ADMIN_KEY), bank, clients=20, duration=8)
        assert tally.five_xx == 0, tally.server_errors
        assert tally.transport_failures == 0, tally.transport_errors
        assert {key.split(":")[1] for key in tally.statuses} <= {"200", "202", "429"}, tally.statuses
        assert tally.statuses["append:202"] >= 20
        assert tally.statuses["query:200"] >= 5
        [stored] = await sql("SELECT count(*) AS n FROM events WHERE bank_id = :bank", bank=bank)
        assert stored["n"] == tally.acknowledged
        assert tally.duplicates == 0
    finally:
        await client.delete(f"/v1/banks/{bank}")

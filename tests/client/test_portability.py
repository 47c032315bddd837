"""The client's `banks.export` and `banks.import_` against the live routes, sync and async: a bank goes
out to a file (a path, a binary file object) and comes back under a new id with its units; a bad
stream, an existing bank and another bank's export are the client's exceptions."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import hindsight_memory as hc
import pytest

from tests.client.conftest import new_bank, settled
from tests.conftest import ADMIN_KEY

TURNS = [
    {"role": "user", "speaker": "Ana", "content": "My budget is 1200 euros."},
    {"role": "user", "speaker": "Ana", "content": "I live in Porto."},
]


def filled_bank(hs: hc.Hindsight) -> str:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    hs.events.append(bank_id, "trip", TURNS)
    assert hs.jobs.wait(hs.sessions.distill(bank_id, "trip").id, timeout=60).status == "succeeded"
    settled(hs, bank_id)
    unit = hs.memories.write(bank_id, "Ana's seat is 12A.", ["preference.travel"], wait=True)
    hs.memories.update(bank_id, unit.id, content="Ana's seat is 14C.")
    return bank_id


def contents(hs: hc.Hindsight, bank_id: str) -> list[tuple[str, str]]:
    return sorted((m.content, m.status) for m in hs.memories.list(bank_id))


def test_export_and_import_sync(hs: hc.Hindsight, worker: Any, tmp_path: Path) -> None:
    bank_id = filled_bank(hs)
    path = tmp_path / "bank.ndjson"
    hs.banks.export(bank_id, path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert (lines[0]["type"], lines[0]["bank_id"], lines[-1]["type"]) == ("bank", bank_id, "end")

    copy = f"client-copy-{uuid.uuid4().hex[:8]}"
    result = hs.banks.import_(copy, path)
    assert result.bank_id == copy
    assert result.counts == lines[-1]["counts"]
    assert result.counts["memory"] >= 3
    assert hs.jobs.wait(result.job_id, timeout=60).status == "succeeded"
    assert contents(hs, copy) == contents(hs, bank_id)
    found = hs.query(copy, "Where does Ana live?", top_k=3)
    assert "Porto" in found.memories[0].content

    with pytest.raises(hc.ConflictError):
        hs.banks.import_(copy, path)
    with pytest.raises(hc.NotFoundError):
        hs.banks.export(f"client-none-{uuid.uuid4().hex[:8]}", io.BytesIO())
    # A failed export leaves the file at the path as it was, and no partial file beside it.
    with pytest.raises(hc.NotFoundError):
        hs.banks.export(f"client-none-{uuid.uuid4().hex[:8]}", path)
    assert [json.loads(line) for line in path.read_text().splitlines()] == lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bank.ndjson"]
    # An empty list of sessions is refused, never read as every session of the bank.
    with pytest.raises(hc.UnprocessableEntityError):
        hs.redistill(bank_id, [], dry_run=False)
    broken = io.BytesIO(path.read_bytes().replace(b'"type":"memory"', b'"type":"memroy"', 1))
    with pytest.raises(hc.UnprocessableEntityError) as refused:
        hs.banks.import_(f"client-bad-{uuid.uuid4().hex[:8]}", broken)
    assert refused.value.errors
    assert refused.value.errors[0]["loc"][:1] == ["line"]
    assert refused.value.detail.startswith("Line ")


async def test_export_and_import_async(hs: hc.Hindsight, service: str, worker: Any) -> None:
    bank_id = filled_bank(hs)
    async with hc.AsyncHindsight(service, ADMIN_KEY) as ahs:
        out = io.BytesIO()
        await ahs.banks.export(bank_id, out)
        exported = out.getvalue()
        assert exported.endswith(b"\n")
        copy = f"client-copy-{uuid.uuid4().hex[:8]}"
        result = await ahs.banks.import_(copy, io.BytesIO(exported))
        assert result.counts == json.loads(exported.splitlines()[-1])["counts"]
        assert (await ahs.jobs.wait(result.job_id, timeout=60)).status == "succeeded"
        with pytest.raises(hc.ConflictError):
            await ahs.banks.import_(copy, io.BytesIO(exported))
        key = await ahs.keys.create(bank_id, scopes=["read"])
    assert contents(hs, copy) == contents(hs, bank_id)
    other = new_bank(hs)
    async with hc.AsyncHindsight(service, key.key) as reader:
        await reader.banks.export(bank_id, io.BytesIO())  # its own bank
        with pytest.raises(hc.NotFoundError):
            await reader.banks.export(other, io.BytesIO())

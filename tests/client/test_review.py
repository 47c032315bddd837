"""The client's side of shared memory against the live stack: keys that name an agent, a client that
writes as an agent, proposals listed, accepted and rejected, the agent filters."""

from __future__ import annotations

import pytest
from hindsight_memory import AsyncHindsight, Hindsight, PermissionDeniedError

from tests.client.conftest import new_bank


def test_proposals_are_listed_accepted_and_rejected(hs: Hindsight, service: str) -> None:
    bank_id = new_bank(hs)
    proposer = hs.keys.create(bank_id, scopes=["read", "propose"], agent_id="intern")
    reviewer = hs.keys.create(bank_id, scopes=["read", "review"], agent_id="lead")
    assert (proposer.agent_id, proposer.scopes) == ("intern", ["propose", "read"])
    with Hindsight(service, proposer.key) as intern, Hindsight(service, reviewer.key) as lead:
        kept = intern.memories.write(bank_id, "Ana's budget is 3000 EUR.", ["constraint.budget"], wait=True)
        dropped = intern.memories.write(bank_id, "Ana's shoe size is 38.", ["fact"], wait=True)
        assert (kept.status, kept.agent_id, kept.job_id) == ("proposed", "intern", None)
        assert {m.id for m in lead.memories.proposals(bank_id)} == {kept.id, dropped.id}
        with pytest.raises(PermissionDeniedError):
            intern.memories.accept(bank_id, kept.id)
        accepted = lead.memories.accept(bank_id, kept.id)
        rejected = lead.memories.reject(bank_id, dropped.id, reason="not confirmed")
    assert (accepted.status, rejected.status) == ("active", "rejected")
    assert list(hs.memories.proposals(bank_id)) == []
    history = hs.memories.history(bank_id, dropped.id)
    refusal = next(a for a in history.actions if a.action == "rejected")
    assert (refusal.agent_id, refusal.details["reason"]) == ("lead", "not confirmed")
    assert [m.id for m in hs.memories.list(bank_id, agent_id="intern", status="active")] == [kept.id]
    found = hs.query(bank_id, "What is Ana's budget?", agents=["intern"])
    assert [m.id for m in found.memories] == [kept.id]


async def test_an_async_client_writes_as_its_agent(hs: Hindsight, service: str) -> None:
    bank_id = new_bank(hs)
    key = hs.keys.create(bank_id, scopes=["read", "write"])
    assert key.agent_id is None
    async with AsyncHindsight(service, key.key, agent_id="planner") as planner:
        unit = await planner.memories.write(bank_id, "Ana flies to Oslo on Friday.", ["fact"], wait=True)
        assert unit.agent_id == "planner"
    assert hs.memories.history(bank_id, unit.id).actions[0].agent_id == "planner"

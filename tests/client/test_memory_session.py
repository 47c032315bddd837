"""The seeds' agent loop through `memory_session` on the real stack (a real worker distils)."""

from __future__ import annotations

from typing import Any

import pytest
from hindsight_memory import AsyncHindsight, Hindsight, NotFoundError

from tests.client.conftest import new_bank, settled
from tests.conftest import ADMIN_KEY


def stale_lines(block: str) -> list[str]:
    """Lines that state the old budget without the new one."""
    return [line for line in block.splitlines() if "5000" in line and "8000" not in line]


def test_a_changed_budget_is_recalled_as_the_new_one(hs: Hindsight, worker: Any) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    with hs.memory_session(bank_id, "trip") as mem:
        assert mem.recall("what is my budget?") == ""  # nothing yet
        mem.record("user", "My budget is 5000.")
        mem.record("assistant", "Noted, I will keep to it.")
        # Recorded turns are buffered, then sent before a recall: working memory has them at once.
        block = mem.recall("what is my budget?")
        assert "Recent turns of this session, not yet distilled:" in block
        assert "- user: My budget is 5000." in block
        job = mem.reflect(wait=True)
        assert job is not None
        assert job.status == "succeeded"
        settled(hs, bank_id)
        mem.record("user", "My budget is 8000 now.")
        assert mem.reflect(wait=True) is not None
        settled(hs, bank_id)
        block = mem.recall("what is my budget?")
        assert "8000" in block
        assert stale_lines(block) == []
        mem.record("user", "Thanks, book it.")  # left in the buffer: sent on exit
    session = hs.sessions.get(bank_id, "trip")
    assert session.status == "closed"
    assert session.last_seq == 4
    [budget] = list(hs.memories.list(bank_id, tag="constraint.budget", status="active"))
    assert "8000" in budget.content


async def test_the_async_session_buffers_flushes_and_closes(hs: Hindsight, worker: Any) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    async with (
        AsyncHindsight(hs.base_url, ADMIN_KEY) as ahs,
        ahs.memory_session(bank_id, "chat", buffer_size=2) as mem,
    ):
        assert await mem.reflect() is None  # nothing recorded: nothing to distil
        await mem.record("user", "My budget is 5000.")
        with pytest.raises(NotFoundError):  # still buffered: the session does not exist yet
            hs.sessions.get(bank_id, "chat")
        await mem.record("user", "I prefer window seats.")  # the buffer is full: sent
        assert len(list(hs.events.list(bank_id, "chat"))) == 2
        job = await mem.reflect(wait=True)
        assert job is not None
        assert job.status == "succeeded"
        settled(hs, bank_id)
        await mem.record("user", "My budget is 8000 now.")
        await mem.reflect(wait=True)
        settled(hs, bank_id)
        block = await mem.recall("what is my budget?")
        assert "8000" in block
        assert stale_lines(block) == []
    assert hs.sessions.get(bank_id, "chat").status == "closed"

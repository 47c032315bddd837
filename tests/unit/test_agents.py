"""Who a write is recorded as, and whether it waits for a review (docs/guides/shared-memory.md): the
rules of `Principal`, free of I/O."""

from __future__ import annotations

import uuid

import pytest

from app.banks.service import Principal
from app.errors import Forbidden


def key(*scopes: str, agent: str | None = None) -> Principal:
    return Principal(
        is_admin=False, bank_id="b", scopes=frozenset(scopes), key_id=uuid.uuid4(), agent_id=agent
    )


@pytest.mark.parametrize(
    ("principal", "proposes"),
    [
        (key("propose"), True),
        (key("read", "propose"), True),
        (key("write", "propose"), False),  # a key that may write writes
        (key("read", "write"), False),
        (key("review"), False),
        (Principal(is_admin=True), False),
    ],
)
def test_only_a_key_with_propose_and_without_write_proposes(principal: Principal, proposes: bool) -> None:
    assert principal.proposes_only is proposes


def test_a_keys_agent_cannot_be_overridden_but_confirmed() -> None:
    planner = key("write", agent="planner")
    assert planner.acting_as(None) is planner
    assert planner.acting_as("planner") is planner
    with pytest.raises(Forbidden, match="planner"):
        planner.acting_as("reviewer")


def test_a_key_without_an_agent_and_the_admin_take_the_requests() -> None:
    assert key("write").acting_as("bot-1").agent_id == "bot-1"
    assert key("write").acting_as(None).agent_id is None
    admin = Principal(is_admin=True)
    assert admin.acting_as("ops").agent_id == "ops"
    assert admin.acting_as("ops").is_admin

"""Errors and retries against real responses: one exception class per status, 429 with `Retry-After`
from an app with a low rate limit, a reply lost on the way back (a proxy drops it) and what is and is
not sent again, the transport's own errors, and `jobs.wait` giving up."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hindsight_memory import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AsyncHindsight,
    AuthenticationError,
    ConflictError,
    Hindsight,
    HindsightError,
    JobTimeoutError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    UnprocessableEntityError,
)

from tests.client.conftest import DroppingProxy, new_bank
from tests.conftest import ADMIN_KEY, Stack


def test_each_status_raises_its_class(hs: Hindsight, service: str) -> None:
    bank_id = new_bank(hs)
    with Hindsight(service, "hs_not-a-key") as stranger, pytest.raises(AuthenticationError) as raised:
        list(stranger.banks.list())
    assert (raised.value.status, raised.value.title) == (401, "Unauthorized")
    assert raised.value.detail

    reader_key = hs.keys.create(bank_id, scopes=["read"]).key
    with Hindsight(service, reader_key) as reader, pytest.raises(PermissionDeniedError) as forbidden:
        reader.memories.write(bank_id, "Bo drinks tea.", ["fact"])
    assert forbidden.value.status == 403

    with pytest.raises(NotFoundError) as missing:
        hs.banks.get(f"no-such-{uuid.uuid4().hex[:8]}")
    assert missing.value.status == 404
    assert "not found" in missing.value.detail

    with pytest.raises(ConflictError) as conflict:
        hs.banks.create(bank_id)
    assert conflict.value.status == 409

    with pytest.raises(UnprocessableEntityError) as invalid:
        hs.memories.write(bank_id, "x", ["Not A Tag!"])
    assert invalid.value.status == 422
    assert invalid.value.errors
    assert invalid.value.errors[0]["loc"][:2] == ["body", "tags"]
    assert isinstance(invalid.value, APIError)
    assert isinstance(invalid.value, HindsightError)


@pytest.fixture(scope="module")
def limited(stack: Stack) -> Iterator[tuple[str, str]]:
    """An app of its own with a rate limit of one request a second (burst 1) and an admin key of its
    own (a bucket of its own); its URL and key."""
    from app.config import Settings
    from app.main import create_app
    from tests.fake_openai import serve

    key = "client-ratelimit-" + uuid.uuid4().hex
    settings = Settings(
        env="test",
        database_url=stack.database_url,
        redis_url=stack.redis_url,
        admin_key=key,
        rate_limit_per_second=1.0,
        rate_limit_burst=1,
    )
    with serve(create_app(settings)) as url:
        yield url.removesuffix("/v1"), key


def test_429_carries_retry_after_and_is_retried_after_it(limited: tuple[str, str]) -> None:
    url, key = limited
    statuses: list[int] = []
    hooks = {"response": [lambda response: statuses.append(response.status_code)]}
    with Hindsight(url, key, max_retries=0) as impatient:
        next(impatient.banks.list(page_size=1), None)
        with pytest.raises(RateLimitError) as raised:
            next(impatient.banks.list(page_size=1), None)
    assert raised.value.status == 429
    assert raised.value.retry_after is not None
    assert raised.value.retry_after >= 1

    with httpx.Client(event_hooks=hooks) as http, Hindsight(url, key, max_retries=3, http_client=http) as hs:
        next(hs.banks.list(page_size=1), None)  # empties the bucket
        next(hs.banks.list(page_size=1), None)  # 429, then the retry after Retry-After succeeds
    assert statuses[-2:] == [429, 200]


def test_an_append_whose_reply_was_lost_is_retried_and_stored_once(
    hs: Hindsight, proxy: DroppingProxy
) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    turns = [{"role": "user", "content": f"Turn {i} of the retried append."} for i in range(3)]
    proxy.drop = 1
    with Hindsight(proxy.url, ADMIN_KEY, max_retries=2) as through_proxy:
        result = through_proxy.events.append(bank_id, "s", turns)
    assert proxy.dropped == 1
    assert (result.appended, result.duplicates) == (0, 3)  # the first attempt had stored them
    assert [e.content for e in hs.events.list(bank_id, "s")] == [t["content"] for t in turns]


async def test_an_async_append_whose_reply_was_lost_is_stored_once(
    hs: Hindsight, proxy: DroppingProxy
) -> None:
    bank_id = new_bank(hs, distill_every_n_turns=1000)
    proxy.drop = 1
    async with AsyncHindsight(proxy.url, ADMIN_KEY, max_retries=2) as through_proxy:
        result = await through_proxy.events.append(bank_id, "s", [{"role": "user", "content": "Only once."}])
    assert proxy.dropped == 1
    assert result.duplicates == 1
    assert [e.content for e in hs.events.list(bank_id, "s")] == ["Only once."]


def test_a_write_whose_reply_was_lost_is_not_sent_again(hs: Hindsight, proxy: DroppingProxy) -> None:
    bank_id = new_bank(hs)
    proxy.drop = 1
    with Hindsight(proxy.url, ADMIN_KEY, max_retries=2) as through_proxy:
        with pytest.raises(APIConnectionError) as raised:
            through_proxy.memories.write(bank_id, "Bo lives in Lyon.", ["fact"])
        assert not isinstance(raised.value, APIError)
        # A read through the same proxy afterwards works, and sees the one unit.
        [unit] = list(through_proxy.memories.list(bank_id))
    assert unit.content == "Bo lives in Lyon."
    assert proxy.dropped == 1


def test_transport_errors(hs: Hindsight, service: str) -> None:
    from app.embedded import free_port

    with Hindsight(f"http://127.0.0.1:{free_port()}", ADMIN_KEY, max_retries=0) as nowhere:
        with pytest.raises(APIConnectionError) as refused:
            nowhere.banks.get("anything")
    assert "ConnectError" in str(refused.value)
    with Hindsight(service, ADMIN_KEY, timeout=1e-9, max_retries=0) as hurried:
        with pytest.raises(APITimeoutError):
            list(hurried.banks.list())


def test_environment_configures_the_client(service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HINDSIGHT_URL", service)
    monkeypatch.setenv("HINDSIGHT_API_KEY", ADMIN_KEY)
    with Hindsight() as hs:
        assert hs.base_url == service
        assert next(hs.banks.list(page_size=1)).bank_id


async def test_wait_gives_up_after_its_timeout(hs: Hindsight, app: Any) -> None:
    from app.jobs import service as jobs

    bank_id = new_bank(hs)
    # A job committed but not yet sent to the broker (the outbox state): it stays queued.
    async with app.state.sessionmaker() as db:
        job, _ = await jobs.create(db, "distill.session", bank_id=bank_id, params={"session_id": "none"})
        await db.commit()
    with pytest.raises(JobTimeoutError) as raised:
        hs.jobs.wait(str(job.id), timeout=0.3)
    assert raised.value.job.status == "queued"
    assert isinstance(raised.value, TimeoutError)
    async with AsyncHindsight(hs.base_url, ADMIN_KEY) as ahs:
        with pytest.raises(JobTimeoutError):
            await ahs.jobs.wait(str(job.id), timeout=0.3)
        await ahs.banks.delete(bank_id)  # and the job with it: it would never run

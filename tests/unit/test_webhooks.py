"""Pure parts of webhooks: the retry schedule, the URL checks, the signature a receiver verifies."""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from standardwebhooks import Webhook as Verifier

from app.db.models import Webhook, WebhookDelivery
from app.webhooks import targets
from app.webhooks.delivery import Policy, body_of, signed_headers
from app.webhooks.service import new_secret

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "webhooks.md"


def test_retries_back_off_exponentially_up_to_an_hour_for_a_day_then_stop() -> None:
    policy = Policy()
    now, attempts, waits = T0, 1, []
    while (retry := policy.next_attempt(T0, attempts, now)) is not None:
        waits.append((retry - now).total_seconds())
        now, attempts = retry, attempts + 1
    assert waits[:5] == [5, 10, 20, 40, 80]
    assert max(waits) == 3600
    assert now == T0 + timedelta(days=1)  # the last attempt is at the end of the window
    assert policy.next_attempt(T0, 1, T0 + timedelta(days=1, seconds=1)) is None


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # cloud metadata
        ("100.64.0.1", False),  # carrier-grade NAT
        ("0.0.0.0", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),  # IPv4-mapped
        ("::", False),  # unspecified
        ("ff02::1", False),  # multicast
        ("fd12:3456::1", False),  # unique-local
        ("fec0::1", False),  # site-local (deprecated; Python's is_global calls it public)
        ("fefe::1", False),  # site-local, the end of fec0::/10
        # IPv4 inside IPv6: judged by the IPv4 a translator or tunnel reaches
        ("64:ff9b::a00:1", False),  # NAT64 → 10.0.0.1
        ("64:ff9b::a9fe:a9fe", False),  # NAT64 → 169.254.169.254
        ("64:ff9b::808:808", True),  # NAT64 → 8.8.8.8
        ("64:ff9b:1::808:808", False),  # local-use NAT64: nothing public behind it
        ("::127.0.0.1", False),  # IPv4-compatible
        ("::8.8.8.8", True),
        ("::ffff:0:a9fe:a9fe", False),  # SIIT → 169.254.169.254
        ("::ffff:0:808:808", True),
        ("2002:a9fe:a9fe::1", False),  # 6to4 → 169.254.169.254
        ("2002:7f00:1::1", False),  # 6to4 → 127.0.0.1
        ("2002:808:808::1", True),
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", False),  # Teredo, client 10.0.0.1
        ("2001:0:a00:1:8000:63bf:f7f7:f7f7", False),  # Teredo, server 10.0.0.1
        ("2001:0:808:808:8000:63bf:f7f7:f7f7", True),  # Teredo, server and client 8.8.8.8
    ],
)
def test_only_public_addresses_are_targets(address: str, public: bool) -> None:
    assert targets.is_public(ipaddress.ip_address(address)) is public


def _wrappings(v4: ipaddress.IPv4Address) -> list[ipaddress.IPv6Address]:
    """Every IPv6 form that leads to `v4` through a translator or tunnel."""
    n = int(v4)
    return [
        ipaddress.IPv6Address(0xFFFF << 32 | n),  # mapped
        ipaddress.IPv6Address(n),  # compatible
        ipaddress.IPv6Address(0xFFFF << 48 | n),  # SIIT
        ipaddress.IPv6Address(0x64FF9B << 96 | n),  # NAT64
        ipaddress.IPv6Address(0x2002 << 112 | n << 80 | 1),  # 6to4
        ipaddress.IPv6Address(0x2001 << 112 | 0x08080808 << 64 | (~n & 0xFFFF_FFFF)),  # Teredo client
        ipaddress.IPv6Address(0x2001 << 112 | n << 64 | (~0x08080808 & 0xFFFF_FFFF)),  # Teredo server
    ]


# Any IPv4 address, and often one of the ranges a webhook must never reach.
IPV4 = st.one_of(
    st.ip_addresses(v=4),
    *(
        st.ip_addresses(network=net)
        for net in ("10.0.0.0/8", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.168.0.0/16")
    ),
    *(st.ip_addresses(network=net) for net in ("100.64.0.0/10", "0.0.0.0/8", "224.0.0.0/4")),
)


@settings(deadline=None)
@given(IPV4)
def test_an_ipv6_address_is_a_target_only_if_the_ipv4_it_carries_is(v4: ipaddress.IPv4Address) -> None:
    public = targets.is_public(v4)
    for wrapped in _wrappings(v4):
        assert targets.is_public(wrapped) is public, wrapped


@pytest.mark.parametrize(
    "url", ["ftp://x.example/", "example.com/hook", "http://", "mailto:a@b.c", "x" * 3000]
)
def test_only_absolute_http_urls_parse(url: str) -> None:
    with pytest.raises(targets.TargetRefused):
        targets.parse(url)


async def test_a_literal_private_address_is_refused_and_allowed_by_the_setting() -> None:
    with pytest.raises(targets.TargetRefused, match="HINDSIGHT_WEBHOOK_ALLOW_PRIVATE"):
        await targets.resolve("http://10.0.0.7:8080/hook", allow_private=False)
    allowed = await targets.resolve("http://10.0.0.7:8080/hook", allow_private=True)
    assert str(allowed.connect_url) == "http://10.0.0.7:8080/hook"


async def test_a_public_target_is_connected_to_at_the_address_that_was_checked() -> None:
    target = await targets.resolve("https://93.184.215.14:8443/in?x=1", allow_private=False)
    assert target.address == "93.184.215.14"
    assert str(target.connect_url) == "https://93.184.215.14:8443/in?x=1"


async def test_name_lookups_run_on_threads_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A resolver that never answers blocks a lookup thread until its own timeout: never one of the default
    pool, which the API's embeddings and every other to_thread call share."""
    threads: list[str] = []

    def lookup(host: str, port: int, **_: object) -> list[tuple[object, ...]]:
        threads.append(threading.current_thread().name)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", port))]

    monkeypatch.setattr(targets.socket, "getaddrinfo", lookup)
    target = await targets.resolve("https://hooks.example/in", allow_private=False)
    assert target.address == "93.184.215.14"
    assert [name.split("_")[0] for name in threads] == ["webhook-dns"]


def test_the_signature_verifies_with_the_standard_webhooks_library() -> None:
    secret = new_secret()
    assert secret.startswith("whsec_")
    hook = Webhook(
        id=uuid.uuid4(), bank_id="b", url="https://x.example/", events=["job.failed"], secret=secret
    )
    delivery = WebhookDelivery(id=uuid.uuid4(), payload={"type": "job.failed", "data": {"bank_id": "b"}})
    body = body_of(delivery)
    now = datetime.now(UTC)
    headers = signed_headers(hook, delivery, body, now)
    assert Verifier(secret).verify(body, headers) == delivery.payload
    assert headers["webhook-id"] == f"msg_{delivery.id.hex}"
    assert headers["webhook-timestamp"] == str(int(now.timestamp()))
    with pytest.raises(Exception, match="signature"):
        Verifier(new_secret()).verify(body, headers)


async def test_the_guides_receiver_accepts_a_signed_event_and_refuses_a_forged_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    [example] = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)
    secret = new_secret()
    monkeypatch.setenv("HINDSIGHT_WEBHOOK_SECRET", secret)
    namespace: dict[str, object] = {}
    exec(compile(example, str(GUIDE), "exec"), namespace)
    hook = Webhook(id=uuid.uuid4(), bank_id="b", url="https://x.example/", events=["memory.superseded"])
    hook.secret = secret
    payload = {
        "type": "memory.superseded",
        "data": {"bank_id": "b", "memory_id": "m1", "superseded_by": "m2"},
    }
    delivery = WebhookDelivery(id=uuid.uuid4(), payload=payload)
    body = body_of(delivery)
    headers = signed_headers(hook, delivery, body, datetime.now(UTC))
    transport = httpx.ASGITransport(app=namespace["app"])  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://receiver") as client:
        ok = await client.post("/hooks/hindsight", content=body, headers=headers)
        assert ok.status_code == 204
        forged = await client.post("/hooks/hindsight", content=body.replace("m2", "m3"), headers=headers)
        assert forged.status_code == 400

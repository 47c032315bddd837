"""Where a webhook may point: http(s) URLs whose host resolves to public addresses only. Private,
loopback, link-local (cloud metadata), site-local, shared, reserved, unspecified and multicast
addresses are refused when a hook is created and again at each delivery, after DNS resolution (bounded
by a timeout, on a thread), unless `HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true`. An IPv6 address that carries
an IPv4 one (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by the IPv4 it reaches: a
translator or tunnel on the way would deliver there. A delivery connects to the address it checked
(never resolving the name a second time), so a name that changes its answer cannot reach inside."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import httpx

MAX_URL_LENGTH = 2048
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class TargetRefused(Exception):
    """The URL is not one a webhook may be sent to; the message says why."""


@dataclass(frozen=True)
class Target:
    """A checked URL and the address to connect to for it (None: any, private targets are allowed)."""

    url: httpx.URL
    address: str | None

    @property
    def connect_url(self) -> httpx.URL:
        """The URL with its host replaced by the checked address (the name still goes in Host and SNI)."""
        return self.url.copy_with(host=self.address) if self.address else self.url


def parse(raw: str) -> httpx.URL:
    """The URL, if it is an absolute http(s) URL with a host; else TargetRefused."""
    if len(raw) > MAX_URL_LENGTH:
        raise TargetRefused(f"must be at most {MAX_URL_LENGTH} characters")
    try:
        url = httpx.URL(raw)
        url.netloc.decode("ascii")  # an IDN host is encoded already; anything else fails here
    except Exception as exc:  # InvalidURL, and the IDNA and Unicode errors of odd hosts
        raise TargetRefused("is not a valid URL") from exc
    if url.scheme not in ("http", "https"):
        raise TargetRefused("must be an http:// or https:// URL")
    if not url.host:
        raise TargetRefused("must name a host")
    return url


# IPv6 prefixes whose last 32 bits are an IPv4 address a translator reaches: IPv4-compatible (::a.b.c.d,
# deprecated but still routed by some stacks), SIIT (::ffff:0:a.b.c.d) and well-known NAT64 (RFC 6052).
_LOW_32_EMBEDS = tuple(ipaddress.IPv6Network(n) for n in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96"))
# Local-use NAT64 (RFC 8215): the IPv4 sits at an operator-chosen offset, and nothing public is behind it.
_REFUSED_V6 = (ipaddress.IPv6Network("64:ff9b:1::/48"),)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address leads to through a translator or tunnel (none: a plain one)."""
    found = [v4 for v4 in (address.ipv4_mapped, address.sixtofour) if v4 is not None]
    if address.teredo is not None:
        found += address.teredo  # the server and the (de-obfuscated) client
    if any(address in net for net in _LOW_32_EMBEDS):
        found.append(ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF))
    return found


def _public_v4(address: ipaddress.IPv4Address) -> bool:
    return address.is_global and not address.is_multicast


def is_public(address: IPAddress) -> bool:
    """True for an address a webhook may be sent to: globally routable, and every IPv4 it embeds too.
    (`is_global` alone calls NAT64, 6to4, SIIT and site-local addresses public.)"""
    if isinstance(address, ipaddress.IPv4Address):
        return _public_v4(address)
    if any(address in net for net in _REFUSED_V6):
        return False
    if embedded := embedded_ipv4(address):
        return all(_public_v4(v4) for v4 in embedded)
    return address.is_global and not (address.is_multicast or address.is_site_local)


# Threads for name lookups (a webhook's host, at creation and at each delivery): as many as the deliveries a
# worker sends at once (webhook_concurrency's default), so a stuck resolver slows only lookups
_LOOKUPS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="webhook-dns")


async def _addresses(host: str, port: int, within: float) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        # getaddrinfo blocks a thread, of a pool of the lookups' own: a resolver that never answers is
        # given up on here, but its thread stays blocked, and never one of the default pool, which the
        # API's embeddings and every other to_thread call share
        async with asyncio.timeout(within):
            infos = await asyncio.get_running_loop().run_in_executor(
                _LOOKUPS, lambda: socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            )
    except TimeoutError as exc:
        raise TargetRefused(f"host {host!r} did not resolve within {within:g} s") from exc
    except OSError as exc:
        raise TargetRefused(f"host {host!r} does not resolve ({exc})") from exc
    # getaddrinfo's sockaddr: (address, port) or (address, port, flow, scope); a scope ("fe80::1%eth0")
    # is dropped: a link-local address is refused anyway.
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


async def resolve(raw: str, *, allow_private: bool, resolve_within: float = 5.0) -> Target:
    """Parse `raw`, resolve its host (within `resolve_within` s) and check every address it resolves
    to; the first one is the address to connect to. With `allow_private` nothing is resolved or checked."""
    url = parse(raw)
    if allow_private:  # any address will do: the name is resolved when a delivery connects
        return Target(url, None)
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _addresses(url.host, port, resolve_within)
    if not addresses:
        raise TargetRefused(f"host {url.host!r} does not resolve")
    refused = [str(a) for a in addresses if not is_public(a)]
    if refused:
        raise TargetRefused(
            "resolves to a private, loopback, link-local or otherwise non-public address "
            f"({', '.join(refused)}); "
            "set HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow such targets"
        )
    return Target(url, str(addresses[0]))

"""Where a webhook may point: http(s) URLs whose host resolves to public addresses only. Private,
loopback, link-local (cloud metadata), shared, reserved and multicast addresses are refused when a
hook is created and again at each delivery, after DNS resolution, unless
`HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true`. A delivery connects to the address it checked (never
resolving the name a second time), so a name that changes its answer cannot reach inside."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
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


def is_public(address: IPAddress) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


async def _addresses(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise TargetRefused(f"host {host!r} does not resolve ({exc})") from exc
    # getaddrinfo's sockaddr: (address, port) or (address, port, flow, scope); a scope ("fe80::1%eth0")
    # is dropped: a link-local address is refused anyway.
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]


async def resolve(raw: str, *, allow_private: bool) -> Target:
    """Parse `raw`, resolve its host and check every address it resolves to; the first one is the
    address to connect to. With `allow_private` nothing is resolved or checked."""
    url = parse(raw)
    if allow_private:  # any address will do: the name is resolved when a delivery connects
        return Target(url, None)
    port = url.port or (443 if url.scheme == "https" else 80)
    addresses = await _addresses(url.host, port)
    if not addresses:
        raise TargetRefused(f"host {url.host!r} does not resolve")
    refused = [str(a) for a in addresses if not is_public(a)]
    if refused:
        raise TargetRefused(
            f"resolves to a private, loopback or link-local address ({', '.join(refused)}); "
            "set HINDSIGHT_WEBHOOK_ALLOW_PRIVATE=true to allow such targets"
        )
    return Target(url, str(addresses[0]))

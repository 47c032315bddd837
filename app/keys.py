"""Composite keys: Redis keys, job dedupe keys and advisory-lock keys built from several ids.

Bank and session ids may contain ':' (and any separator one could pick), so `f"{bank}:{session}"` is
ambiguous: bank `T` session `eu:chat` and bank `T:eu` session `chat` would share a key. Each part is
written length-prefixed instead (`len:part`), a prefix code: two different tuples never give the same
string, whatever characters the ids hold, and the key stays readable in `redis-cli` or `pg_locks`.
"""

from __future__ import annotations


def composite_key(*parts: str) -> str:
    """An unambiguous key for the tuple `parts` (injective over tuples of any length)."""
    return "".join(f"{len(part)}:{part}" for part in parts)

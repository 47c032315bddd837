"""A unit's claims as stored and shown: read from its content and tags once (every way a unit arrives),
kept in full on the row (`memory_units.claims`, every dataclass field, so `load` rebuilds them for
resolution), and shown to users as the contract's `claim` (subject, attribute, value, value_type,
modality). Pure; read by resolution, the API's reads, export/import and the webhook payloads alike."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from app.claims.extract import extract
from app.claims.model import Claim, Value

CONTRACT_KEYS = ("subject", "attribute", "value", "value_type", "modality")
_CLAIM_FIELDS = {f.name for f in dataclasses.fields(Claim)}
_VALUE_FIELDS = {f.name for f in dataclasses.fields(Value)}


def read_claims(content: str, tags: Iterable[str]) -> list[Claim]:
    """The claims `content` states (its tags mark a correction); none for an empty (purged) content."""
    if not content.strip():
        return []
    return extract(content, tags=tuple(tags))


def _dump_value(value: Value | None) -> dict[str, Any] | None:
    return None if value is None else {name: getattr(value, name) for name in sorted(_VALUE_FIELDS)}


def _dump_field(value: Any) -> Any:
    if isinstance(value, Value):
        return _dump_value(value)
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [_dump_field(v) for v in value]
    return value


def dump(claim: Claim) -> dict[str, Any]:
    """A claim in full, as JSON: every field of the dataclass (new ones too), so `load` rebuilds it."""
    return {f: _dump_field(getattr(claim, f)) for f in sorted(_CLAIM_FIELDS)}


def _load_value(data: Any) -> Value | None:
    if not isinstance(data, dict):
        return None
    return Value(**{k: v for k, v in data.items() if k in _VALUE_FIELDS})


def load(data: dict[str, Any]) -> Claim | None:
    """A stored claim rebuilt; None when it cannot be (written by another version, hand-edited)."""
    try:
        fields: dict[str, Any] = {k: v for k, v in data.items() if k in _CLAIM_FIELDS}
        value = _load_value(fields.get("value"))
        if value is None or not isinstance(fields.get("subject"), str):
            return None
        fields["value"] = value
        fields["old_value"] = _load_value(fields.get("old_value"))
        fields["mentions"] = tuple(v for v in map(_load_value, fields.get("mentions") or []) if v)
        fields["qualifier"] = frozenset(fields.get("qualifier") or ())
        fields["topic"] = frozenset(fields.get("topic") or ())
        return Claim(**fields)
    except (TypeError, ValueError):
        return None


def load_all(rows: list[dict[str, Any]] | None) -> list[Claim]:
    return [c for c in (load(r) for r in rows or [] if isinstance(r, dict)) if c is not None]


def main_claim(claims: list[Claim]) -> Claim | None:
    """The claim the unit is mainly about: the first of a known attribute (a head), else the first
    naming an attribute with a typed value, else the first naming one, else the first."""
    ranked = sorted(
        range(len(claims)),
        key=lambda i: (not claims[i].head, claims[i].value.type == "text", not claims[i].attribute, i),
    )
    return claims[ranked[0]] if ranked else None


def columns(claims: list[Claim]) -> dict[str, Any]:
    """The row's claim columns for these claims."""
    main = main_claim(claims)
    return {
        "claims": [dump(c) for c in claims],
        "claim_subject": main.subject if main else None,
        "claim_attribute": (main.attribute or None) if main else None,
    }


def contract_claim(stored: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The API's `claim` of a unit: its main claim, contract keys only."""
    main = main_claim(load_all(stored))
    if main is None:
        return None
    shown = main.as_json()
    return {k: shown[k] for k in CONTRACT_KEYS}

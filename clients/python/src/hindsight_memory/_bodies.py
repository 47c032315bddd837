"""What a request carries: a path segment, the JSON of the values given, a comma list, an event's body."""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

from pydantic_core import to_jsonable_python

from hindsight_memory._models import EventIn


def seg(value: str) -> str:
    """A path segment: ids are slugs, but nothing a caller passes may change the path."""
    return quote(str(value), safe="")


def jsonable(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values that were given (None = left out), as JSON (datetimes as RFC 3339)."""
    out: dict[str, Any] = to_jsonable_python({k: v for k, v in values.items() if v is not None})
    return out


def comma(values: str | Iterable[str] | None) -> str | None:
    if values is None or isinstance(values, str):
        return values
    return ",".join(values)


def event_body(event: EventIn | Mapping[str, Any]) -> dict[str, Any]:
    """An event as sent: with an `external_id` (a new one when the caller gave none), so that the
    same request sent again after a lost reply appends nothing twice."""
    model = event if isinstance(event, EventIn) else EventIn.model_validate(event)
    body = model.model_dump(mode="json", exclude_none=True)
    body.setdefault("external_id", f"hsc-{uuid.uuid4().hex}")
    return body

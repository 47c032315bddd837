"""Shared field types: slugs, text that PostgreSQL can store, aware timestamps, cursors."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Annotated, Any, Self, TypeVar

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints

from app.errors import BadRequest, Invalid

# 1–128 of these characters, not only dots: `.` and `..` are path segments a URL normalises away, so
# a bank or session named so could be created but never reached again from a browser or httpx.
SLUG_PATTERN = r"^[A-Za-z0-9._:-]*[A-Za-z0-9_:-][A-Za-z0-9._:-]*$"
Slug = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=SLUG_PATTERN)]
# Hierarchical dotted tags: "constraint.budget", "preference.food", a bank's own "project.alpha".
TAG_PATTERN = r"^[a-z0-9_]+(?:\.[a-z0-9_]+){0,4}$"
MAX_METADATA_DEPTH = 8
# Seqs are PostgreSQL `integer`: a bigger number in a query parameter is refused here, not by the driver.
MAX_SEQ = 2**31 - 1
EARLIEST, LATEST = datetime(1000, 1, 1, tzinfo=UTC), datetime(9000, 1, 1, tzinfo=UTC)
# A timestamp without an offset is read in the bank's zone later (its `timezone` config): held a day
# inside the range, it lands in it whatever the zone (offsets stay under a day, local mean times included).
NAIVE_MARGIN = timedelta(days=1)
# A unit's valid time is derived from what was said ("the city was founded 1500 years ago"), so it may lie
# before the years a client sends; an import takes back anything kept clear of Python's years 1 and 9999.
DERIVED_EARLIEST, DERIVED_LATEST = datetime(2, 1, 1, tzinfo=UTC), datetime(9999, 1, 1, tzinfo=UTC)


def _check_text(value: str) -> str:
    # PostgreSQL text and jsonb cannot hold NUL; lone surrogates cannot be encoded as UTF-8.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("must be valid Unicode (no lone surrogates)") from exc
    return value


def _check_json(value: Any, depth: int = 0) -> Any:
    if depth > MAX_METADATA_DEPTH:
        raise ValueError(f"must not nest deeper than {MAX_METADATA_DEPTH} levels")
    if isinstance(value, str):
        _check_text(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key)
            _check_json(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_json(item, depth + 1)
    return value


def in_range(value: datetime, earliest: datetime, latest: datetime) -> bool:
    """Whether `value` lies in [earliest, latest), compared in UTC (a naive value a day inside it)."""
    if value.tzinfo is None:
        naive = value.replace(tzinfo=UTC)
        return earliest + NAIVE_MARGIN <= naive < latest - NAIVE_MARGIN
    try:
        return earliest <= value.astimezone(UTC) < latest
    except OverflowError:  # before year 1 or after 9999 once in UTC
        return False


def _check_instant(value: datetime) -> datetime:
    # Far from Python's year 1 and 9999 (the driver stores those as ±infinity, and an offset or a
    # relative date near them overflows), and far enough from anything a memory is about. Checked in
    # UTC, as the database stores and an export writes it: what is accepted here an import takes back.
    if not in_range(value, EARLIEST, LATEST):
        raise ValueError(
            f"must be between {EARLIEST.year} and {LATEST.year - 1} (years, in UTC; "
            "without an offset, a day inside them)"
        )
    return value


def _check_derived_instant(value: datetime) -> datetime:
    if not in_range(value, DERIVED_EARLIEST, DERIVED_LATEST):
        raise ValueError(
            f"must be between {DERIVED_EARLIEST.year} and {DERIVED_LATEST.year - 1} (years, UTC)"
        )
    return value


SafeText = Annotated[str, AfterValidator(_check_text)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_check_json)]
# Timestamps a client sends: RFC 3339 in the years 1000–8999 (aware, or naive = the bank's timezone).
Timestamp = Annotated[datetime, AfterValidator(_check_instant)]


def as_aware(value: datetime, tz: tzinfo) -> datetime:
    """Read a timestamp without an offset in the bank's time zone (its `timezone` config)."""
    return value.replace(tzinfo=tz) if value.tzinfo is None else value


AwareTimestamp = Annotated[AwareDatetime, AfterValidator(_check_instant)]
# A stored timestamp the service derived, not one a client sent: a unit's valid time, as an import reads it.
DerivedTimestamp = Annotated[AwareDatetime, AfterValidator(_check_derived_instant)]


def _described(schema: dict[str, Any], model: type) -> None:
    from app.schemas.glossary import describe

    describe(schema, model)


class Schema(BaseModel):
    # NaN and ±Infinity parse from JSON (Python's json reads them) but no column or JSON reply can hold them.
    # Fields without a description of their own take the glossary's (app/schemas/glossary.py).
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, json_schema_extra=_described)


class ReadSchema(BaseModel):
    model_config = ConfigDict(from_attributes=True, json_schema_extra=_described)

    @classmethod
    def of(cls, row: object, /, **own: Any) -> Self:
        """The schema of `row`: each field is its attribute of the same name, but those given."""
        copied = {name: getattr(row, name) for name in cls.model_fields if name not in own}
        return cls.model_validate(copied | own)


CursorT = TypeVar("CursorT", str, int)
Limit = Annotated[int, Field(ge=1, le=500)]


def encode_cursor(key: str, value: str | int) -> str:
    return base64.urlsafe_b64encode(json.dumps({key: value}).encode()).decode().rstrip("=")


RowT = TypeVar("RowT")


def page_of(
    rows: Sequence[RowT], limit: int, cursor: Callable[[RowT], str]
) -> tuple[Sequence[RowT], str | None]:
    """A page read as `limit + 1` rows, the extra one only saying that another page exists: the page's
    rows and the cursor after its last row (None on the last page)."""
    page = rows[:limit]
    return page, cursor(page[-1]) if len(rows) > limit else None


def cursor_after(
    rows: Sequence[RowT], limit: int, key: str, position: Callable[[RowT], str | int]
) -> str | None:
    """The cursor after a page of `rows` read with `limit`: a full page may have a next one, a short
    one is the last (None)."""
    return encode_cursor(key, position(rows[-1])) if len(rows) == limit else None


def decode_cursor(cursor: str | None, key: str, kind: type[CursorT]) -> CursorT | None:
    """The position a cursor of `encode_cursor(key, ...)` holds; 400 for anything else."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        value = json.loads(base64.urlsafe_b64decode(padded.encode()))[key]
    except (ValueError, UnicodeDecodeError, KeyError, TypeError) as exc:
        raise BadRequest("The cursor is not valid.") from exc
    if type(value) is not kind:
        raise BadRequest("The cursor is not valid.")
    if isinstance(value, int) and not 0 <= value <= MAX_SEQ:
        raise BadRequest("The cursor is not valid.")
    if isinstance(value, str):
        try:
            _check_text(value)
        except ValueError as exc:
            raise BadRequest("The cursor is not valid.") from exc
    return value


def parse_choices(
    raw: str | None, param: str, noun: str, choices: Sequence[str], default: Sequence[str]
) -> list[str]:
    """A comma-separated query parameter (`active,superseded`) → the names given, `default` when it is
    absent; an unknown name (a `noun`), or none at all, is a 422 naming the parameter and the choices."""
    if raw is None:
        return list(default)
    names = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in names if name not in choices]
    if unknown or not names:
        raise Invalid(
            f"`{param}` is a comma-separated list of {', '.join(choices)}.",
            errors=[
                {
                    "loc": ["query", param],
                    "msg": f"unknown {noun} {name!r}" if name else f"at least one {noun} is required",
                    "type": "enum",
                }
                for name in unknown or [""]
            ],
        )
    return names

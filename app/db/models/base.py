from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import DateTime, MetaData, Table, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map = {datetime: DateTime(timezone=True), dict[str, Any]: JSONB}  # noqa: RUF012


def created_at_column() -> Mapped[datetime]:
    return mapped_column(server_default=func.now())


def table_of(model: type[Base]) -> Table:
    """The model's table. The many-row writes are Core inserts executed with a list of rows (compiled
    once, sent as multi-row VALUES), the rows keyed by column name (`metadata`, not `metadata_`)."""
    return cast(Table, model.__table__)

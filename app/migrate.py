"""Run Alembic migrations programmatically (CLI, dev supervisor, tests)."""

from __future__ import annotations

import logging
from pathlib import Path

# Alembic logs every plugin it sets up, at import, at INFO (seven lines): noise, whatever the caller.
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)

from alembic.config import Config  # noqa: E402 (after the logger is quieted)

from alembic import command  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def alembic_config(database_url: str) -> Config:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logger"] = False
    return config


def upgrade(database_url: str, revision: str = "head", *, quiet: bool = False) -> None:
    """`quiet`: no INFO lines from Alembic (`hindsight dev`; `hindsight migrate` says what it ran)."""
    migration = logging.getLogger("alembic.runtime.migration")
    level = migration.level
    if quiet:
        migration.setLevel(logging.WARNING)
    try:
        command.upgrade(alembic_config(database_url), revision)
    finally:
        migration.setLevel(level)


def downgrade(database_url: str, revision: str) -> None:
    command.downgrade(alembic_config(database_url), revision)

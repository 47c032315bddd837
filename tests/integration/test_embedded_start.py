"""The embedded stack's start failures are one clear line, never a traceback with the reason swallowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.embedded import start_postgres


def test_a_half_made_database_folder_says_what_initdb_said_and_the_way_out(tmp_path: Path) -> None:
    pgdata = tmp_path / "pgdata"  # what a first start interrupted during initdb leaves behind
    pgdata.mkdir()
    (pgdata / "global").mkdir()
    with pytest.raises(RuntimeError, match=r"initdb could not create .* not empty.*remove that folder"):
        start_postgres(pgdata, timeout=10)

from __future__ import annotations

import pytest

from app.errors import BadRequest
from app.schemas.common import decode_cursor, encode_cursor


def test_cursor_round_trip() -> None:
    assert decode_cursor(encode_cursor("seq", 42), "seq", int) == 42
    assert decode_cursor(encode_cursor("id", "bank-1"), "id", str) == "bank-1"
    assert decode_cursor(None, "id", str) is None


@pytest.mark.parametrize("cursor", ["%%%", "e30", encode_cursor("id", "x"), encode_cursor("seq", "7")])
def test_foreign_cursors_are_bad_requests(cursor: str) -> None:
    with pytest.raises(BadRequest):
        decode_cursor(cursor, "seq", int)

"""An import gives every unit a new id and rewrites each reference to one: besides the chain's fields,
those a unit's metadata holds (the unit a residual was split from, a task episode's links) and those a
history row's details hold."""

from __future__ import annotations

import uuid
from typing import Any

from app.portability.import_ import UNIT_REFERENCES_IN_DETAILS, UNIT_REFERENCES_IN_METADATA, Importer


def test_ids_in_metadata_and_history_details_are_rewritten_and_the_rest_left_as_written() -> None:
    importer = Importer(db=None, bank_id="copy")  # type: ignore[arg-type]  # (remapping reads no database)
    old, other = uuid.uuid4(), uuid.uuid4()
    new = str(importer.new_id(old))
    metadata: dict[str, Any] = {"links": [str(old), "not-an-id", 7], "split_from": str(old)}
    metadata["note"] = str(other)
    assert importer.remapped(metadata, UNIT_REFERENCES_IN_METADATA) == {
        "links": [new, "not-an-id", 7],
        "split_from": new,
        "note": str(other),  # not a reference to a unit: left as written
    }
    details = {"split_from": str(old), "to": "active"}
    assert importer.remapped(details, UNIT_REFERENCES_IN_DETAILS) == {"split_from": new, "to": "active"}
    assert metadata["split_from"] == str(old)  # the line's own values are not changed

"""The MCP tools' arguments: flat schemas (no anyOf/oneOf/$ref, one level of nesting at most, unknown
arguments refused), read leniently as models send them ("5" → 5, a bare or JSON-encoded string for a list)."""

from __future__ import annotations

import json
import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from app.schemas.common import TAG_PATTERN, SafeText, Slug
from app.schemas.memories import Content, Score


def _listify(value: Any) -> Any:
    """Models often send a list as a JSON string, or one tag as a bare string: accept both."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                return json.loads(text)
            except ValueError:
                return value
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


Tag = Annotated[str, Field(pattern=TAG_PATTERN)]
TAGS_HELP = (
    "Dotted kinds: fact, preference, constraint, task_state, correction, episode, or a child such as "
    "constraint.budget or preference.food."
)
BANK_HELP = "The memory bank. Leave out with a bank key (its own bank); the admin key must give it."


class ToolArguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteArguments(ToolArguments):
    content: Content = Field(description='One self-contained sentence, e.g. "Ana\'s budget is 5000 EUR."')
    tags: Annotated[list[Tag], BeforeValidator(_listify)] = Field(
        min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1; default 0.5.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class QueryArguments(ToolArguments):
    query: SafeText = Field(
        min_length=1, max_length=2000, description="What you want to know, in plain words."
    )
    top_k: int | None = Field(
        default=None, ge=1, le=100, description="At most this many memories; default 10."
    )
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, max_length=50, description="Only memories under these tag prefixes, e.g. constraint."
    )
    session_id: Slug | None = Field(
        default=None, description="The current session: its recent turns not yet distilled are added."
    )
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class QueryV2Arguments(QueryArguments):
    context_why: bool | None = Field(
        default=None, description="Also put each memory's why sentence in the context text; default false."
    )


class UpdateArguments(ToolArguments):
    memory_id: uuid.UUID = Field(description="The id of an active memory, from memory_query.")
    content: Content | None = Field(default=None, description="The corrected sentence.")
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1.")
    confidence: Score | None = Field(default=None, description="0 to 1.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ForgetArguments(ToolArguments):
    memory_id: uuid.UUID = Field(description="The id of the memory to forget, from memory_query.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ReflectArguments(ToolArguments):
    session_id: Slug = Field(description="The session whose conversation turns to distil now.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ProfileArguments(ToolArguments):
    entity: SafeText | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="A person, place, product or id by name; leave out for the user's own profile.",
    )
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ProposalsArguments(ToolArguments):
    limit: int | None = Field(default=None, ge=1, le=100, description="At most this many; default 20.")
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


class ReviewArguments(ToolArguments):
    memory_id: uuid.UUID = Field(description="The id of a proposed memory, from memory_proposals.")
    decision: Literal["accept", "reject"] = Field(description="accept or reject.")
    reason: SafeText | None = Field(
        default=None, min_length=1, max_length=1000, description="Why; kept in the memory's history."
    )
    bank_id: Slug | None = Field(default=None, description=BANK_HELP)


def flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with optional fields as their plain type (no anyOf with null, no null
    default), no titles, no unknown properties: what every MCP client and model handles."""
    schema = model.model_json_schema()
    if "$defs" in schema:
        raise ValueError(f"{model.__name__} is not flat")
    properties: dict[str, Any] = {}
    for name, raw in schema["properties"].items():
        prop = {k: v for k, v in raw.items() if k != "title"}
        variants = prop.pop("anyOf", None)
        if variants is not None:
            [kept] = [v for v in variants if v.get("type") != "null"]
            prop = {**kept, **prop}
        if "default" in prop and prop["default"] is None:
            del prop["default"]
        properties[name] = prop
    flat: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if schema.get("required"):
        flat["required"] = list(schema["required"])
    return flat

"""The five memory tools of the MCP server (app/mcp/server.py) — names, descriptions, flat arguments
and the text results a model reads — for agent frameworks, over this client. `bank_id` is bound by
`memory_tools(hs, bank_id)` instead of being an argument. Each tool is a plan (see `_plans`), so the
framework adapters run it on a `Hindsight` or an `AsyncHindsight` alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from hindsight_memory._async_client import AsyncHindsight
from hindsight_memory._client import Hindsight
from hindsight_memory._errors import APIConnectionError, APIError
from hindsight_memory._models import Memory, QueryResult
from hindsight_memory._operations import Operations
from hindsight_memory._plans import Plan

TAG_PATTERN = r"^[a-z0-9_]+(?:\.[a-z0-9_]+){0,4}$"
SLUG_PATTERN = r"^[A-Za-z0-9._:-]*[A-Za-z0-9_:-][A-Za-z0-9._:-]*$"  # the server's: not only dots
TAGS_HELP = (
    "Dotted kinds: fact, preference, constraint, task_state, correction, episode, or a child such as "
    "constraint.budget or preference.food."
)
Tag = Annotated[str, Field(pattern=TAG_PATTERN)]
Content = Annotated[str, Field(min_length=1, max_length=4000)]
Score = Annotated[float, Field(ge=0, le=1)]


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


class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class WriteArguments(_Arguments):
    content: Content = Field(description='One self-contained sentence, e.g. "Ana\'s budget is 5000 EUR."')
    tags: Annotated[list[Tag], BeforeValidator(_listify)] = Field(
        min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1; default 0.5.")


class QueryArguments(_Arguments):
    query: str = Field(min_length=1, max_length=2000, description="What you want to know, in plain words.")
    top_k: int | None = Field(
        default=None, ge=1, le=100, description="At most this many memories; default 10."
    )
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, max_length=50, description="Only memories under these tag prefixes, e.g. constraint."
    )
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        pattern=SLUG_PATTERN,
        description="The current session: its recent turns not yet distilled are added.",
    )


class UpdateArguments(_Arguments):
    memory_id: str = Field(
        description="The id of an active memory, from memory_query.", json_schema_extra={"format": "uuid"}
    )
    content: Content | None = Field(default=None, description="The corrected sentence.")
    tags: Annotated[list[Tag] | None, BeforeValidator(_listify)] = Field(
        default=None, min_length=1, max_length=16, description=TAGS_HELP
    )
    importance: Score | None = Field(default=None, description="0 to 1.")
    confidence: Score | None = Field(default=None, description="0 to 1.")


class ForgetArguments(_Arguments):
    memory_id: str = Field(
        description="The id of the memory to forget, from memory_query.", json_schema_extra={"format": "uuid"}
    )


class ReflectArguments(_Arguments):
    session_id: str = Field(
        min_length=1,
        max_length=128,
        pattern=SLUG_PATTERN,
        description="The session whose conversation turns to distil now.",
    )


def flat_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The arguments' JSON schema as MCP lists it: optional fields as their plain type (no anyOf with
    null, no null default), no titles, no unknown properties."""
    schema = model.model_json_schema()
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


# --- results (the text the model reads, as the MCP tools write it) ---------------------------------------

# (as the MCP tools show a unit)
UNIT_FIELDS = tuple(
    "id content tags status confidence importance supersedes superseded_by merged_into created_at "
    "claim agent_id".split()
)


def unit_text(memory: Memory) -> str:
    data = memory.model_dump(mode="json", include=set(UNIT_FIELDS))
    return json.dumps({k: data.get(k) for k in UNIT_FIELDS}, ensure_ascii=False)


def query_text(result: QueryResult) -> str:
    lines = [result.context.strip() or "No stored memory matches."]
    if result.memories:
        lines += ["", "Memory ids (for memory_update / memory_forget):"]
        lines += [f"- {m.id}: {m.content}" for m in result.memories]
    if result.working_memory:
        lines += ["", "Recent turns of this session, not yet distilled:"]
        lines += [f"- {t.speaker or t.role}: {t.content}" for t in result.working_memory]
    return "\n".join(lines)


# --- the tools -------------------------------------------------------------------------------------------

Runner = Callable[[Operations, str, Any], Plan[str]]


def _write(ops: Operations, bank_id: str, args: WriteArguments) -> Plan[str]:
    fields = {"importance": args.importance} if args.importance is not None else {}
    unit = yield from ops.write_memory(bank_id, args.content, args.tags, wait=True, **fields)
    return unit_text(unit)


def _query(ops: Operations, bank_id: str, args: QueryArguments) -> Plan[str]:
    options = {"top_k": args.top_k, "tags": args.tags, "session_id": args.session_id}
    options["working_memory"] = args.session_id is not None
    return query_text((yield from ops.query(bank_id, args.query, **options)))


def _update(ops: Operations, bank_id: str, args: UpdateArguments) -> Plan[str]:
    changes = args.model_dump(include={"content", "tags", "importance", "confidence"}, exclude_none=True)
    if not changes:
        raise ValueError("give at least one of content, tags, confidence, importance")
    return unit_text((yield from ops.update_memory(bank_id, args.memory_id, **changes)))


def _forget(ops: Operations, bank_id: str, args: ForgetArguments) -> Plan[str]:
    return unit_text((yield from ops.forget_memory(bank_id, args.memory_id)))


def _reflect(ops: Operations, bank_id: str, args: ReflectArguments) -> Plan[str]:
    job = yield from ops.distill_session(bank_id, args.session_id)
    return json.dumps({"job_id": job.id, "session_id": args.session_id, "status": job.status})


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    arguments: type[_Arguments]
    runner: Runner

    @property
    def parameters(self) -> dict[str, Any]:
        return flat_schema(self.arguments)

    def plan(self, ops: Operations, bank_id: str, arguments: dict[str, Any]) -> Plan[str]:
        """The tool's result text; a failure (bad arguments, an API error, the service unreachable)
        becomes a text the model can read and act on, as the MCP tools answer."""
        try:
            args = self.arguments.model_validate(arguments)
            return (yield from self.runner(ops, bank_id, args))
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()
            ]
            return "Invalid arguments: " + "; ".join(problems)
        except ValueError as exc:
            return f"Invalid arguments: {exc}"
        except APIError as exc:
            return f"{exc.title} ({exc.status}): {exc.detail}"
        except APIConnectionError as exc:
            return f"Service Unavailable: Hindsight could not be reached ({exc}); retry shortly."


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "memory_write",
        "Call when the user states a lasting fact, preference, constraint or decision worth recalling in "
        "later sessions. One sentence per call.",
        WriteArguments,
        _write,
    ),
    ToolSpec(
        "memory_query",
        "Call before answering anything that may depend on the user's facts, preferences or earlier "
        "sessions. Returns a prompt-ready context and memory ids.",
        QueryArguments,
        _query,
    ),
    ToolSpec(
        "memory_update",
        "Call when a memory returned by memory_query is wrong or out of date, to correct it by id. The "
        "old version stays in its history.",
        UpdateArguments,
        _update,
    ),
    ToolSpec(
        "memory_forget",
        "Call when the user asks you to forget something, or a memory (by id from memory_query) must no "
        "longer be recalled.",
        ForgetArguments,
        _forget,
    ),
    ToolSpec(
        "memory_reflect",
        "Call at the end of a task or conversation to distil its turns (session_id) into memories now. "
        "Returns the job id.",
        ReflectArguments,
        _reflect,
    ),
)

Client = Hindsight | AsyncHindsight

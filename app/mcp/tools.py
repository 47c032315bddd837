"""The MCP tools: each a thin call into the same service function as its REST route (write-and-resolve,
query, update, forget, reflect, profile), its result shaped for a model to read. Every failure is a tool
result with `isError`, never a protocol error or a 500.

Tools are versioned by name: each input schema is pinned (tests/mcp_tool_schemas.json); an incompatible
change ships as `<tool>_v2` beside the old tool, which stays, marked deprecated in its description and its
`_meta`, until the date its `Deprecation` names (at least DEPRECATION_WINDOW_DAYS after the new one)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from mcp.types import CallToolResult, Tool, ToolAnnotations
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError

from app.banks.service import Principal
from app.distill import entry as distill
from app.errors import AppError, database_unavailable, transient_conflict
from app.mcp import review
from app.mcp.arguments import (
    ForgetArguments,
    ProfileArguments,
    ProposalsArguments,
    QueryArguments,
    QueryV2Arguments,
    ReflectArguments,
    ReviewArguments,
    ToolArguments,
    UpdateArguments,
    WriteArguments,
    flat_schema,
)
from app.mcp.calls import actor, error_result
from app.mcp.calls import bank_for as _bank
from app.mcp.calls import result as _result
from app.mcp.query_v2 import output_schema, query_v2_result
from app.memory import reads
from app.memory import service as memory
from app.memory.write import Writer
from app.pages import service as pages
from app.query import service as query_service
from app.schemas.memories import MemoryCreate, MemoryPatch, MemoryRead
from app.schemas.query import QueryRequest, QueryResult
from app.services import Services

log = logging.getLogger(__name__)


# --- results ---------------------------------------------------------------------------------------------


# A unit as the tools show it: its identity, content, chain and claim, and the agent that wrote it
UNIT_FIELDS = set(
    "id content tags status confidence importance supersedes superseded_by merged_into created_at".split()
) | {"claim", "agent_id"}


def _unit(model: MemoryRead) -> dict[str, Any]:
    return model.model_dump(mode="json", include=UNIT_FIELDS)


def _query_result(result: QueryResult) -> CallToolResult:
    memories = [{**_unit(m), "score": round(m.score, 4)} for m in result.memories]
    turns = [
        t.model_dump(mode="json", include={"seq", "role", "speaker", "content"})
        for t in result.working_memory
    ]
    data: dict[str, Any] = {
        "context": result.context,
        "ids": [m["id"] for m in memories],
        "memories": memories,
        "working_memory": turns,
    }
    lines = [result.context.strip() or "No stored memory matches."]
    if memories:
        lines += ["", "Memory ids (for memory_update / memory_forget):"]
        lines += [f"- {m['id']}: {m['content']}" for m in memories]
    if turns:
        lines += ["", "Recent turns of this session, not yet distilled:"]
        lines += [f"- {t['speaker'] or t['role']}: {t['content']}" for t in turns]
    return _result(data, "\n".join(lines))


# --- tools -----------------------------------------------------------------------------------------------


# Shared memory: a propose-only key writes proposals (docs/guides/shared-memory.md).
CONTRIBUTE = ("write", "propose")


def writer(principal: Principal) -> Writer:
    return Writer.direct(actor(principal), distill.statement_graph, principal.agent_id)


async def memory_write(s: Services, principal: Principal, args: WriteArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/memories?wait=true: stored, then resolved in the call."""
    body = MemoryCreate.model_validate(
        args.model_dump(include={"content", "tags", "importance"}, exclude_none=True)
    )
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, CONTRIBUTE)
        unit, _ = await memory.write(
            db,
            s.embedder,
            s.settings,
            bank,
            body,
            writer(principal),
            wait=True,
            propose=principal.proposes_only,
        )
        return _result(_unit(await reads.read_model(db, unit)))


async def _query(s: Services, principal: Principal, args: QueryArguments, **extra: Any) -> QueryResult:
    """POST /v1/banks/{bank_id}/query, with working memory when a session is named."""
    request = QueryRequest.model_validate(
        {
            **args.model_dump(include={"query", "top_k", "tags", "session_id"}, exclude_none=True),
            "working_memory": args.session_id is not None,
            **extra,
        }
    )
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, "read")
        async with s.read_session(db) as reads:
            return await query_service.query(reads, s, bank, request)


async def memory_query(s: Services, principal: Principal, args: QueryArguments) -> CallToolResult:
    """v1 (deprecated): the context and each memory's id, content and claim."""
    return _query_result(await _query(s, principal, args))


async def memory_query_v2(s: Services, principal: Principal, args: QueryV2Arguments) -> CallToolResult:
    """v2: the context and the structured memories (claim, dates, score, why)."""
    return query_v2_result(await _query(s, principal, args, context_why=bool(args.context_why)))


async def memory_update(s: Services, principal: Principal, args: UpdateArguments) -> CallToolResult:
    """PATCH /v1/banks/{bank_id}/memories/{id}: a new unit supersedes the old one."""
    patch = MemoryPatch.model_validate(
        args.model_dump(include={"content", "tags", "importance", "confidence"}, exclude_none=True)
    )
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, CONTRIBUTE)
        unit = await memory.update(
            db, s.embedder, bank, args.memory_id, patch, writer(principal), propose=principal.proposes_only
        )
        return _result(_unit(await reads.read_model(db, unit)))


async def memory_forget(s: Services, principal: Principal, args: ForgetArguments) -> CallToolResult:
    """DELETE /v1/banks/{bank_id}/memories/{id}: by the bank's forgetting policy (never a purge)."""
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, "write")
        unit = await memory.forget(db, bank, args.memory_id, actor(principal), agent_id=principal.agent_id)
        return _result(_unit(await reads.read_model(db, unit)))


async def memory_reflect(s: Services, principal: Principal, args: ReflectArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/sessions/{session_id}/distill: the job, sent after commit."""
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, CONTRIBUTE)
        job = await distill.reflect(db, bank, args.session_id)
        return _result({"job_id": str(job.id), "session_id": args.session_id, "status": job.status})


async def memory_profile(s: Services, principal: Principal, args: ProfileArguments) -> CallToolResult:
    """GET /v1/banks/{bank_id}/profile, or the page of the entity named: read only."""
    async with s.session() as db:
        bank = await _bank(db, principal, args.bank_id, "read")
        async with s.read_session(db) as reads:
            page = await pages.profile(reads, bank, args.entity)
        return _result(page.model_dump(mode="json"), page.markdown)


Handler = Callable[[Services, Principal, Any], Awaitable[CallToolResult]]


# An old version stays at least this long after its successor ships (docs/guides/rerank-and-why.md).
DEPRECATION_WINDOW_DAYS = 180
DEPRECATED = "io.hindsight/deprecated"  # the `_meta` key of a deprecated tool


@dataclass(frozen=True)
class Deprecation:
    replaced_by: str
    since: date
    until: date  # removed no earlier than this

    def note(self) -> str:
        return f" Deprecated: use {self.replaced_by} (this version stays until {self.until.isoformat()})."


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str  # when to call it; a deprecated tool's listing appends its deprecation note
    arguments: type[ToolArguments]
    handler: Handler
    annotations: ToolAnnotations
    deprecation: Deprecation | None = None
    output: dict[str, Any] | None = None  # the structured result's JSON schema, when declared

    def tool(self) -> Tool:
        meta = None
        if self.deprecation is not None:
            d = self.deprecation
            meta = {DEPRECATED: {"replaced_by": d.replaced_by, "since": str(d.since), "until": str(d.until)}}
        return Tool(
            name=self.name,
            description=self.description + (self.deprecation.note() if self.deprecation else ""),
            input_schema=flat_schema(self.arguments),
            output_schema=self.output,
            annotations=self.annotations,
            _meta=meta,
        )


def _hints(title: str, *, read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """All four hints spelled out (the spec's defaults are destructive and open-world)."""
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "memory_write",
            "Call when the user states a lasting fact, preference, constraint or decision worth recalling in "
            "later sessions. One sentence per call.",
            WriteArguments,
            memory_write,
            _hints("Remember", read_only=False, destructive=False, idempotent=False),
        ),
        ToolSpec(
            "memory_query",
            "Call before answering anything that may depend on the user's facts, preferences or earlier "
            "sessions. Returns a prompt-ready context and memory ids.",
            QueryArguments,
            memory_query,
            _hints("Recall", read_only=True, destructive=False, idempotent=True),
            deprecation=Deprecation("memory_query_v2", since=date(2026, 12, 2), until=date(2027, 6, 30)),
        ),
        ToolSpec(
            "memory_query_v2",
            "Call before answering anything that may depend on the user's facts, preferences or earlier "
            "sessions. Returns a prompt-ready context and each memory's claim, dates and why.",
            QueryV2Arguments,
            memory_query_v2,
            _hints("Recall", read_only=True, destructive=False, idempotent=True),
            output=output_schema(),
        ),
        ToolSpec(
            "memory_update",
            "Call when a memory returned by memory_query is wrong or out of date, to correct it by id. The "
            "old version stays in its history.",
            UpdateArguments,
            memory_update,
            _hints("Correct a memory", read_only=False, destructive=False, idempotent=False),
        ),
        ToolSpec(
            "memory_forget",
            "Call when the user asks you to forget something, or a memory (by id from memory_query) must no "
            "longer be recalled.",
            ForgetArguments,
            memory_forget,
            _hints("Forget", read_only=False, destructive=True, idempotent=True),
        ),
        ToolSpec(
            "memory_reflect",
            "Call at the end of a task or conversation to distil its turns (session_id) into memories now. "
            "Returns the job id.",
            ReflectArguments,
            memory_reflect,
            _hints("Reflect", read_only=False, destructive=False, idempotent=True),
        ),
        ToolSpec(
            "memory_profile",
            "Call to see everything known now about the user (or a named entity) as one page of current "
            "facts, preferences and constraints, each with its memory id.",
            ProfileArguments,
            memory_profile,
            _hints("Profile", read_only=True, destructive=False, idempotent=True),
        ),
        ToolSpec(
            "memory_proposals",
            "Call to see the memories other agents proposed that wait for a review (accept or reject them "
            "with memory_review).",
            ProposalsArguments,
            review.memory_proposals,
            _hints("Proposals", read_only=True, destructive=False, idempotent=True),
        ),
        ToolSpec(
            "memory_review",
            "Call to accept or reject a proposed memory by id (from memory_proposals). Accepted, it is "
            "resolved against what the bank knows; rejected, it is never recalled. Needs the review scope.",
            ReviewArguments,
            review.memory_review,
            _hints("Review a proposal", read_only=False, destructive=False, idempotent=False),
        ),
    )
}


def _invalid(exc: ValidationError) -> str:
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
    ]
    return "Invalid arguments: " + "; ".join(problems)


async def call_tool(
    services: Services, principal: Principal, name: str, arguments: Mapping[str, Any]
) -> CallToolResult:
    """Run one tool; every failure becomes an error result the model can read and act on."""
    spec = TOOLS.get(name)
    if spec is None:
        return error_result(f"Unknown tool {name!r}; the tools are {', '.join(TOOLS)}.")
    try:
        args = spec.arguments.model_validate(dict(arguments))
        return await spec.handler(services, principal, args)
    except ValidationError as exc:
        return error_result(_invalid(exc))
    except AppError as exc:
        return error_result(f"{exc.title} ({exc.status}): {exc.message}")
    except (DBAPIError, OSError) as exc:
        # As the REST routes answer them: PostgreSQL away, or the statement cancelled for a conflict
        # (a hot standby's recovery, a deadlock), is a 503 to retry; any other database error a 500.
        if isinstance(exc, DBAPIError) and not (database_unavailable(exc) or transient_conflict(exc)):
            return _internal(name)
        log.warning("MCP tool %s: backing service unavailable: %s", name, exc)
        return error_result("Service Unavailable (503): a backing service is unavailable; retry shortly.")
    except Exception:
        return _internal(name)


def _internal(name: str) -> CallToolResult:
    log.exception("MCP tool %s failed", name)
    return error_result("Internal error (500): the call failed; the server log has the details.")

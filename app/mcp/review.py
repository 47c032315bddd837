"""The MCP tools of shared memory (docs/guides/shared-memory.md): the proposals waiting for a review,
and accepting or rejecting one; thin over the same services as `GET …/memories?status=proposed` and
`POST …/memories/{id}/accept|reject`."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult

from app.banks.service import Principal
from app.mcp.arguments import ProposalsArguments, ReviewArguments
from app.mcp.calls import actor, bank_for, result
from app.memory import reads
from app.memory import review as reviews
from app.schemas.memories import MemoryRead
from app.services import Services

DEFAULT_PROPOSALS = 20


def _proposal(model: MemoryRead) -> dict[str, Any]:
    return model.model_dump(
        mode="json",
        include={"id", "content", "tags", "status", "agent_id", "proposed_update_of", "created_at", "claim"},
    )


async def memory_proposals(s: Services, principal: Principal, args: ProposalsArguments) -> CallToolResult:
    """GET /v1/banks/{bank_id}/memories?status=proposed: newest first."""
    async with s.session() as db:
        bank = await bank_for(db, principal, args.bank_id, ("read", "review"))
        async with s.read_session(db) as read:
            page = await reads.list_page(
                read, bank, statuses=["proposed"], limit=args.limit or DEFAULT_PROPOSALS
            )
    proposals = [_proposal(m) for m in page.memories]
    lines = [f"- {p['id']} ({p['agent_id'] or 'no agent'}): {p['content']}" for p in proposals]
    text = "\n".join(["Proposed memories waiting for a review:", *lines]) if lines else "Nothing to review."
    return result({"proposals": proposals}, text)


async def memory_review(s: Services, principal: Principal, args: ReviewArguments) -> CallToolResult:
    """POST /v1/banks/{bank_id}/memories/{id}/accept or /reject."""
    async with s.session() as db:
        bank = await bank_for(db, principal, args.bank_id, "review")
        if args.decision == "accept":
            unit = await reviews.accept(
                db,
                s.embedder,
                s.settings,
                bank,
                args.memory_id,
                actor(principal),
                agent_id=principal.agent_id,
                reason=args.reason,
            )
        else:
            unit = await reviews.reject(
                db, bank, args.memory_id, actor(principal), agent_id=principal.agent_id, reason=args.reason
            )
        return result(_proposal(await reads.read_model(db, unit)))

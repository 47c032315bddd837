"""What every MCP tool does around its service call: find the bank the caller may act on, name the
actor for the history, and shape the result (structured content and a text a model reads)."""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from sqlalchemy.ext.asyncio import AsyncSession

from app.banks import service as banks
from app.banks.config import ConfiguredBank
from app.banks.service import Principal
from app.errors import Invalid


def result(data: dict[str, Any], text: str | None = None) -> CallToolResult:
    body = text if text is not None else json.dumps(data, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=body)], structured_content=data)


def error_result(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def actor(principal: Principal) -> str:
    return "mcp:admin" if principal.is_admin else f"mcp:key:{principal.key_id}"


async def bank_for(
    db: AsyncSession, principal: Principal, bank_id: str | None, scope: str | tuple[str, ...]
) -> ConfiguredBank:
    """The bank named, or the key's own; another bank's answers "not found", as in the REST API."""
    if bank_id is None:
        if principal.bank_id is None:
            raise Invalid("bank_id is required with the admin key.")
        bank_id = principal.bank_id
    return await banks.authorized_bank(db, principal, bank_id, scope)

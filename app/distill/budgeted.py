"""Which distiller runs a batch of a bank: the one asked for (the configured one by default), on the
bank's own model when it set one, unless it is the LLM's and a daily budget is spent — then the heuristic
distiller runs the batch instead, so every turn is still distilled, and the job says why."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.banks.config import ConfiguredBank
from app.distill.llm import LLMDistiller
from app.distill.store import DistillRuntime
from app.distill.types import Distiller


class ReplayOverBudget(Exception):
    """A replay with the LLM distiller while the bank's LLM budget is spent: it would replace the bank's
    units with the heuristic distiller's, so it does not run (the job fails saying when to retry)."""


async def choose(
    db: AsyncSession, runtime: DistillRuntime, bank: ConfiguredBank, name: str | None
) -> tuple[Distiller, dict[str, Any] | None]:
    """(the distiller for the bank's next batch, why it is not the one asked for, or None)."""
    distiller = runtime.distiller(name)
    if not isinstance(distiller, LLMDistiller):
        return distiller, None
    status = await runtime.budget.exhausted(db, bank.id, bank.config, "distill")
    if status is not None:
        fallback = runtime.distiller("heuristic")
        return fallback, {**status.reason(), "instead_of": distiller.version, "distiller": fallback.version}
    model = bank.config.llm_model("distill")
    return (distiller.with_model(model) if model else distiller), None


async def choose_for_replay(
    db: AsyncSession, runtime: DistillRuntime, bank: ConfiguredBank, name: str | None
) -> Distiller:
    """`choose` for a replay, which never falls back (ReplayOverBudget instead)."""
    distiller, fallback = await choose(db, runtime, bank, name)
    if fallback is not None:
        raise ReplayOverBudget(
            f"the bank's LLM budget ({fallback['budget']}) is spent until {fallback['resets_at']}; "
            "replay after that, or with the heuristic distiller"
        )
    return distiller

"""The older conflict rules (`app.resolve.conflicts`) beside the claims: a hedge never replaces a firm
value by any of them, while the seeds' conditional budget still fills its slot."""

from __future__ import annotations

from app.db.models import MemoryUnit
from app.resolve.conflicts import Facts, Neighbour, conflict_reason


def unit(content: str, confidence: float) -> MemoryUnit:
    return MemoryUnit(content=content, tags=["constraint.budget"], confidence=confidence)


def test_a_hedged_budget_never_fills_the_slot_of_a_firm_one() -> None:
    firm = Neighbour(unit("The user's budget for the sofa is 900 euros.", 0.9), 0.7, Facts())
    hedged = unit("If there is a sale the user might consider going to 1300.", 0.68)
    assert conflict_reason(hedged, Facts(), firm, claimed=1) is None


def test_a_conditional_budget_still_fills_its_slot() -> None:
    firm = Neighbour(unit("用户想买一台笔记本电脑，预算是5000元。", 0.9), 0.7, Facts())
    raised = unit("如果配置能升级的话，可以到8000。", 0.68)
    assert conflict_reason(raised, Facts(), firm, claimed=1) == "single-valued tag"

"""The checks of one run of a case, on what the service holds after it: the active units' contents and
the units its question ranks, best first. Values are matched by `suite.holds`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from bench.truth.suite import Case, holds


@dataclass(frozen=True)
class Outcome:
    """One case in one mode. For a change: `stale_gone` and `top_current` (both: superseded right);
    for a negative: `false_supersede` (a still-true value left the active set), `new_kept` and
    `answered` (the question's first unit holds the still-true value); `kept_lost` counts still-true
    values that left the active set in either."""

    case_id: str
    split: str
    lang: str
    domain: str
    kind: str
    mode: str
    negative: bool
    stale_gone: bool
    top_current: bool
    kept_lost: int
    new_kept: bool
    answered: bool
    error: str | None = None
    # What the service held (active contents, the question's answer): for dev failures only, never
    # printed or written for a holdout case.
    seen: dict[str, list[str]] | None = field(default=None, compare=False)
    ended: list[str] = field(default_factory=list, compare=False)

    @property
    def superseded_right(self) -> bool:
        return not self.negative and self.error is None and self.stale_gone and self.top_current

    @property
    def false_supersede(self) -> bool:
        return self.negative and self.kept_lost > 0

    @property
    def passed(self) -> bool:
        """Superseded right (a change), or nothing still true lost (a negative)."""
        return self.superseded_right if not self.negative else not self.false_supersede and not self.error

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "superseded_right": self.superseded_right,
            "false_supersede": self.false_supersede,
        }


def _active(active: list[str], value: str) -> bool:
    return any(holds(content, value) for content in active)


def stale_still_active(case: Case, active: list[str]) -> list[str]:
    """The stale values some active unit still states. A unit that also holds a current value is the
    change statement itself ("moved from Tuesdays to Wednesdays"), which rightly names the old value."""
    return [
        value
        for value in case.stale
        if any(holds(c, value) and not any(holds(c, cur) for cur in case.current) for c in active)
    ]


def _identity(case: Case, mode: str) -> dict[str, Any]:
    """Name the case and the mode an outcome is of: the fields every outcome opens with."""
    return {
        "case_id": case.id,
        "split": case.split,
        "lang": case.lang,
        "domain": case.domain,
        "kind": case.kind,
        "mode": mode,
        "negative": case.negative,
    }


def check(
    case: Case, mode: str, active: list[str], ranked: list[str], ended: list[str] | None = None
) -> Outcome:
    """The outcome of `case` run in `mode`: `active` the bank's active contents, `ranked` the
    question's answer, best first, `ended` why resolution ended what it ended."""
    top = ranked[0] if ranked else ""
    return Outcome(
        **_identity(case, mode),
        stale_gone=not stale_still_active(case, active),
        # a retirement with no successor: the answer must not lead with what ended
        top_current=any(holds(top, v) for v in case.current)
        if case.current
        else not any(holds(top, v) for v in case.stale),
        kept_lost=sum(not _active(active, v) for v in case.keep),
        new_kept=all(_active(active, v) for v in case.current),
        answered=any(holds(top, v) for v in case.keep),
        seen={"active": active, "ranked": ranked},
        ended=ended or [],
    )


def failed(case: Case, mode: str, error: str) -> Outcome:
    """A run that did not finish (a job failed, a timeout): counted as a failure of its kind."""
    return Outcome(
        **_identity(case, mode),
        stale_gone=False,
        top_current=False,
        kept_lost=len(case.keep),
        new_kept=False,
        answered=False,
        error=error,
    )

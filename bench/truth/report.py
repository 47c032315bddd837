"""The run's figures: per half (dev / holdout) × language × mode, counts and the table; the failures
of the dev half for `--show-failures` (a holdout case's text is never printed)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from bench.truth.check import Outcome
from bench.truth.suite import CHANGE_KINDS, MODES, Case

HALVES = ("dev", "holdout")
LANGS = ("en", "zh")


def figures(outcomes: Iterable[Outcome]) -> dict[str, Any]:
    """The counts of one group of outcomes."""
    rows = list(outcomes)
    changes = [o for o in rows if not o.negative]
    negatives = [o for o in rows if o.negative]
    partial = [o for o in changes if o.kind == "partial"]
    return {
        "changes": len(changes),
        "superseded_right": sum(o.superseded_right for o in changes),
        "stale_gone": sum(o.stale_gone for o in changes),
        "current_first": sum(o.top_current for o in changes),
        "negatives": len(negatives),
        "false_supersedes": sum(o.false_supersede for o in negatives),
        "negatives_new_kept": sum(o.new_kept for o in negatives),
        "negatives_answered": sum(o.answered for o in negatives),
        "partial": len(partial),
        "partial_halves_lost": sum(o.kept_lost > 0 for o in partial),
        "errors": sum(o.error is not None for o in rows),
    }


def summarise(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """One row per half × language × mode that has outcomes, then one per half over both."""
    rows = []
    for half in HALVES:
        for lang in LANGS:
            for mode in MODES:
                group = [o for o in outcomes if (o.split, o.lang, o.mode) == (half, lang, mode)]
                if group:
                    rows.append({"half": half, "lang": lang, "mode": mode, **figures(group)})
        group = [o for o in outcomes if o.split == half]
        if group:
            rows.append({"half": half, "lang": "all", "mode": "all", **figures(group)})
    return rows


def _share(k: int, n: int) -> str:
    return f"{k}/{n} ({k / n:.2f})" if n else "–"


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| half | lang | mode | supersede recall | stale left | current first | false supersedes "
        "| negatives' new fact kept | negatives answered first | still-true halves lost | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['half']} | {r['lang']} | {r['mode']} | {_share(r['superseded_right'], r['changes'])} "
            f"| {r['stale_gone']}/{r['changes']} | {r['current_first']}/{r['changes']} "
            f"| {_share(r['false_supersedes'], r['negatives'])} | {r['negatives_new_kept']}/{r['negatives']} "
            f"| {r['negatives_answered']}/{r['negatives']} | {r['partial_halves_lost']}/{r['partial']} "
            f"| {r['errors']} |"
        )
    return "\n".join(lines)


def by_kind(outcomes: list[Outcome]) -> str:
    """Per half and kind of case: runs that passed (superseded right, or nothing still true lost),
    both languages and modes together; counts only."""
    kinds = sorted({o.kind for o in outcomes}, key=lambda k: (k not in CHANGE_KINDS, k))
    lines = ["| half | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for half in HALVES:
        cells = []
        for kind in kinds:
            group = [o for o in outcomes if (o.split, o.kind) == (half, kind)]
            cells.append(f"{sum(o.passed for o in group)}/{len(group)}" if group else "–")
        lines.append(f"| {half} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def split_counts(cases: list[Case]) -> str:
    """Cases per half, language and kind of case (changes / negatives): counts only."""
    parts = []
    for half in HALVES:
        mine = [c for c in cases if c.split == half]
        langs = ", ".join(f"{lang} {sum(c.lang == lang for c in mine)}" for lang in LANGS)
        negatives = sum(c.negative for c in mine)
        parts.append(
            f"{half}: {len(mine)} cases ({langs}; {len(mine) - negatives} changes, {negatives} negatives)"
        )
    return "; ".join(parts)


def false_supersede_reasons(outcomes: list[Outcome]) -> str:
    """Why the negatives' still-true units were ended, counted per half and mode (the resolver's
    reasons only: no case's text)."""
    counts: Counter[tuple[str, str, str]] = Counter(
        (o.split, o.mode, reason[:80]) for o in outcomes if o.false_supersede for reason in o.ended
    )
    return "\n".join(f"false supersede, {h} {m}: {n} × {r}" for (h, m, r), n in sorted(counts.items()))


def failures(cases: list[Case], outcomes: list[Outcome]) -> str:
    """The failing dev cases, with their text and what the service held."""
    by_id = {c.id: c for c in cases}
    out = []
    for o in outcomes:
        if o.split != "dev" or o.passed:
            continue
        c = by_id[o.case_id]
        out.append(f"--- {c.id} [{c.lang} {c.kind} {o.mode}] {o.error or ''}")
        out += [f"    {t['role']}: {t['content']}" for t in (c.turns if o.mode == "conversation" else [])]
        out += [f"    write {w.tags}: {w.content}" for w in (c.writes if o.mode == "direct" else [])]
        out.append(f"    Q: {c.question}  current={c.current} stale={c.stale} keep={c.keep}")
        if o.seen:
            out.append(f"    first: {(o.seen['ranked'] or ['(nothing)'])[0]}")
            out += [f"    active: {a}" for a in o.seen["active"]]
    return "\n".join(out)


def public(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """The outcomes for the JSON report: a holdout case's contents left out."""
    return [o.as_dict() | ({"seen": None, "ended": None} if o.split == "holdout" else {}) for o in outcomes]

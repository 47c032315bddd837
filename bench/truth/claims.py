"""An in-process proxy of the evolution suite for the claim mechanism alone (no database, a minute):
each statement is a unit (direct writes as written; a conversation through the heuristic distiller, in
process, its units citing the last user turn being the new statement's), and the new unit is decided
against the earlier ones as the resolver decides (`app.resolve.claims.decide`: one-time happenings,
one unit ended at most, its still-true clauses kept). A change passes when every claim holding a stale
value is ended (a retirement: retired); a partial update also when no claim holding a kept value is
ended; a negative when no claim holding a kept value is ended. The stack adds retrieval (is the
current value first?) and the order of resolution.

    python -m bench.truth.claims [--split dev|holdout|all] [--files GLOB] [--suite DIR]
        [--show-failures] [--why]

A holdout case's text or failure is never printed: only counts (tune on dev only)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from app.claims import Claim, conflicts, extract
from app.claims.stored import load_all
from app.resolve.claims import decide, details_of, is_happening, residue
from bench.truth.suite import SUITE, Case, holds, load, select

_vectors: dict[str, np.ndarray] = {}


@cache
def _embedder() -> object:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from app.config import Settings
    from app.providers.embeddings import LocalEmbedder

    fields = Settings.model_fields  # the service's default local model, without a deployment's settings
    return LocalEmbedder(fields["embedding_model"].default, fields["embedding_dim"].default)


@dataclass(frozen=True)
class Result:
    case: Case
    mode: str
    passed: bool
    detail: str
    why: str  # a failure's kind (a verdict's reason, or what is missing): counted, never the text


# each unit said: its content, tags, the claims its distiller read (None: read from the content), and the
# turn it was distilled from (its last source turn; a direct write's own index)
Said = list[tuple[str, list[str], list[dict[str, Any]] | None, int]]


def _statements(case: Case, mode: str) -> tuple[Said, Said]:
    """(the earlier units' contents and tags, the new statement's): the writes as given, or the
    conversation through the heuristic distiller in process (its units; those citing the last user
    turn are the new statement's)."""
    if mode == "direct":
        said: Said = [(w.content, w.tags, None, i) for i, w in enumerate(case.writes)]
        return said[:-1], said[-1:]
    return asyncio.run(_distilled(case))


async def _distilled(case: Case) -> tuple[Said, Said]:
    from app.distill.heuristic.distiller import HeuristicDistiller
    from app.distill.taxonomy import bank_taxonomy
    from app.distill.types import DistillContext, Turn
    from app.schemas.banks import BankConfig

    config = BankConfig()
    turns = [
        Turn(i + 1, i + 1, t["role"], t["content"], None, _T0 + timedelta(minutes=i), {})
        for i, t in enumerate(case.turns)
    ]
    last = max(t.seq for t in turns if t.role == "user")
    context = DistillContext("truth-proxy", case.id, turns, UTC, [], bank_taxonomy(config.tags))
    result = await HeuristicDistiller().distill(context)
    units = [c for c in result.candidates if c.confidence >= config.min_confidence]
    earlier = [
        (c.content, list(c.tags), c.claims, max(c.source_seqs)) for c in units if last not in c.source_seqs
    ]
    new = [(c.content, list(c.tags), c.claims, last) for c in units if last in c.source_seqs]
    return earlier, new


_T0 = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def _claims(text: str, tags: list[str], lang: str, given: list[dict[str, Any]] | None) -> list[Claim]:
    """The unit's claims as the service stores them: those its distiller read, else its content's."""
    return load_all(given) if given is not None else extract(text, lang=lang, tags=tags)


def _cosine(a: str, b: str) -> float:
    """The cosine of two frames under the service's local embedder, each embedded as if alone, as the
    resolver embeds them (`embed_each`; app.claims itself does no I/O)."""
    missing = [frame for frame in dict.fromkeys((a, b)) if frame not in _vectors]
    for frame, vector in zip(missing, _embedder().embed_each_sync(missing), strict=True):  # type: ignore[attr-defined]
        _vectors[frame] = np.asarray(vector)
    return float(_vectors[a] @ _vectors[b])


def run_case(case: Case, mode: str) -> Result:
    """The new statement's units, one after another as the resolver takes them, each's claims against
    the earlier statements' units still active, decided as the resolver decides
    (`app.resolve.claims.decide`: one unit ended at most, its still-true clauses kept)."""
    said, latest = _statements(case, mode)
    units = [_claims(text, tags, case.lang, given) for text, tags, given, _ in said]
    news = [(_claims(text, tags, case.lang, given), tags) for text, tags, given, _ in latest]
    new = [c for claims, _ in news for c in claims]
    happenings: set[int | None] = {u for u, (_, tags, *_) in enumerate(said) if is_happening(tags, units[u])}
    earlier = [c for claims in units for c in claims]
    unit_of = [u for u, claims in enumerate(units) for _ in claims]
    ended: dict[int, str] = {}
    reasons: dict[int, list[str]] = {}
    for i, old in enumerate(earlier):
        for claim in new:
            reasons.setdefault(i, []).append(
                conflicts(old, claim, frame_similarity=_cosine(old.frame, claim.frame)).reason
            )
    decided: set[int] = set()  # the units an earlier new unit ended (inactive for the next)
    rewritten: list[str] = []  # the residues' clauses said again with a changed value
    for claims, tags in news:
        candidates = [(u, units[u]) for u in reversed(range(len(units))) if units[u] and u not in decided]
        happening = {None} if is_happening(tags, claims) else set()
        # (what a unit said with this one says is unchanged, read beside it as `unchanged_beside` does)
        beside = [c for others, _ in news if others is not claims for c in others if c.unchanged]
        decision = decide([*claims, *beside], candidates, _cosine, frozenset(happenings | happening))
        if decision is None:
            continue
        decided.add(decision.candidate_id)
        olds = units[decision.candidate_id]
        retired = decision.action == "retire"
        still_true = residue(olds, decision.hit, retired, decision.kept, decision.replaced)
        # (a compound clause whose one value changed stays, said with the new value: its residue's text)
        rewritten += [c.text for c in still_true if c not in olds]
        first = unit_of.index(decision.candidate_id)
        for j, claim in enumerate(olds):
            if claim not in still_true:
                ended[first + j] = decision.action
        if retired:
            # the units split from its turn that state only its details go with it (_retire_details)
            turn = said[decision.candidate_id][3]
            for u, (*_, source) in enumerate(said):
                if source == turn and u not in decided and units[u] and details_of(units[u], olds):
                    decided.add(u)
                    ended.update(
                        dict.fromkeys(range(unit_of.index(u), unit_of.index(u) + len(units[u])), "retire")
                    )
    want = "retire" if case.kind == "retirement" else "supersede"
    stale = [i for i, c in enumerate(earlier) if any(holds(c.text, v) for v in case.stale)]
    kept = [i for i, c in enumerate(earlier) if any(holds(c.text, v) for v in case.keep)]

    def said_again(i: int) -> bool:  # a kept value an ended clause holds, said again in its residue
        return any(holds(t, v) for t in rewritten for v in case.keep if holds(earlier[i].text, v))

    lost = [i for i in kept if i in ended and not said_again(i)]
    if case.negative:
        passed = not lost
    else:
        stale_said = any(holds(t, v) for t in rewritten for v in case.stale)
        passed = bool(stale) and all(ended.get(i) == want for i in stale) and not lost and not stale_said
    detail = "\n".join(
        [f"    old {_show(c)} -> {ended.get(i, 'kept')}" for i, c in enumerate(earlier)]
        + [f"    new {_show(c)}" for c in new]
    )
    why = ""
    if not passed:
        if lost:
            why = "kept value ended: " + "/".join(sorted({r for i in lost for r in reasons.get(i, [])}))
        elif not stale:
            why = "no earlier claim holds the stale value"
        elif not new:
            why = "no claim in the new statement"
        else:
            missed = [i for i in stale if ended.get(i) != want]
            why = "stale kept: " + "/".join(sorted({r for i in missed for r in reasons.get(i, [])}))
    return Result(case, mode, passed, detail, why)


def _show(c: Claim) -> str:
    old = f" old={c.old_value.text!r}" if c.old_value else ""
    return (
        f"[{c.subject} | {c.attribute} | {c.value.type}:{c.value.text!r} | {c.modality}"
        f"{' change' if c.change else ''}{' additive' if c.additive else ''}{old}] {c.text!r}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="all", choices=("dev", "holdout", "all"))
    parser.add_argument("--show-failures", action="store_true")
    parser.add_argument("--why", action="store_true", help="count the failures' kinds per half")
    parser.add_argument("--files", default="*", help="files whose stem matches (fresh_*)")
    parser.add_argument(
        "--suite", type=Path, default=SUITE, help="the cases' folder (bench/suites/probes: tuned on)"
    )
    args = parser.parse_args()
    cases = select(load(args.suite, args.files), args.split)
    results = [run_case(c, m) for c in cases for m in ("conversation", "direct")]
    table: Counter[tuple[str, str, str, bool]] = Counter()
    for r in results:
        kind = "negatives" if r.case.negative else "changes"
        table[(r.case.split, r.case.lang, kind, r.passed)] += 1
    print("| half | lang | supersede recall (changes) | false supersedes (negatives) |")
    print("|---|---|---|---|")
    for half in ("dev", "holdout"):
        for lang in ("en", "zh", "all"):
            langs = ("en", "zh") if lang == "all" else (lang,)
            ok = sum(table[(half, x, "changes", True)] for x in langs)
            changes = ok + sum(table[(half, x, "changes", False)] for x in langs)
            bad = sum(table[(half, x, "negatives", False)] for x in langs)
            negatives = bad + sum(table[(half, x, "negatives", True)] for x in langs)
            if changes + negatives:
                print(
                    f"| {half} | {lang} | {ok}/{changes} ({ok / max(changes, 1):.2f}) "
                    f"| {bad}/{negatives} ({bad / max(negatives, 1):.2f}) |"
                )
    if args.why:
        kinds = Counter((r.case.split, r.case.lang, r.why) for r in results if not r.passed)
        for (half, lang, why), n in sorted(kinds.items()):
            print(f"{half} {lang} {n:3} {why}")
    if args.show_failures:
        for r in results:
            if not r.passed and r.case.split == "dev":
                print(f"\nFAIL {r.case.id} [{r.case.kind}, {r.mode}] stale={r.case.stale} keep={r.case.keep}")
                print(r.detail)


if __name__ == "__main__":
    main()

"""The query: embed, parse time, infer tags, run the channels in one round trip, fuse, cut, format."""

from __future__ import annotations

import asyncio
import math
import re
import time
import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo
from typing import Protocol
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.banks.config import ConfiguredBank
from app.claims.asked import answer_types, asked_slots
from app.db.engine import autocommit
from app.db.repositories import claims as claims_repo
from app.db.repositories import events as events_repo
from app.db.repositories import graph as graph_repo
from app.db.repositories import units as units_repo
from app.db.repositories.query import ChannelInputs, Filters
from app.events.service import working_memory
from app.events.working_memory import WorkingMemory
from app.memory import why
from app.memory.reads import read_models
from app.providers.embeddings import Embedder
from app.query.channels import LIMITS, Hit, common_entity_names, run_channels, size_window
from app.query.context import build_context, with_recent_turns
from app.query.fusion import Fused, active_channels, diversify, effective_weights, fuse, on_topic, relevant
from app.query.recorder import ReadRecorder
from app.query.rerank import RerankDeps, answered_first, plan_rerank, rerank_pool
from app.query.tags import infer_tags
from app.query.timeparse import parse_time_filter
from app.query.topic import SAYING, has_topic, without_phrase
from app.query.tuning import CHANNEL_LIMIT, MAX_NAME_CANDIDATES, SUBJECT_WEIGHT
from app.schemas.banks import BankConfig
from app.schemas.common import as_aware
from app.schemas.events import WorkingTurn
from app.schemas.query import ChannelScore, QueryRequest, QueryResult, ScoredMemory, TimeFilterRead
from app.text import STOPWORDS_EN, STOPWORDS_ZH, has_cjk, segment

_LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'-]*")
# A question in the first person asks about the bank's user, whom units name "The user" / "用户" when
# no name was given (the distiller's default speaker): the entity channel walks its relations.
_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our)\b|我", re.IGNORECASE)
USER_NAMES = ("the user", "用户")
FAR_PAST = datetime(1900, 1, 1, tzinfo=UTC)
FAR_FUTURE = datetime(9999, 1, 1, tzinfo=UTC)
HISTORY_STATUSES = frozenset({"superseded", "merged"})  # asking for these asks for a chain's past


class QueryDeps(Protocol):
    """What a query uses of the API process (`app.services.Services`)."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def working_memory(self) -> WorkingMemory: ...

    @property
    def recorder(self) -> ReadRecorder: ...

    @property
    def working_memory_turns(self) -> int: ...

    @property
    def rerank(self) -> RerankDeps: ...


def _words(query: str) -> list[str]:
    words = [w.lower().removesuffix("'s") for w in _LATIN_WORD.findall(query)]
    if has_cjk(query):
        words += [w for w in segment(query) if has_cjk(w)]
    return words


def keywords(query: str) -> list[str]:
    """The query's content words; the keyword channel ORs them (natural questions rarely share
    every word with the answer)."""
    terms: list[str] = []
    for word in _words(query):
        clean = re.sub(r"[^\w-]", "", word).strip("-")
        if clean and clean not in STOPWORDS_EN and clean not in STOPWORDS_ZH | SAYING and clean not in terms:
            terms.append(clean)
    return terms


def entity_candidates(query: str, named: list[str] | None) -> list[str]:
    """Names the query might mention: the names the request gives, then its 1–3-word spans (canonical
    form) and Chinese words, the longest first, as many as fit (a long query cuts only its own)."""
    latin = [w.lower() for w in _LATIN_WORD.findall(query)]
    spans = {" ".join(latin[i : i + n]) for n in (1, 2, 3) for i in range(len(latin) - n + 1)}
    spans |= {s.removesuffix("'s") for s in spans}
    if has_cjk(query):
        spans |= {w for w in segment(query) if has_cjk(w) and w not in STOPWORDS_ZH}
    given = sorted({graph_repo.canonical(n) for n in named or []} - {""}, key=len, reverse=True)
    spans = {s for s in spans if s and s not in STOPWORDS_EN} - set(given)
    return [*given, *sorted(spans, key=len, reverse=True)][:MAX_NAME_CANDIDATES]


def walked_names(query: str) -> list[str]:
    """Names whose relations the entity channel walks without counting their own units: the bank's
    user when the query speaks in the first person (every unit of theirs names them)."""
    return list(USER_NAMES) if _FIRST_PERSON.search(query) else []


def without_names(query: str, names: list[str]) -> str:
    """The query without `names` (canonical, lower-case); the query itself if nothing else is left."""
    out = query
    for name in sorted(names, key=len, reverse=True):
        out = re.sub(rf"(?<![\w-]){re.escape(name)}(?:'s)?(?![\w-])", " ", out, flags=re.IGNORECASE)
    out = " ".join(out.split())
    return out if _LATIN_WORD.search(out) or has_cjk(out) else query


def _time_filter(req: QueryRequest, now: datetime, tz: tzinfo) -> tuple[TimeFilterRead | None, bool]:
    """The window the request names or its query's time phrase does, and whether it is year-less."""
    if req.time_range and (req.time_range.from_ or req.time_range.to):
        start = as_aware(req.time_range.from_, tz) if req.time_range.from_ else FAR_PAST
        end = as_aware(req.time_range.to, tz) if req.time_range.to else FAR_FUTURE
        return TimeFilterRead(from_=start, to=end, source="request"), False
    parsed = parse_time_filter(req.query, now, tz)
    if parsed is None or parsed.vague:  # "recently" drops nothing older (recency still ranks)
        return None, False
    read = TimeFilterRead(from_=parsed.start, to=parsed.end, source="query", phrase=parsed.phrase)
    return read, parsed.yearless


async def _query_vector(embedder: Embedder, query: str, subjects: list[str]) -> list[float]:
    """The query's vector; when it names the bank's own subjects, mostly what it asks about them: the
    vector of the question without the names plus SUBJECT_WEIGHT of the question's own. A small
    embedding model weighs a person's name above everything else a short question says ("What does
    Priya do to relax?" finds Priya's shortest units first, not the one about relaxing),
    while every unit of such a bank names them; the name still leans the vector to its person."""
    bare = without_names(query, subjects)
    if bare == query:
        return (await embedder.embed([query]))[0]
    topic, whole = await embedder.embed([bare, query])
    mixed = [t + SUBJECT_WEIGHT * w for t, w in zip(topic, whole, strict=True)]
    norm = math.sqrt(sum(x * x for x in mixed)) or 1.0
    return [x / norm for x in mixed]


async def _semantic(
    db: AsyncSession,
    embedder: Embedder,
    filters: Filters,
    inputs: ChannelInputs,
    query: str,
    subjects: list[str],
) -> list[Hit]:
    # A read of its own, outside a transaction (no BEGIN / ROLLBACK round trips), on a connection
    # checked out while the query is embedded (both finish before either's failure is raised).
    if not isinstance(db.bind, AsyncEngine):
        raise TypeError("the semantic channel takes a second connection from the session's engine")
    async with AsyncSession(autocommit(db.bind)) as other:
        vector, connected = await asyncio.gather(
            _query_vector(embedder, query, subjects), other.connection(), return_exceptions=True
        )
        if isinstance(connected, BaseException):
            raise connected
        if isinstance(vector, BaseException):
            raise vector
        semantic = replace(inputs, vector=vector, channels=frozenset({"semantic"}))
        return await run_channels(other, filters, semantic)


@dataclass(frozen=True)
class QueryPlan:
    """What a request asks of the channels, decided before any I/O (`plan_query`)."""

    config: BankConfig
    tz: tzinfo
    now: datetime
    mode: str
    weights: dict[str, float]
    time_filter: TimeFilterRead | None
    filters: Filters  # the time window not sized yet (`size_window`)
    inputs: ChannelInputs  # every active channel but the semantic one (no vector yet)
    semantic: bool  # the semantic channel runs too: the query's vector, on a connection of its own
    time_only: bool  # a time window and no topic: "what did we talk about yesterday?"
    asked: list[dict[str, str]]  # the relations the question asks the object of (`app.claims.asked`)
    answer_types: frozenset[str]  # the value types that answer it ("when …?": a time, a date, a day)


def plan_query(bank: ConfiguredBank, req: QueryRequest, model: str, dim: int) -> QueryPlan:
    """The channels, filters and inputs `query` runs for this request with an embedder of `model`
    (`dim`): pure, so a benchmark can time the very statements the API runs."""
    config = bank.config
    tz = ZoneInfo(req.timezone) if req.timezone else bank.timezone
    now = as_aware(req.now, tz) if req.now else datetime.now(UTC)
    mode = req.fusion or config.fusion
    weights = effective_weights(
        mode,
        config.weights.model_dump() if config.weights else None,
        req.weights.model_dump() if req.weights else None,
    )
    channels = active_channels(weights)
    time_filter, yearless = _time_filter(req, now, tz)
    # The time phrase names the window, not what the units say: no keyword of its own.
    phrase = time_filter.phrase if time_filter is not None else None
    topic_query = without_phrase(req.query, phrase)
    statuses: list[str] = list(req.statuses)
    if time_filter is not None and time_filter.to <= now and "statuses" not in req.model_fields_set:
        # A question about the past reaches what was forgotten of it (archived: restorable, marked so).
        statuses.append("archived")
    filters = Filters(
        bank_id=bank.id,
        statuses=statuses,
        as_of=as_aware(req.as_of, tz) if req.as_of else None,
        tags=req.tags,
        entities=[graph_repo.canonical(e) for e in req.entities] if req.entities else None,
        agents=req.agents or None,
        time_from=time_filter.from_ if time_filter else None,
        time_to=time_filter.to if time_filter else None,
        yearless=yearless,
    )
    inputs = ChannelInputs(
        model=model,
        dim=dim,
        vector=None,
        keywords=keywords(topic_query) if "keyword" in channels else [],
        limits=LIMITS,
        entity_names=entity_candidates(req.query, req.entities) if "entity" in channels else [],
        entity_wanted=[graph_repo.canonical(e) for e in req.entities or []],
        entity_walked=walked_names(req.query) if "entity" in channels else [],
        inferred_tags=infer_tags(req.query) if "tag" in channels else [],
        channels=channels - {"semantic"},
    )
    time_only = time_filter is not None and not has_topic(req.query, phrase)
    semantic = "semantic" in channels
    asked = asked_slots(req.query)
    return QueryPlan(
        config,
        tz,
        now,
        mode,
        weights,
        time_filter,
        filters,
        inputs,
        semantic,
        time_only,
        asked,
        answer_types(req.query),
    )


async def _history_of(
    db: AsyncSession, evident: set[uuid.UUID], candidates: list[uuid.UUID]
) -> set[uuid.UUID]:
    """Asked for history, the older values of a unit that has evidence are relevant too (the old budget
    when the budget is asked about), though their own words may not match the query: the candidates
    whose chain leads to an evident unit."""
    successors = await units_repo.successors(db, [c for c in candidates if c not in evident])
    found: set[uuid.UUID] = set()
    for uid in successors:
        seen, nxt = {uid}, successors.get(uid)
        while nxt is not None and nxt not in evident and nxt not in seen:
            seen.add(nxt)
            nxt = successors.get(nxt)
        if nxt in evident:
            found.add(uid)
    return found


async def query(db: AsyncSession, deps: QueryDeps, bank: ConfiguredBank, req: QueryRequest) -> QueryResult:
    started = time.perf_counter()
    args = (bank, req, deps.embedder.model, deps.embedder.dim)
    # A Chinese query is segmented by jieba (CPU work, tens of ms for a long one): off the event loop.
    plan = await asyncio.to_thread(plan_query, *args) if has_cjk(req.query) else plan_query(*args)
    filters = await size_window(db, plan.filters)  # once, for both connections' statements
    if plan.time_filter is not None and filters.time_from != plan.filters.time_from:
        # a year-less phrase's empty window moved to an earlier year's: the answer says which
        moved = {"from_": filters.time_from, "to": filters.time_to}
        plan = replace(plan, time_filter=plan.time_filter.model_copy(update=moved))
    inputs = plan.inputs
    if plan.semantic:
        names = inputs.entity_names or entity_candidates(req.query, req.entities)
        subjects = await common_entity_names(db, bank.id, names)
        # The semantic channel (embed, then the HNSW search on a connection of its own) runs while
        # the other channels run in the database.
        semantic = asyncio.ensure_future(_semantic(db, deps.embedder, filters, inputs, req.query, subjects))
        try:
            hits = await run_channels(db, filters, inputs)
            hits += await semantic
        finally:
            semantic.cancel()  # a no-op once it is done; after a failure, its result is not wanted
    else:
        hits = await run_channels(db, filters, inputs)
    fused = fuse(hits, plan.mode, plan.weights, plan.now)
    bank_bar = plan.config.min_similarity_cjk if has_cjk(req.query) else plan.config.min_similarity
    min_similarity = req.min_similarity if req.min_similarity is not None else bank_bar
    named_kinds = tuple(t for t in plan.inputs.inferred_tags if "." in t)  # "budget" → constraint.budget
    tags_of = {h.memory_id: h.tags for h in hits} if named_kinds else {}

    # units holding the relation the question asks the object of ("where do I live?": address.home)
    holders = await claims_repo.holding(db, bank.id, plan.asked, plan.filters.statuses)

    def kind_asked(unit_id: uuid.UUID) -> bool:
        return unit_id in holders or any(
            t == k or t.startswith(k + ".") for t in tags_of.get(unit_id, ()) for k in named_kinds
        )

    def scores_enough(unit: Fused) -> bool:
        # A request's `min_score` cuts at the score it names. The bank's standing one trims only what
        # lacks evidence of the topic: fused scores are relative ranks (a unit found by one channel at
        # rank 20, said a year ago, scores under 0.3 of a top unit found by three), not relevance.
        if req.min_score is not None:
            return unit.score >= req.min_score
        return (
            plan.time_only
            or on_topic(unit, min_similarity)
            or unit.memory_id in holders
            or unit.score >= plan.config.min_score
        )

    ranked_all = diversify(fused, hits)
    if plan.time_only:  # the window's units, newest first (the temporal channel's order)
        ranked_all.sort(key=lambda u: (u.channels.get("temporal", (CHANNEL_LIMIT + 1, 0.0))[0], -u.score))
    scored_enough = [u for u in ranked_all if scores_enough(u)]
    evident = {
        u.memory_id
        for u in scored_enough
        if relevant(u, min_similarity, window_asked=plan.time_only, kind_asked=kind_asked(u.memory_id))
    }
    if HISTORY_STATUSES & set(plan.filters.statuses):
        evident |= await _history_of(db, evident, [u.memory_id for u in scored_enough])
    pool = [u for u in scored_enough if u.memory_id in evident]
    stage = plan_rerank(deps.rerank, plan.config, req, time_only=plan.time_only, candidates=len(pool))
    wanted = pool[: max(req.top_k, stage.top_n)]  # the reranker reads the text of its top N too
    units, entities = await units_repo.get_units_with_entities(db, [r.memory_id for r in wanted])
    texts = {u.id: u.content for u in units}
    reranked = await rerank_pool(deps.rerank, stage, req.query, pool, texts)
    order = reranked.pool
    if plan.answer_types and not reranked.scores:  # a reranker read the texts: its order stands
        # (among the fused top k, as without a reranker: one planned but past its budget or failing
        # changes nothing of which units come back)
        order = answered_first(order, req.top_k, texts, plan.answer_types)
    ranked = order[: req.top_k]
    kept_ids = {r.memory_id for r in ranked}
    kept_units = [u for u in units if u.id in kept_ids]
    models = {m.id: m for m in await read_models(db, kept_units, entities=entities)}
    whys = await why.explain(db, list(models.values()), plan.tz, plan.config)
    scored = [
        ScoredMemory(
            **{**models[r.memory_id].model_dump(), "why": whys.get(r.memory_id)},
            score=r.score,
            scores={c: ChannelScore(rank=rank, score=round(s, 6)) for c, (rank, s) in r.channels.items()}
            if req.explain
            else None,
            rerank_score=reranked.scores.get(r.memory_id) if req.explain else None,
        )
        for r in ranked
        if r.memory_id in models
    ]
    context, kept = build_context(
        scored, plan.tz, req.max_tokens, mark_status=req.as_of is None, with_why=req.context_why
    )
    turns: list[WorkingTurn] = []
    if req.working_memory and req.session_id:
        session = await events_repo.get_session(db, bank.id, req.session_id)
        if session is not None:
            raw, _ = await working_memory(db, deps.working_memory, session, deps.working_memory_turns)
            turns = [WorkingTurn.model_validate(t) for t in raw]
            context = with_recent_turns(context, list(turns), plan.tz, req.max_tokens)
    took_ms = round((time.perf_counter() - started) * 1000, 2)
    deps.recorder.record(
        bank.id,
        req.query,
        req.model_dump(mode="json", exclude={"query"}, exclude_defaults=True),
        [m.id for m in kept],
        took_ms,
    )
    return QueryResult(
        memories=kept,
        context=context,
        working_memory=turns,
        time_filter=plan.time_filter,
        rerank=reranked.outcome,
        took_ms=took_ms,
    )

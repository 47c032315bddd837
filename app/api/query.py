from __future__ import annotations

from fastapi import APIRouter, Depends

from app.api.deps import BankDep, QueryDepsDep, ReadSessionDep, reads_only
from app.query import service
from app.schemas.problems import IN_A_BANK, WITH_BODY
from app.schemas.query import QueryRequest, QueryResult

router = APIRouter(prefix="/v1/banks/{bank_id}", tags=["query"], responses=IN_A_BANK)


@router.post(
    "/query",
    response_model=QueryResult,
    response_model_by_alias=True,
    responses=WITH_BODY,
    dependencies=[Depends(reads_only)],  # reads are logged off the request path
)
async def query(body: QueryRequest, bank: BankDep, db: ReadSessionDep, deps: QueryDepsDep) -> QueryResult:
    """Bring back the few units that matter for `query`: semantic, keyword, entity, temporal and tag
    channels over the bank's active units, fused (RRF by default), decayed and boosted, cut to
    `top_k` / `min_score` / `max_tokens`, with a prompt-ready `context`. Relative times in the
    query ("last week", "上周") become `time_filter`; `as_of` answers with what was active then."""
    return await service.query(db, deps, bank, body)

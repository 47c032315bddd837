"""Distillation throughput: events through ONE Celery worker, heuristic distiller, local embedder.

    python -m bench.distill [--events 2500] [--zh-share 0.15] [--profile-events 1000]
        [--database-url URL --redis-url URL]

The events are realistic conversation turns: LoCoMo's (../shared/data/locomo, English, two people
over many sessions) with Chinese sessions mixed in (`--zh-share` of the events; everyday talk with
preferences, budgets, dates, places, names, tasks and small talk). They are appended over HTTP to
`hindsight api` in per-session batches with the default bank config (a distillation job every 5
undistilled turns), each session then closed (its last turns distilled), and one `hindsight worker`
(its defaults: one process, queues distill, resolve and maintenance) distils them. The worker is
warmed first (model and dictionaries loaded on a small session), then the clock runs from the first
append until every session's `distilled_seq` reaches its `last_seq`; the time until the last pending
unit is resolved is reported too.

Then the same distillation runs in this process under cProfile (the distill service called
directly on the same kind of events in another bank, same distiller, same local embedder, real
PostgreSQL and Redis): the top items by cumulative time, and the split between the distiller, the
embedder and the database. Writes `--out` and the "Distillation throughput" section of
docs/benchmark-runs.md.

The package: `conversation` (the events), `worker` (through one worker), `in_process` (the
profile), `report` (the docs section), `run` (the command); what every benchmark shares is
`bench.harness`'s.
"""

"""Query latency at scale: one bank of N active units, the real app over real HTTP.

    python -m bench.query_latency --units 10000 --units 100000 [--queries 300]
        [--out bench/results/query_latency.json] [--database-url URL --redis-url URL]

For each size: synthetic but realistic units (EN ~90 %, ZH ~10 %: preferences, constraints with
amounts, facts about work / location / family, task states, episodes; tags, importance, confidence,
valid_from over two years, entities and relations) embedded with the real local model
(all-MiniLM-L6-v2; vectors cached in `--cache-dir`), loaded with COPY into a bank, then `hindsight api`
is started as a child process and queried over HTTP (httpx, keep-alive, one request at a time).
Reported: client wall time p50/p95/p99/mean and the server's `took_ms`, the channel SQL alone per
channel (the app's statement builder with only that channel on, through the app's engine settings),
EXPLAIN (ANALYZE, BUFFERS) of one query per channel with the indexes its plan uses, the embedding
time of one query, and the API process's RSS. Writes JSON (`--out`) and the "Query latency at scale"
section of docs/benchmark-runs.md (`--no-docs` to skip).

Without `--database-url` an embedded PostgreSQL (app.embedded, its own settings untouched) and Redis
run in a temporary directory, one fresh database per size; the bulk load drops the secondary indexes
of the loaded tables and recreates them from their own definitions afterwards (faster than
maintaining them row by row). With `--database-url` the banks `bench-<N>` are (re)loaded there with
the indexes in place (`--rebuild-indexes` to drop and recreate them there too; other banks share them).

The package: `world`, `templates` and `units` generate the bank, `queries` the questions, `vectors`
embeds them (cached), `loader` COPY-loads them, `http_timer` times the API, `channel_sql` the channel
SQL (the service's own plan, `app.query.service.plan_query`), `report` prints the table and writes the
docs section, `run` is the command; what every benchmark shares is `bench.harness`'s.
"""

"""Ingest throughput: appends to the event log over real HTTP, the real app, the real stack.

    python -m bench.ingest [--appends 20000] [--clients 32] [--batches 500] [--batch-size 100]
        [--batch-clients 4] [--api-workers N ...] [--database-url URL --redis-url URL]

Two phases against one `hindsight api` child process (its default number of uvicorn workers
unless `--api-workers` says otherwise; repeat the flag to compare):
- single-event appends: `--clients` concurrent clients (asyncio tasks over one keep-alive
  connection pool), each appending one turn at a time to its own rotating sessions (`--sessions`
  sessions in all), with an `external_id` as a retrying client sends;
- batches: `--batch-clients` concurrent clients appending `--batch-size` turns per request.
The key is a bank key with the `write` scope (an admin key would skip the key lookup). The
turns are LoCoMo's (../shared/data/locomo), with Chinese ones mixed in. No worker runs: the
append path writes its distillation job rows and sends them to the broker, nobody consumes them.

Reported per phase: events/s, request latency p50/p95/p99, the CPU of the machine split into
the API, PostgreSQL + Redis, this client, and other processes (the client runs on the same
machine and competes for the same cores), and afterwards a count check: every appended event is
in the database, seqs without gaps. Writes `--out` and the "Ingest" section of docs/benchmark-runs.md.

The package: `load` (the turns, the client, a phase of appends), `report` (the docs section), `run`
(the command); what every benchmark shares is `bench.harness`'s.
"""

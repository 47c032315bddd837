"""Bank export and import at size: flat memory and lines per second, over real HTTP.

    python -m bench.portability [--units 5000,50000] [--repeat 3] [--database-url URL --redis-url URL]

For each size, a synthetic bank is COPY-loaded into the app's tables (`seed`): one event per unit in
sessions of 500 turns, every tenth unit superseded by the next, an entity per ten units with a link
from every unit, a relation per two entities, two history rows per unit. Then, against one
`hindsight api` child process: `GET /v1/banks/{id}/export` streamed to a file, and that file
streamed back with `POST /v1/banks/{new id}/import`, `--repeat` times each (medians), each timed
with the API process's RSS sampled every 50 ms (growth = peak minus the RSS just before). A small
bank goes through both first, so the API's first-use allocations are not counted as growth. No
worker runs: the import's `reembed` job stays queued. Writes `--out` and the "Bank export and
import" section of docs/benchmark-runs.md.

The package: `seed` (the synthetic bank), `run` (the command and its docs section).
"""

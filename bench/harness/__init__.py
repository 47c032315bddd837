"""What the benchmarks share, so every report is measured and reads the same way:

- `services`: the embedded stack in a temporary directory (or the URLs given), `hindsight api`,
  `hindsight worker` and `hindsight dev` as child processes;
- `measure`: percentiles, the machine's facts, CPU accounting, the quiet-machine wait, RSS;
- `docs`: a section of docs/benchmark-runs.md (its head, tables, footer) and writing it;
- `cli`: the flags every benchmark with a docs section takes (`--out`, `--no-docs`, `--docs-only`,
  `--quiet-cpu`, `--quiet-wait`, the stack's URLs) and what a run leaves (the JSON, the section).

The benchmarks import the app; nothing in the app imports them.
"""

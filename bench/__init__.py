"""Benchmarks (run as modules: `python -m bench.query_latency`)."""

"""Knowledge page latency (issue 17): `GET /entities/{id}/page` and `GET /profile` for a subject with 500
active units, over HTTP against `hindsight api` (`python -m bench.pages`)."""

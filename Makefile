# Two commands for a newcomer: `make run` and `make test`. Everything else hangs off them.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUNDIR := .run

.PHONY: setup run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev,embed]'
	touch $(STAMP)

setup: $(STAMP)

# Starts a sidecar on 127.0.0.1:9119 over a copy of the demo memory dir shipped in demo/.
run: setup
	mkdir -p $(RUNDIR)
	[ -d $(RUNDIR)/memory ] || cp -r demo/memory $(RUNDIR)/memory
	ORT_DISABLE_TELEMETRY=1 $(BIN)/memory-sidecar serve --memory-dir $(RUNDIR)/memory

lint: setup
	$(BIN)/ruff check sidecar tests
	$(BIN)/ruff format --check sidecar

typecheck: setup
	$(BIN)/mypy sidecar

unit: setup
	ORT_DISABLE_TELEMETRY=1 $(BIN)/pytest -q

test: lint typecheck unit

bench: setup
	ORT_DISABLE_TELEMETRY=1 $(BIN)/python -m tests.bench

clean:
	rm -rf $(VENV) $(RUNDIR) .mypy_cache .ruff_cache

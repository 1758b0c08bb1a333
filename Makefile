# Two commands for a newcomer: `make run` and `make test`. Everything else hangs off them.
#   make run        installs the runtime (with the in-process embedding model) and starts a sidecar
#                   on 127.0.0.1:9119 over a copy of demo/memory
#   make test       installs the dev tools too, then ruff, mypy --strict and the whole suite
#   make test-fast  the same without the tests marked slow
#   make bench      every benchmark (python -m tests.bench NAME runs one)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# One stamp per install set, each rebuilt when pyproject.toml changes.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
RUNDIR := .run
export ORT_DISABLE_TELEMETRY := 1

.PHONY: setup setup-dev run test test-fast lint typecheck unit unit-fast bench clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
	  || { echo "memory-sidecar needs Python 3.11 or newer; set PYTHON=python3.11 (or newer)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The runtime and the [embed] extra only (what `pip install 'memory-sidecar[embed]'` gives a user).
$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[embed]'
	touch $@

# The runtime, [embed] and the dev tools (pytest, mypy, ruff, the mcp client ...): a superset of the above.
# pip compiles what it installs one file after another (the ~7,200 modules of these packages: some
# 11 s of CPU, the other core idle meanwhile); here it installs them uncompiled and compileall
# compiles the same files on every core (-j 0). Every module is still compiled before the tests
# run: their processes read the bytecode even where PYTHONDONTWRITEBYTECODE keeps Python from
# writing it. A file that does not compile is left as pip leaves it (the import would fail anyway).
SITE_PACKAGES = $(BIN)/python -c 'import sysconfig; print(*sorted({sysconfig.get_path(k) for k in ("purelib", "platlib")}))'
$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q --no-compile -e '.[dev,embed]'
	-$(BIN)/python -m compileall -qq -j 0 $$($(SITE_PACKAGES))
	touch $@ $(RUN_STAMP)

setup: $(RUN_STAMP)

setup-dev: $(DEV_STAMP)

# Starts a sidecar on 127.0.0.1:9119 over a copy of the demo memory dir shipped in demo/.
run: setup
	$(BIN)/python -m sidecar.scanner.prepare
	mkdir -p $(RUNDIR)
	[ -d $(RUNDIR)/memory ] || cp -r demo/memory $(RUNDIR)/memory
	$(BIN)/memory-sidecar serve --memory-dir $(RUNDIR)/memory

lint: setup-dev
	$(BIN)/ruff check sidecar tests
	$(BIN)/ruff format --check sidecar tests

typecheck: setup-dev
	$(BIN)/mypy sidecar

# One worker per core and two more; a test file stays on one worker (its module fixtures are
# shared), and the files are handed out in the order tests/conftest.py gives them: the files with the
# most tests marked slow first, then those with the most tests.
# The package is compiled first, as a regular (not editable) install is: every sidecar process the
# tests start then reads its bytecode, even where PYTHONDONTWRITEBYTECODE keeps Python from caching it.
# So is what the scanner works out on its first scan (sidecar/scanner/warm.py: its patterns'
# programs, their literals, the multilingual terms), which each process would otherwise work out again.
# So are the tests' support modules, and pytest's rewritten test modules and pytest plugins' modules
# (tests/support/precompile.py): written once, where each worker would otherwise rewrite the whole
# suite's asserts, and hypothesis's, anyio's ..., itself (some 2 s of CPU a worker for the plugins).
# Each worker forks the suite's sidecar processes from one that imported the server once
# (tests/support/zygote.py); TESTS_EXEC_SIDECARS=1 starts each as a new interpreter instead.
# The extra workers run while others wait (processes starting, the package index, the waits that
# are the behaviour under test: the "idle" column of tests/support/cpu_times.py, some 100 s of each
# of three workers' 180 s in a test-fast run on two cores, where they kept 1.6 cores busy): on two
# cores a fresh clone's pytest took 174 and 196 s with three workers, 202 and 226 s with two; test-fast
# by turns with three and four workers, 227/179, 210/203 and 203/194 s (a fourth pair, 166/237 s,
# ran while other jobs took the host). WORKERS=N chooses.
WORKERS ?= $(shell $(PYTHON) -c 'import os; n = len(os.sched_getaffinity(0)) \
  if hasattr(os, "sched_getaffinity") else os.cpu_count(); print((n or 1) + 2)')
XDIST := -n $(WORKERS) --dist loadfile --no-loadscope-reorder
# The tests' temporary files (pytest's tmp_path, the test PostgreSQL's data) go to /dev/shm where
# it is a writable tmpfs with 2 GB free, else where TMPDIR says (the disk): the sidecar still fsyncs
# every durable write (tests/write/test_strace.py sees each call), and on a tmpfs each returns at
# once instead of waiting for the disk. On the tmpfs pytest keeps the last run's dirs only (they
# are memory), not its last three. TESTS_TMPDIR=DIR chooses a dir, `TESTS_TMPDIR=` leaves TMPDIR be.
ifeq ($(origin TESTS_TMPDIR),undefined)
TESTS_TMPDIR := $(shell [ -d /dev/shm ] && [ -w /dev/shm ] && df -Pm /dev/shm 2>/dev/null \
  | awk 'NR == 2 && $$4 >= 2048 {print "/dev/shm"}')
endif
TESTS_ENV := $(if $(TESTS_TMPDIR),TMPDIR=$(TESTS_TMPDIR))
XDIST += $(if $(filter /dev/shm,$(TESTS_TMPDIR)),-o tmp_path_retention_count=1)
# schemathesis's pytest plugin is imported by every pytest process (the controller and each worker)
# though no test uses it (tests/http/test_openapi.py runs schemathesis's own `st` command): some
# 0.7 s of CPU a process.
XDIST += -p no:schemathesis
unit: setup-dev
	$(BIN)/python -m compileall -q sidecar tests/support
	$(BIN)/python -m sidecar.scanner.prepare
	$(BIN)/python -m tests.support.precompile
	$(TESTS_ENV) $(BIN)/pytest -q $(XDIST)

unit-fast: setup-dev
	$(BIN)/python -m compileall -q sidecar tests/support
	$(BIN)/python -m sidecar.scanner.prepare
	$(BIN)/python -m tests.support.precompile
	$(TESTS_ENV) $(BIN)/pytest -q $(XDIST) -m "not slow"

# ruff and mypy run beside the suite (make -j), not before it: on a fresh clone mypy has no cache
# and checks every module on one core (some 11 s of CPU), which would leave the other core idle
# before the suite starts. A failure of any of the three still fails the target, once all three end.
test: setup-dev
	@$(MAKE) --no-print-directory -j 3 lint typecheck unit

test-fast: setup-dev
	@$(MAKE) --no-print-directory -j 3 lint typecheck unit-fast

bench: setup-dev
	$(BIN)/python -m tests.bench

clean:
	rm -rf $(VENV) $(RUNDIR) .mypy_cache .ruff_cache

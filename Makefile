# clwl-analytics: set-up and everyday commands. `make demo` and `make test` work on a fresh machine with
# python3.11, a JDK 17 and access to PyPI and Maven Central (the first Spark start fetches the Delta jars into
# .ivy-cache/, once; every later start uses those files).

SHELL := /bin/bash
.DEFAULT_GOAL := help

BOOT_PYTHON := $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV        := .venv
PY          := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
EXTRAS      := pipeline,airflow,dev
PYTEST_ARGS ?=

.PHONY: help install jars test test-extended test-monitoring demo bench promtool clean distclean

help:
	@echo "make install   create $(VENV) and install the project with its pinned dependencies"
	@echo "make jars      fetch the Delta Lake jars into .ivy-cache/ now (else the first Spark start does, once)"
	@echo "make test      run the test suite (PYTEST_ARGS=\"tests/spark -q\" to narrow it)"
	@echo "make test-extended  the deployment-scale tests: lake on an object store, standalone cluster, Spark Connect"
	@echo "make demo      run the pipeline (clwl run) on the bundled sample estate"
	@echo "make bench     run the benchmarks: routing engine, replay loop, pipeline (MESSAGES=1000000)"
	@echo "make promtool  build Prometheus's promtool into .tools/bin (Go; the rules' tests use it)"
	@echo "make test-monitoring  the alert rules' tests under promtool (builds it first, once: many minutes)"
	@echo "make clean     remove generated data and caches (distclean: also $(VENV), .ivy-cache and .tools)"

# Re-run whenever the dependency declaration or the pins change. The stamp is written last, so a failed
# install is retried on the next make.
$(STAMP): pyproject.toml constraints.txt
	@test -n "$(BOOT_PYTHON)" || { echo "error: neither python3.11 nor python3 is on PATH" >&2; exit 1; }
	@$(BOOT_PYTHON) -c 'import sys; sys.version_info[:2] == (3, 11) or print("warning: " + sys.executable + " is not Python 3.11; the project requires 3.11", file=sys.stderr)'
	$(BOOT_PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install -c constraints.txt -e ".[$(EXTRAS)]"
	touch $@

install: $(STAMP)

jars: $(STAMP)
	$(PY) -c 'from spark.jars import local_delta_jars; print(len(local_delta_jars(progress=print)), "Delta jars ready")'

# --durations: the slowest tests in every log, so the 30-minute budget of the suite is watched where it is spent.
# The everyday suite leaves out the deployment-scale runs (marker `extended`: the lake on an object store, a
# standalone cluster, a Spark Connect server), which cost many minutes each; `make test-extended` runs them and CI
# runs both. The alert rules' tests under promtool (marker `promtool`) run with `make test-monitoring`: building
# promtool from its Go module downloads about 1.8 GB and compiles for 10 minutes or more on 2 cores, once.
test: $(STAMP)
	$(PY) -m pytest --durations=25 -m "not extended and not promtool" $(PYTEST_ARGS)

test-extended: $(STAMP)
	$(PY) -m pytest --durations=25 -m "extended and not promtool" $(PYTEST_ARGS)

test-monitoring: $(STAMP) promtool
	$(PY) -m pytest -m promtool $(PYTEST_ARGS)

demo: $(STAMP)
	$(VENV)/bin/clwl run

MESSAGES ?= 1000000

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/replay.py
	$(PY) bench/pipeline.py --messages $(MESSAGES)

# promtool, for the tests of monitoring/prometheus/clwl-rules.yml: built once from the Go module (the module
# proxy serves it) into .tools/bin; nothing to do when the binary is there. Needs Go (1.24 or later).
PROMETHEUS_VERSION ?= v0.316.0
TOOLS_BIN := $(CURDIR)/.tools/bin

promtool: $(TOOLS_BIN)/promtool

$(TOOLS_BIN)/promtool:
	@command -v go >/dev/null || { echo "error: go is not on PATH (promtool is built from its Go module)" >&2; exit 1; }
	GOBIN=$(TOOLS_BIN) go install github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)

clean:
	rm -rf lake reports spark-warehouse metastore_db derby.log build *.egg-info .pytest_cache .hypothesis
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) .ivy-cache .tools

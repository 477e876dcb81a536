# Two commands for a newcomer: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install test test-browser test-spark lint typecheck demo docs docs-check bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# Extras: test (pytest and friends), docs (jinja2 for codegen: make docs, docs-check).
	$(PY) -m pip install -q -e '.[test,docs]'
	# Bytecode now, as a wheel install does (an editable install skips it, and with
	# PYTHONDONTWRITEBYTECODE set every start would compile every module again).
	$(PY) -m compileall -q benchloop
	touch $(STAMP)

lint: install
	$(PY) -m ruff check benchloop codegen tests benchmarks

# The package type-checks with 0 errors (settings in pyproject.toml).
typecheck: install
	$(PY) -m mypy

# The suite on every core (a worker runs a test file at a time: their sandboxes are per module),
# then the timing- and signal-sensitive tests alone.
test: install lint typecheck docs-check
	$(PY) -m pytest -n auto --dist loadfile -m "not serial"
	$(PY) -m pytest -m serial

# Opt-in: the HTML pages of `bl compare --report` and `bl view` laid out by a real headless
# Chromium (skipped without one; `apt-get install chromium`, or BENCHLOOP_CHROMIUM=/path/to/chrome).
test-browser: install
	BENCHLOOP_TEST_BROWSER=1 $(PY) -m pytest tests/browser -rs

# Opt-in: Spark (local mode) reads the dataset of `bl dataset sync` as it is (docs/dataset.md):
# pyspark goes into its own venv (about a minute, once); it uses the system's Java 17.
SPARK_VENV ?= .venv-spark
test-spark:
	test -x $(SPARK_VENV)/bin/python || $(PYTHON) -m venv $(SPARK_VENV)
	$(SPARK_VENV)/bin/python -m pip install -q -e '.[data]' pyspark pytest syrupy
	$(SPARK_VENV)/bin/python -m pytest tests/cli/dataset/test_dataset_spark.py -p no:cacheprovider -rs

demo: install
	bash scripts/demo.sh

docs: install
	$(PY) -m codegen.docs

docs-check: install
	$(PY) -m codegen.docs --check

# bl beside the official client benchloop_client 0.2.25, which the run installs into a cached venv
# with pip (BENCH_OFFICIAL=/path/to/bmcli uses another; without one, bl is measured alone).
bench: install
	$(PY) -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache demo-out

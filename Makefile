# Convenience targets; the README's two commands are the reference.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test test-fast install install-test lint bench lock clean

$(PY):
	python3 -m venv $(VENV)

install: $(PY)
	$(PIP) install -c constraints.txt -e .

install-test: $(PY)
	$(PIP) install -c constraints.txt -e '.[test,train]'

run: install
	$(VENV)/bin/antinomy doctor

test: install-test
	$(PY) -m pytest

# The developer's loop: every test but those on the real models (`make test` and CI run all).
# Assumes `make install-test` ran once.
test-fast: $(PY)
	OMP_WAIT_POLICY=PASSIVE $(PY) -m pytest -m "not model" -q

lint:
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check . && $(VENV)/bin/mypy && $(VENV)/bin/lint-imports

bench:
	$(PY) tests/perf/bench_startup.py
	$(PY) tests/perf/bench_embedder.py
	$(PY) tests/perf/bench_generation.py

# Re-pin the constraints after changing dependencies (keeps CI reproducible).
lock: install-test
	$(PIP) freeze --exclude-editable | grep -v '^antinomy' > constraints.txt

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache

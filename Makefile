# Convenience targets; the README's two commands are the reference.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

.PHONY: run test test-fast install install-test lint bench lock clean bundle bundle-check

# Where the bundle is built (outside git: build/ is ignored).
BUNDLE_DIR ?= build/bundle

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

# The one-folder app: $(BUNDLE_DIR)/dist/antinomy/antinomy runs without Python or this tree.
bundle: $(PY)
	$(PIP) install -c constraints.txt -e '.[bundle]'
	$(PY) -m PyInstaller --noconfirm --distpath $(BUNDLE_DIR)/dist --workpath $(BUNDLE_DIR)/work packaging/antinomy.spec

# Builds the bundle, copies it to a fresh folder and runs doctor, index and a scan there
# with an empty environment (tests/test_bundle.py); CI calls it after the suite.
bundle-check: $(PY)
	$(PIP) install -c constraints.txt -e '.[test,bundle]'
	ANTINOMY_BUNDLE_DIR=$(BUNDLE_DIR) $(PY) -m pytest --bundle -m bundle -s tests/test_bundle.py

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

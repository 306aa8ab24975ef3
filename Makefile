# dpstream: `make demo` runs the audit table, `make test` runs the conformance suite.
# Each target bootstraps .venv on first use and reinstalls when pyproject.toml changes.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
OUT    ?= audit-report
JOBS   ?= 2

.PHONY: demo test test-full lint typecheck clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# --no-compile: pip would byte-compile every installed package (half of the install's CPU time); Python compiles
# what is imported, once (bytecode is written: THREADS below).
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[plot]'
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e '.[all]'
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/dpstream audit --overwrite --out $(OUT)

SOURCES := reference tests property_tests proofs examples tools benchmarks

lint: $(VENV)/.test-installed
	$(BIN)/ruff check $(SOURCES)

typecheck: $(VENV)/.test-installed
	$(BIN)/mypy --strict $(SOURCES)

# One BLAS thread per test process: JOBS processes already share the cores (docs/developing.md, "Test budgets").
# Bytecode is written (PYTHONDONTWRITEBYTECODE emptied): the tests start hundreds of dpstream processes, and each
# would compile the package from source again (twice the start-up time), as would pytest's assertion rewriting.
THREADS := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE=

# mypy (one process) runs beside pytest: both must pass; mypy's report is printed after the tests.
test: lint
	@echo "mypy --strict $(SOURCES) (beside the tests)"
	@$(BIN)/mypy --strict $(SOURCES) > $(VENV)/mypy-report.txt 2>&1 & typing=$$!; \
	$(THREADS) $(BIN)/python -m pytest -n $(JOBS) -p no:cacheprovider; tests=$$?; \
	wait $$typing; typed=$$?; cat $(VENV)/mypy-report.txt; \
	test $$tests -eq 0 && test $$typed -eq 0

# Everything, including the long audits marked `slow` (not part of CI).
test-full: lint typecheck
	$(THREADS) $(BIN)/python -m pytest -n $(JOBS) -p no:cacheprovider -m ''

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .hypothesis $(OUT)

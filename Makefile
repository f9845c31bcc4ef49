# The two commands of the README:
#   make reproduce   set everything up, run the main job (Theorem 3.4 reproduction)
#   make test        set everything up, run the test suite (what proves behaviour; about 10 minutes on 2 cores)
# and beyond them:
#   make test-all    the same with the tests marked slow (large cases, measurements) and every numeric variation
VENV    ?= .venv
PY      := $(VENV)/bin/python
OUT     ?= results
# Macaulay2 for make reproduce: auto (Debian's M2 on PATH, apt-installed as root; else the passagemath-macaulay2
# wheel in the venv), wheel (no apt, no root: the wheel's, `make reproduce M2=wheel`), apt (Debian's)
M2      ?= auto
PYTEST_ARGS ?=
# pytest's worker processes (pytest-xdist): one per core (nproc), at most 4 (each may run Macaulay2, msolve or a Dask
# cluster beside it); PYTEST_WORKERS=0 runs the tests in pytest's own process
PYTEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ "$$n" -gt 4 ] && n=4; echo $$n)

RUFF_PATHS = ag_attention tests bench scripts docs

.PHONY: setup setup-container reproduce test test-all test-setup typecheck docs docs-build bench clean lock variations

setup:
	@AG_ATTENTION_M2_SOURCE=$(M2) bash scripts/setup.sh

setup-container:
	@AG_ATTENTION_M2_SOURCE=$(M2) bash scripts/setup.sh --container

reproduce: setup
	@$(VENV)/bin/ag-attention reproduce theorem-3.4 --out $(OUT)/theorem-3.4 \
		$(if $(filter wheel,$(M2)),--backend wheel,)

# The tests need Macaulay2 (a missing one is a failure) and the container
# image: if the container set-up fails, the container tests build the image
# themselves and fail, or are skipped with the reason where no engine runs.
# PyTorch is installed where a CPU build can be had (scripts/setup-torch.sh says why not elsewhere); the
# torch tests are then required, else skipped with the reason.  So is headless Chromium (scripts/setup-browser.sh,
# apt as root), for the test that reads the built documentation in a browser (tests/test_docs_browser.py).
# pytest runs on every core (PYTEST_WORKERS); --dist loadgroup keeps the tests of one xdist_group on one worker.  The
# tests marked serial (a bound on wall-clock time) run after it, in one process with nothing beside them.  Any failure
# fails make test; so does a pytest run that collected no tests (exit 5; in neither of the two runs).
PYTEST_ENV = AG_ATTENTION_REQUIRE_M2=1 AG_ATTENTION_REQUIRE_M2_WHEEL=1 AG_ATTENTION_REQUIRE_MSOLVE=1 \
	AG_ATTENTION_REQUIRE_TORCH=$$(grep -qx installed .stamps/torch 2>/dev/null && echo 1 || echo 0) \
	AG_ATTENTION_REQUIRE_CHROMIUM=$$(grep -qx installed .stamps/chromium 2>/dev/null && echo 1 || echo 0)
ifeq ($(PYTEST_WORKERS),0)
PYTEST_RUN = $(PYTEST_ENV) $(PY) -m pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make $@: pytest collected no tests: that is a failure, not a pass" >&2; exit 1; fi; \
	exit $$status
else
PYTEST_RUN = $(PYTEST_ENV) $(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadgroup -m "not serial" $(PYTEST_ARGS); \
	parallel=$$?; echo "[$@] pytest, the tests marked serial (alone)"; \
	$(PYTEST_ENV) $(PY) -m pytest -m serial $(PYTEST_ARGS); serial=$$?; \
	if [ $$parallel -eq 5 ] && [ $$serial -eq 5 ]; then \
		echo "make $@: pytest collected no tests: that is a failure, not a pass" >&2; exit 1; fi; \
	for status in $$parallel $$serial; do [ $$status -eq 0 ] || [ $$status -eq 5 ] || exit $$status; done
endif

test-setup: setup
	@bash scripts/setup-container.sh || echo "[setup] container set-up failed (above); the container tests will report why" >&2
	@bash scripts/setup-torch.sh
	@bash scripts/setup-browser.sh
	@echo "[test] mypy" && $(PY) -m mypy
	@echo "[test] ruff (format and lint)" && $(PY) -m ruff format --check -q $(RUFF_PATHS) && $(PY) -m ruff check -q $(RUFF_PATHS)

# Python's bytecode caches are written during make test (__pycache__, gitignored) even where PYTHONDONTWRITEBYTECODE
# is set: else every pytest process (the variations', each xdist worker, the serial run) compiles the package and
# rewrites the asserts of every test module again (measured: 16 s of CPU for a collection, 7 s cached), and so does
# every Python process a test starts (ag-attention, Dask and sweep workers: 0.9 s, 0.5 s cached)
test test-all: export PYTHONDONTWRITEBYTECODE :=

# the tests that prove behaviour (those marked slow are skipped, tests/conftest.py), numeric variations: SkylakeX and
# a seed on the float-sensitive tests (scripts/numeric-variations.sh --quick: its QUICK_TESTS), the docs
test: test-setup
	@echo "[test] numeric tests under the SkylakeX kernel and another seed (scripts/numeric-variations.sh --quick)" && PY=$(PY) bash scripts/numeric-variations.sh --quick
	@echo "[test] docs (Sphinx, warnings are errors; doctests)" && $(MAKE) --no-print-directory docs-build
	@echo "[test] pytest"; $(PYTEST_RUN)

# everything: the tests marked slow too (AG_ATTENTION_SLOW_TESTS=1) and every numeric variation
test-all: test-setup
	@echo "[test-all] numeric tests under other BLAS kernels, threads and seeds (scripts/numeric-variations.sh)" && PY=$(PY) bash scripts/numeric-variations.sh
	@echo "[test-all] docs (Sphinx, warnings are errors; doctests)" && $(MAKE) --no-print-directory docs-build
	@echo "[test-all] pytest, the slow tests too"; export AG_ATTENTION_SLOW_TESTS=1; $(PYTEST_RUN)

# every numeric variation (BLAS kernels, threads, seed; make test runs two of them, make test-all all)
variations: setup
	@PY=$(PY) bash scripts/numeric-variations.sh

# mypy, strict over the whole package (pyproject.toml [tool.mypy]: strict = true)
typecheck: setup
	@$(PY) -m mypy

# the Sphinx site (docs/): HTML and its doctested examples, any warning an error; the HTML build runs every
# {code-cell} of docs/tutorials/ (docs/_ext/ag_exec.py: an exception fails it; without -q it prints their times)
docs: setup docs-build

docs-build:
	@$(PY) -m sphinx -W --keep-going -n -q -b html docs docs/_build/html
	@$(PY) -m sphinx -W --keep-going -q -b doctest docs docs/_build/doctest

bench: setup
	@$(PY) bench/dimension.py

# refresh requirements/*.txt (the lock scripts/setup.sh installs from): after a change to pyproject.toml;
# `make lock LOCK_ARGS=--upgrade` takes the newest versions (see scripts/lock.sh)
lock:
	@bash scripts/lock.sh $(LOCK_ARGS)

clean:
	rm -rf $(VENV) .stamps .pytest_cache build *.egg-info

# The two commands of the README:
#   make reproduce   set everything up, run the main job (Theorem 3.4 reproduction)
#   make test        set everything up, run the whole test suite
VENV    ?= .venv
PY      := $(VENV)/bin/python
OUT     ?= results
PYTEST_ARGS ?=

.PHONY: setup setup-container reproduce test typecheck docs docs-build bench clean lock variations

setup:
	@bash scripts/setup.sh

setup-container:
	@bash scripts/setup.sh --container

reproduce: setup
	@$(VENV)/bin/ag-attention reproduce theorem-3.4 --out $(OUT)/theorem-3.4

# The tests need Macaulay2 (a missing one is a failure) and the container
# image: if the container set-up fails, the container tests build the image
# themselves and fail, or are skipped with the reason where no engine runs.
# PyTorch is installed where a CPU build can be had (scripts/setup-torch.sh says why not elsewhere); the
# torch tests are then required, else skipped with the reason.
test: setup
	@bash scripts/setup-container.sh || echo "[setup] container set-up failed (above); the container tests will report why" >&2
	@bash scripts/setup-torch.sh
	@echo "[test] mypy" && $(PY) -m mypy
	@echo "[test] numeric tests under other BLAS kernels, threads and seeds (scripts/numeric-variations.sh --quick)" && PY=$(PY) bash scripts/numeric-variations.sh --quick
	@echo "[test] docs (Sphinx, warnings are errors; doctests)" && $(MAKE) --no-print-directory docs-build
	@AG_ATTENTION_REQUIRE_M2=1 AG_ATTENTION_REQUIRE_MSOLVE=1 \
	AG_ATTENTION_REQUIRE_TORCH=$$(grep -qx installed .stamps/torch 2>/dev/null && echo 1 || echo 0) \
	$(PY) -m pytest $(PYTEST_ARGS); status=$$?; \
	if [ $$status -eq 5 ]; then echo "make test: pytest collected no tests: that is a failure, not a pass" >&2; exit 1; fi; \
	exit $$status

# every numeric variation (BLAS kernels, threads, seed; make test runs three of them)
variations: setup
	@PY=$(PY) bash scripts/numeric-variations.sh

# mypy over the package (strict on architecture, models, exact: pyproject.toml [tool.mypy])
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

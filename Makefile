PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The web clients the serving tests run in Node (the AI SDK, AG-UI's client, Node 22 itself),
# exactly as tests/serve/js/package-lock.json pins them; skipped when npm is missing (those
# tests then skip locally, saying how to enable them; CI installs npm first).
JS := tests/serve/js
JS_STAMP := $(JS)/node_modules/.package-lock.json

.PHONY: install test lint typecheck check demo docs bench mutate format clean

install: $(STAMP) $(JS_STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(JS_STAMP): $(JS)/package-lock.json
	if command -v npm >/dev/null; then npm ci --prefix $(JS) --no-audit --no-fund --loglevel=error; fi

test: install
	$(BIN)/python -m pytest -q

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy reactloop tests benchmarks

check: lint typecheck test

demo: install
	$(BIN)/python -m reactloop.examples.demo

# The documentation site (docs/, mkdocs.yml) into site/: warnings are errors, so a broken link,
# anchor or docstring reference fails the build. Offline: no fonts or scripts fetched.
docs: install
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

bench: install
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	$(BIN)/python -m benchmarks
	$(BIN)/python -m benchmarks.imports

# Mutation testing of the core modules (slow: not part of `check` or CI). One module at a time,
# then a score per module; `make mutate MODULES="stop hooks" CHILDREN=2` runs some of them.
MUTATE_STAMP := $(VENV)/.installed-mutate
MODULES ?=
CHILDREN ?= 1

$(MUTATE_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mutate]'
	touch $(MUTATE_STAMP)

mutate: $(MUTATE_STAMP)
	nice $(BIN)/python -m benchmarks.mutation --children $(CHILDREN) $(MODULES)

format: install
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache mutants site

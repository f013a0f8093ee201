# The README's two commands. Both create (or refresh) the virtualenv in .venv first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: lab test quick site lint bench venv clean

# Python caches compiled modules, and pytest its assertion-rewritten tests, in __pycache__ (git
# ignores them): collecting the tests takes half the time with the cache. An environment that
# sets PYTHONDONTWRITEBYTECODE turns that off; these targets turn it back on for themselves.
export PYTHONDONTWRITEBYTECODE :=

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	@# setuptools prints an "Editable installation." notice (information, not a problem: the
	@# package is found through an import hook) at every editable install, in every mode.
	PYTHONWARNINGS="ignore:Editable installation" $(PY) -m pip install --quiet -e ".[dev,jupyter]"
	touch $(STAMP)

venv: $(STAMP)

## make test: set up and pass every test (lint, unit, property, browser tests, and the lessons:
## the learner's version, every exercise "not attempted yet", and the solution version, all PASS).
# tools/run_tests.py runs the stages (ruff; pytest on tests/; the lessons once, in both versions:
# each exercise checked blank, then with its solution; the widget's JavaScript tests, a dot per
# test) and ends with one summary: counts per stage and the skip reasons, grouped.
test: $(STAMP)
	$(PY) tools/run_tests.py

## make quick: a check while you work: the tests without those marked `slow` (the browser tests,
## the fresh virtualenv, whole lessons, long training loops); `make test` still runs them all.
quick: $(STAMP)
	$(PY) -m pytest -q -m "not slow" tests

## make lab: set up and open the tour in JupyterLab.
# Serves the project's root (the file browser shows everything) with the tour as the page to
# open: JupyterLab opens it in a browser where it can, and prints it with its token either way
# (".../lab/tree/notebooks/00_tour.ipynb?token=..."), so a headless machine gets a URL that
# opens the tour, not an empty Lab. As root (containers, cloud notebooks) JupyterLab refuses to
# start without --allow-root. binder/postBuild sets the lessons' JupyterLab settings (widget state
# saved with the notebook, so a reopened lesson shows its graphs), here as on Binder.
TOUR := notebooks/00_tour.ipynb
lab: $(STAMP)
	NB_PYTHON_PREFIX=$(VENV) bash binder/postBuild
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=. $(if $(filter 0,$(shell id -u)),--allow-root) \
		--LabApp.default_url=/lab/tree/$(TOUR) $(LAB_ARGS)

## make site: execute the lessons and build them as a static site in site/ (open
## site/index.html): nbconvert pages whose graphs play offline (tools/build_site.py).
site: $(STAMP)
	$(PY) tools/build_site.py --out site

lint: $(STAMP)
	$(PY) -m ruff check .

bench: $(STAMP)
	$(PY) -m benchmarks.run

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache site

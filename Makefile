# make book   build the Jupyter Book into _build/html (warnings are errors): python -m course.build computes the
#             training runs book_runs/ lacks for this code (commit them) and executes the chapters on every core, then
#             jupyter-book renders them
# make test   the fast tier: every test that needs no built book and no whole graded class (minutes)
# make check  everything: make book, then ruff and every test (what CI runs)
# make lint   ruff check . (make test and make check run it first)
# make locale refresh the Chinese edition's translation catalogues (locale/zh_CN/LC_MESSAGES/*.po) from the English
#             pages, and the exercises' (locale/zh_CN/LC_MESSAGES/exercises/<a>.po, bertgrader's own) from their
#             sources: new paragraphs added untranslated, changed ones marked fuzzy (docs/translation.md)
# make benchmarks   speed against transformers, as ratios
# make notebooks    rebuild solutions/<a>/<a>.ipynb from its source solutions/<a>/<a>.py, and the Chinese
#                   solutions/<a>/zh_CN/<a>.ipynb from the same source and its catalogue (docs/exercises.md)
# make exercises    regenerate exercises/ from solutions/ with nbgrader (rebuilds the notebooks first), and the
#                   Chinese student versions exercises/zh_CN/<a>/
# make pdf         each edition of the built book as one PDF (after make book): _build/pdf/bert-course-en.pdf and
#                  bert-course-zh_CN.pdf, printed offline by headless Chromium, with contents and page numbers (course/pdf.py)
# make live        the chapters as notebooks to run in JupyterLab (_build/live/chapters/*.ipynb), made from
#                  the built book: its numbers, terms and included code in place, the live demos instead of the page's
# make release     what students get, without solutions/: the built book and exercises/ in _build/release/, checked
#                  to hold no solution, hidden test or named mistake (course/release.py; fails naming any it finds)
# make js          Plotly's cartesian bundle for the demos and axe-core for the page tests, from npm
#                  (make book and make check run it)
# make hub         the course server (as root): JupyterHub on 127.0.0.1:$(HUB_PORT) with an account for each of
#                  HUB_STUDENTS and HUB_INSTRUCTOR, nbgrader's exchange, Formgrader; Ctrl-C stops it (docs/course-server.md)
# make clean       remove _build: the next make book executes every chapter and training run again
# All of them create .venv and install the project into it on first use.
VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export MPLBACKEND := Agg

# Plotly's cartesian bundle for the book's demos, from npm (the plotly wheel's plotly.js version); without npm
# the book ships the wheel's full bundle instead, and the build says so in its output (course/sphinx_ext.py).
# axe-core: the accessibility audit tests/test_pages.py runs on every page (never shipped in the book).
PLOTLY_JS := plotly.js-cartesian-dist-min@4.1.1
PLOTLY_JS_FILE := $(VENV)/js/node_modules/plotly.js-cartesian-dist-min/plotly-cartesian.min.js
AXE_JS := axe-core@4.14.1
AXE_JS_FILE := $(VENV)/js/node_modules/axe-core/axe.min.js

.PHONY: book test check lint venv clean benchmarks notebooks exercises js live release locale pdf

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	@# jsonschema (through nbformat) imports rfc3987-syntax when installed, for the "iri" format no schema here uses:
	@# building its grammar costs 1 s of CPU in every process that imports nbformat (each nbgrader command, each
	@# grading worker, the book build). jupyter-events' format-nongpl extra brings it; jsonschema runs without it.
	$(PY) -m pip uninstall --quiet -y rfc3987-syntax
	@$(PY) -m bertgrader.sandbox || echo "warning: the grading sandbox cannot run here (see above); nbgrader autograde will refuse to grade"
	touch $(STAMP)

js: $(STAMP)
	@test -f $(PLOTLY_JS_FILE) || npm install --prefix $(VENV)/js --no-audit --no-fund --silent $(PLOTLY_JS) \
	  || echo "WARNING: npm could not install $(PLOTLY_JS); the book ships plotly's full bundle (4.8 MB) instead"
	@test -f $(AXE_JS_FILE) || npm install --prefix $(VENV)/js --no-audit --no-fund --silent $(AXE_JS) \
	  || echo "WARNING: npm could not install $(AXE_JS); tests/test_pages.py's accessibility audit will fail"

# The course server (bertgrader/hub/) and JupyterHub's proxy, npm's configurable-http-proxy, which tests/test_hub.py
# needs too (.ci/run installs it before make check).
HUB_STUDENTS ?= alice,bob,carol
HUB_INSTRUCTOR ?= teacher
HUB_PORT ?= 8000
HUB_PROXY_JS := configurable-http-proxy@5.3.0
HUB_PROXY_BIN := $(VENV)/js/node_modules/.bin/configurable-http-proxy
.PHONY: hub hub-proxy
hub-proxy: $(STAMP)
	@test -x $(HUB_PROXY_BIN) || npm install --prefix $(VENV)/js --no-audit --no-fund --silent $(HUB_PROXY_JS)
hub: hub-proxy
	$(PY) -m bertgrader.hub start --students $(HUB_STUDENTS) --instructor $(HUB_INSTRUCTOR) --port $(HUB_PORT)

# Both editions: the chapters executed once (course.build), rendered in English into _build/html, then in Chinese
# from the same stored notebooks into _build/html/zh_CN (course/i18n.py).
book: $(STAMP) js
	$(PY) -m course.build
	$(VENV)/bin/jupyter-book build . -W -n --keep-going
	$(PY) -m course.i18n build

# The translation catalogues from the English pages as they are now (Sphinx's gettext builder, then sphinx-intl).
locale: $(STAMP)
	$(PY) -m course.i18n locale
	$(PY) -m bertgrader.i18n extract

# The book and the student notebooks, without solutions/, scanned for every solution, hidden test and mistake.
release: book
	$(PY) -m course.release

# Each edition of the book make book built, printed to one PDF by headless Chromium (course/pdf.py): it stops,
# naming make book, where a page is not built or is older than its source. make check prints them before the tests
# (tests/test_pdf.py reads them, 30 s of CPU): printing both took 4.5-5.5 min here (2 cores, load 11-17), too long
# to do inside the tests.
pdf: $(STAMP)
	$(PY) -m course.pdf

# The chapters as plain notebooks for JupyterLab, from the book just built (course/live.py).
live: book
	$(PY) -m course.live

# Two test processes (2 cores); --dist loadfile keeps each file's tests in one process, so an expensive
# session fixture (a graded class) is built once, not once per process. --no-loadscope-reorder keeps the
# order tests/conftest.py gives the files (the longest first), which xdist would otherwise replace by "most tests first".
PYTEST := $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder
# The fast tier: no test that reads the built book (marker book) or grades every assignment's whole class
# (marker full); tests/test_exercises.py grades the class of one assignment (a sample), not of all.
FAST_ASSIGNMENTS ?= 08_masking
test: $(STAMP) lint
	EXERCISES_GRADED=$(FAST_ASSIGNMENTS) $(PYTEST) -m "not book and not full" --durations=10

# Everything, on the book make book built (the page tests read it; nothing is built inside pytest).
check: book pdf lint
	BOOK_BUILD_DIR=_build $(PYTEST) --durations=25

# ruff over every Python file but the assignments' sources (their rules: pyproject.toml's [tool.ruff]; the
# sources are linted as notebooks, cell by cell: python -m bertgrader.assignment --lint, in the tests).
lint: $(STAMP)
	$(VENV)/bin/ruff check .

benchmarks: $(STAMP)
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

# The nbgrader source notebooks, from their percent-format sources (deterministic: a rebuild changes no byte).
notebooks: $(STAMP)
	$(PY) -m bertgrader.assignment

# Regenerate the student versions in exercises/ from solutions/ (nbgrader needs the venv on PATH).
exercises: notebooks
	PATH="$(abspath $(VENV))/bin:$$PATH" nbgrader generate_assignment "*" --force
	$(PY) -m bertgrader.i18n release

clean:
	rm -rf _build

# The course's two everyday commands are `make grade` and `make test`; both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)
STAMP := $(VENV)/.installed
# uv installs the pinned requirements.txt as pip would (the same packages), in 12 s instead of 31 (docs/architecture.md)
UV_VERSION := 0.9.30
ASSIGNMENTS := $(notdir $(wildcard source/*))

.PHONY: all venv grade serve test check release demo-class demo-class-remove demo present benchmark clean

all: test

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed (found $$($(PYTHON) --version))."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet uv==$(UV_VERSION)
	$(BIN)/uv pip install --python $(BIN)/python --quiet --compile-bytecode -r requirements.txt
	$(BIN)/uv pip install --python $(BIN)/python --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

## make grade: release, autograde the class in submitted/, feedback, grades.csv, reports/<assignment>.html, a table.
## make grade SUBMISSIONS=download.zip [ASSIGNMENT=a] [MAPPING=roster.csv]: first import an LMS zip (docs/lms.md).
grade: venv
	bash scripts/system-packages.sh grade
	$(if $(SUBMISSIONS),$(BIN)/python -m coursetools.instructor.lms "$(SUBMISSIONS)" $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") $(if $(MAPPING),--mapping "$(MAPPING)") $(LMS_ARGS))
	$(BIN)/python -m coursetools.instructor.grade $(ASSIGNMENT) $(ARGS)

## make serve: the grading service for the term (docs/jupyterhub.md): each submission in the exchange collected, graded
## alone with make grade's engine, its feedback released to that student; pages on c.Service.port. SERVE_ARGS=--no-pages.
serve: venv
	bash scripts/system-packages.sh grade
	$(BIN)/python -m coursetools.service.serve $(SERVE_ARGS)

## make test: the whole test suite (installs what it needs, browsers and databases included), its modules spread
## over TEST_WORKERS processes (pytest-xdist --dist loadscope: a module stays on one), then the live-browser modules
## (marked serial) beside each other only, then the timing-sensitive tests (marked alone: formgrader, the widget's
## pace) one at a time; the slowest tests are listed.
TEST_WORKERS ?= 3
test: venv
	bash scripts/system-packages.sh test
	$(BIN)/python -m pytest grader_tests -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder -m 'not serial and not alone' --durations=10
	$(BIN)/python -m pytest grader_tests -n 3 --dist loadscope -m serial --durations=3
	$(BIN)/python -m pytest grader_tests -m alone --durations=2

## make check: the quick check after an edit of source/ (the tests marked `check`): release/ regenerated from source/
## and free of leaks, the reference solution's full marks, nothing for the release untouched, and the visible and
## hidden tests of each task agreeing on a small class per assignment, graded once by `make grade`'s engine.
check: venv
	bash scripts/system-packages.sh grade
	$(BIN)/python -m pytest grader_tests -m check

## make release: copy the widget package beside each notebook (as minimax_widget/) and regenerate release/ from
## source/ in the course's gradebook, so that `nbgrader autograde` can follow; only if that gradebook refuses (a
## class already graded, whose cells changed) with a scratch gradebook instead, saying so.
release: venv
	$(BIN)/python -c 'from coursetools.grading.course import Course; Course.at().copy_widget_beside_notebooks()'
	@for a in $(ASSIGNMENTS); do \
	  log=$$(mktemp); scratch=$$(mktemp -d); \
	  if $(BIN)/python -m nbgrader generate_assignment $$a --force >$$log 2>&1; then cat $$log; \
	  elif $(BIN)/python -m nbgrader generate_assignment $$a --force --db=sqlite:///$$scratch/release.db >$$scratch/log 2>&1; then \
	    cat $$scratch/log; echo "make release: the course's gradebook refused $$a:"; \
	    grep -E '^ *[A-Za-z.]*(Error|Exception):' $$log; \
	    echo "make release: so release/$$a was generated with a scratch gradebook, and the course's gradebook keeps"; \
	    echo "  the old cells of $$a: run \`make clean\` (deletes the gradebook and grading outputs) before grading it again."; \
	  else cat $$log; rm -rf $$log $$scratch; exit 1; fi; \
	  rm -rf $$log $$scratch; done

## make demo-class: rebuild submitted/ from the demo students' answers in demo_class/.
demo-class: venv
	$(BIN)/python -m coursetools.instructor.democlass

## make demo-class-remove: take the demo class out of the course (its submissions as built, their grading outputs and
## gradebook rows, the demo roster); a real student's own work is never removed.
demo-class-remove: venv
	$(BIN)/python -m coursetools.instructor.democlass --remove

## make demo [ASSIGNMENT=alpha_beta]: open the instructor's workbook with its widget in JupyterLab, for a live class.
## DEMO_ARGS='--no-browser --ServerApp.port=8890' passes options on to JupyterLab.
DEMO_FOLDER = $(CURDIR)/source/$(or $(ASSIGNMENT),noughts_and_crosses)
demo: venv
	$(BIN)/python -c 'from coursetools.grading.course import Course; Course.at().copy_widget_beside_notebooks()'
	$(BIN)/python -m jupyter lab --ServerApp.root_dir="$(DEMO_FOLDER)" "$(DEMO_FOLDER)/$(notdir $(DEMO_FOLDER)).ipynb" $(DEMO_ARGS)

## make present [ASSIGNMENT=alpha_beta] [NOTEBOOK=path] [PORT=8866]: the widget alone on a page for a projector
## (Voilà), in lecture mode with keys: → Step, ← Back, space Play/Pause, e Run to end, n New game. NOTEBOOK=path
## shows that notebook's functions (a student's, say: its code runs in the grading sandbox) instead of the
## instructor's. Offline it needs nothing from the internet; a closed or reloaded page's kernel is shut down.
## PRESENT_ARGS=--no-browser to only serve it, --no-tree without the tree, --unsandboxed for NOTEBOOK unsandboxed.
present: venv
	$(BIN)/python -m coursetools.instructor.present $(or $(ASSIGNMENT),noughts_and_crosses) $(if $(NOTEBOOK),--notebook "$(NOTEBOOK)") --port $(or $(PORT),8866) $(PRESENT_ARGS)

## make benchmark: print the measured figures (workbook, widget, sandbox overhead, parallel grading, regrading,
## kernels against the last revision with a fork server, a kernel's CPU, the grading service's latency).
benchmark: venv
	bash scripts/system-packages.sh grade
	$(BIN)/python benchmarks/notebook_benchmark.py
	$(BIN)/python benchmarks/widget_benchmark.py
	$(BIN)/python benchmarks/sandbox_overhead.py
	$(BIN)/python benchmarks/grading_benchmark.py --class varied --students 40
	$(BIN)/python benchmarks/grading_benchmark.py --class demo
	$(BIN)/python benchmarks/regrade_benchmark.py
	$(BIN)/python benchmarks/kernels_benchmark.py
	$(BIN)/python benchmarks/kernel_start_benchmark.py
	$(BIN)/python benchmarks/service_benchmark.py

## make clean: delete every grading output (autograded/ keeps its README) and the gradebook, after keeping a copy of
## the gradebook (manual grades and comments are in it) as backups/gradebook-<date>-<time>.db.
clean:
	@if [ -f gradebook.db ]; then mkdir -p backups; kept=backups/gradebook-$$(date +%Y%m%d-%H%M%S).db; \
	  cp -p gradebook.db $$kept && echo "make clean: the gradebook is kept as $$kept (copy it back to gradebook.db to restore it)"; fi
	rm -rf feedback gradebook.db grades.csv grades.csv.partial grades-canvas.csv grades-moodle.csv autograde.log reports .grading
	if [ -d autograded ]; then find autograded -mindepth 1 -maxdepth 1 ! -name README.md -exec rm -rf {} +; \
	  rmdir autograded 2>/dev/null || true; fi

# The course's two everyday commands are `make grade` and `make test`; both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)
STAMP := $(VENV)/.installed
ASSIGNMENTS := $(notdir $(wildcard source/*))

.PHONY: all venv grade test release demo-class demo benchmark clean

all: test

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed (found $$($(PYTHON) --version))."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

## make grade: release, autograde the class in submitted/, feedback, grades.csv, reports/<assignment>.html, a table.
## make grade SUBMISSIONS=download.zip [ASSIGNMENT=a] [MAPPING=roster.csv]: first import an LMS zip (docs/lms.md).
grade: venv
	bash scripts/system-packages.sh grade
	$(if $(SUBMISSIONS),$(BIN)/python -m coursetools.lms "$(SUBMISSIONS)" $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") $(if $(MAPPING),--mapping "$(MAPPING)") $(LMS_ARGS))
	$(BIN)/python -m coursetools.grade $(ASSIGNMENT) $(ARGS)

## make test: the whole test suite (installs what it needs, browsers and databases included).
test: venv
	bash scripts/system-packages.sh test
	$(BIN)/python -m pytest grader_tests

## make release: copy the widget package beside each notebook (as minimax_widget/) and regenerate release/ from
## source/ (with a scratch gradebook, so that a class already graded does not block it).
release: venv
	db=$$(mktemp -d); for a in $(ASSIGNMENTS); do rm -rf source/$$a/minimax_widget source/$$a/minimax_widget.py; \
	  cp -r coursetools/widget source/$$a/minimax_widget; rm -rf source/$$a/minimax_widget/__pycache__; \
	  $(BIN)/python -m nbgrader generate_assignment $$a --force --db=sqlite:///$$db/release.db || exit 1; done; \
	rm -rf $$db

## make demo-class: rebuild submitted/ from the demo students' answers in demo_class/.
demo-class: venv
	$(BIN)/python -m coursetools.democlass

## make demo: open the workbook with its widget in JupyterLab, for a live class.
demo: venv
	$(BIN)/python -m jupyter lab --ServerApp.root_dir=source/noughts_and_crosses noughts_and_crosses.ipynb

## make benchmark: print the measured figures (workbook, widget, sandbox overhead, parallel grading).
benchmark: venv
	bash scripts/system-packages.sh grade
	$(BIN)/python benchmarks/notebook_benchmark.py
	$(BIN)/python benchmarks/widget_benchmark.py
	$(BIN)/python benchmarks/sandbox_overhead.py
	$(BIN)/python benchmarks/grading_benchmark.py --students 40

clean:
	rm -rf autograded feedback gradebook.db grades.csv reports

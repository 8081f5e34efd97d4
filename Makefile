# The course's two everyday commands are `make grade` and `make test`; both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)
STAMP := $(VENV)/.installed
ASSIGNMENTS := noughts_and_crosses

.PHONY: all venv system-packages release grade test demo benchmark clean-grades

all: test

# Debian packages the course needs: bubblewrap (grading sandbox), chromium (browser tests),
# postgresql (PostgreSQL gradebook tests). Installed only when missing.
system-packages:
	@$(PYTHON) -m coursetools.system_packages 2>/dev/null || bash scripts/system-packages.sh

$(STAMP): requirements.txt pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11 or newer is needed (found $$($(PYTHON) --version))."; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $(STAMP)

venv: $(STAMP)

# Conveniences over the README's commands (the README's two commands need no make).
VENV := .venv
PY := $(VENV)/bin/python

$(VENV)/.installed: requirements.txt
	python3 -m venv $(VENV) && $(VENV)/bin/pip install -q -r requirements.txt && touch $@

.PHONY: run test bench bench-tiny seed screenshots lint
run: $(VENV)/.installed
	$(PY) manage.py runserver
test: $(VENV)/.installed
	$(PY) -m pytest
bench: $(VENV)/.installed
	$(PY) bench/run.py
bench-tiny: $(VENV)/.installed
	$(PY) bench/run.py --tiny
seed: $(VENV)/.installed
	$(PY) manage.py seed
screenshots: $(VENV)/.installed
	$(PY) manage.py screenshots
lint: $(VENV)/.installed
	$(VENV)/bin/pip install -q ruff && $(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

VENV   := .venv
PYTHON := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test perf lint clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[test,examples]'
	touch $(STAMP)

demo: $(STAMP)
	$(PYTHON) -m jitgrad.examples.digits --serve

test: $(STAMP)
	$(PYTHON) -m pytest -q

perf: $(STAMP)
	$(PYTHON) -m perf

lint: $(STAMP)
	$(PYTHON) -m pip install --quiet ruff
	$(VENV)/bin/ruff check jitgrad tests perf

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

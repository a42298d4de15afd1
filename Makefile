VENV    := .venv
PYTHON  := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
TESTING := $(VENV)/.installed-test
TORCH   := $(VENV)/.installed-torch
COMPARE := $(VENV)/.installed-compare
# PyTorch's CPU-only wheels (PyPI's Linux torch depends on the CUDA libraries). Given as
# --index-url for that one install: with --extra-index-url pip takes the highest version
# across both indexes, which can be PyPI's CUDA build. --retries 1: where the index cannot
# be reached, pip falls back to the wheels it finds locally without a long retry loop.
TORCH_INDEX := https://download.pytorch.org/whl/cpu

# An editable install compiles no bytecode (pip does for a regular one), and where
# PYTHONDONTWRITEBYTECODE is set nothing ever would: every process would compile jitgrad's
# source again, about 0.1 s of each start. (Run again before timing start-up: `make perf`.)
BYTECODE = $(PYTHON) -m compileall -q jitgrad

.PHONY: demo test perf lint clean

# serving: `make demo` serves the trained model (jitgrad.serving's ASGI stack).
$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[examples,serving]'
	$(BYTECODE)
	touch $(STAMP)

# serving: tests/serving run the REST front end and its uvicorn workers.
$(TESTING): $(STAMP)
	$(PYTHON) -m pip install --quiet -e '.[test,examples,serving]'
	touch $(TESTING)

demo: $(STAMP)
	$(PYTHON) -m jitgrad.examples.digits --serve

# The tests check autograd, losses, optimizers and ops against PyTorch where jitgrad
# follows its semantics (numpy has no gradients): its CPU-only wheel, for the tests alone.
$(TORCH): $(TESTING)
	$(PYTHON) -m pip install --quiet --retries 1 --index-url $(TORCH_INDEX) torch
	touch $(TORCH)

test: $(TORCH)
	$(PYTHON) -m pytest -q

# The perf report's comparison columns need PyTorch and JAX (the `compare` extra); only
# `make perf` installs JAX.
$(COMPARE): $(TORCH) pyproject.toml
	$(PYTHON) -m pip install --quiet -e '.[test,examples,serving,compare]'
	touch $(COMPARE)

# Benchmarks let OpenBLAS pick its own kernels for every side, as on a user's machine: an
# environment that pins them (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE) is unset for this run
# alone; tests and the demo keep it. RESULTS.md names the kernels that ran.
perf: $(COMPARE)
	$(BYTECODE)
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PYTHON) -m perf

LINTING := $(VENV)/.installed-lint

$(LINTING): $(STAMP) pyproject.toml
	$(PYTHON) -m pip install --quiet -e '.[lint,examples]'
	touch $(LINTING)

lint: $(LINTING)
	$(VENV)/bin/ruff check jitgrad tests perf tools
	$(VENV)/bin/ruff format --check jitgrad tests perf tools

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis

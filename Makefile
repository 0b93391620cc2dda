# The README's two commands: `make demo` runs the main job, `make test` passes the tests.
# Both build .venv on first use; installs are cached there (the stamp tracks pyproject.toml).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.zooport-installed

.PHONY: test lint pytest demo bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip
	# torch first: the CPU wheel on this machine. Anything that depends on torch
	# (stable-baselines3) is then satisfied and pip never pulls the CUDA build.
	$(PIP) install torch==2.13.0
	$(PIP) install -e ".[test]"
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check .

pytest: $(STAMP)
	$(VENV)/bin/pytest -q

test: lint pytest

demo: $(STAMP)
	$(PY) -m zooport.demo

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info

# The README's two commands: `make demo` runs the main job, `make test` passes the tests.
# Both build .venv on first use; installs are cached there (the stamps track pyproject.toml).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.zooport-installed
DEMO_STAMP := $(VENV)/.zooport-demo-installed
# Every SB3 model makes a log folder: one folder for every run here, not thousands in /tmp.
export SB3_LOGDIR ?= $(CURDIR)/build/sb3-logs

# $(call new_venv,VENV,PYTHON): the first steps of every venv's recipe: VENV made by PYTHON
# unless it exists, pip upgraded, then torch's CPU wheel (the one on this machine), so that
# nothing installed after it that depends on torch (stable-baselines3, RLlib, the trainers)
# pulls the CUDA build.
define new_venv
test -x $(1)/bin/python || $(2) -m venv $(1)
$(1)/bin/python -m pip install --upgrade pip
$(1)/bin/python -m pip install torch==2.13.0
endef

.PHONY: test lint typecheck pytest docs docs-strict test-mlagents test-mlagents-learn test-rllib test-consumers test-benchmarl test-floor demo bench bench-quick bench-pool soak proto clean

$(STAMP): pyproject.toml
	$(call new_venv,$(VENV),$(PYTHON))
	$(PIP) install -e ".[test,torchrl,docs,mlagents]"
	touch $(STAMP) $(DEMO_STAMP)

# The main job's own, lean install: torch and zooport with the [train] and [plots] extras
# (SB3, sb3-contrib, SuperSuit, matplotlib, Pillow), none of the test, docs or torchrl ones.
# The full install above includes it, so `make demo` after `make test` installs nothing.
$(DEMO_STAMP): pyproject.toml
	$(call new_venv,$(VENV),$(PYTHON))
	$(PIP) install -e ".[train,plots]"
	touch $(DEMO_STAMP)

lint: $(STAMP) typecheck
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# mypy (settings in pyproject's [tool.mypy]) over the package as installed: zooport with
# envs/ and adapters/ linked in as zooport.envs and zooport.adapters, which is what the
# editable install maps and mypy cannot follow. The cache stays in the venv.
MYPY_TREE := $(VENV)/mypy-tree
typecheck: $(STAMP)
	rm -rf $(MYPY_TREE) && mkdir -p $(MYPY_TREE)/zooport
	for f in zooport/*; do ln -s "$(CURDIR)/$$f" $(MYPY_TREE)/zooport/; done
	ln -s "$(CURDIR)/envs" $(MYPY_TREE)/zooport/envs
	ln -s "$(CURDIR)/adapters" $(MYPY_TREE)/zooport/adapters
	MYPYPATH=$(MYPY_TREE) $(VENV)/bin/mypy $(MYPY_TREE)/zooport tests/envs/test_base_env_like.py \
		tests/adapters/test_typed_calls.py tests/test_public_names.py

pytest: $(STAMP)
	$(VENV)/bin/pytest -q

test: lint pytest docs-strict test-mlagents test-mlagents-learn test-rllib test-consumers test-benchmarl test-floor

# The documentation site into site/ (mkdocs.yml; API pages generated from the docstrings).
# Material's end-of-life banner is not a build warning: NO_MKDOCS_2_WARNING silences it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build

# The same with every warning an error: a broken link, a page missing from the nav or a
# docstring mkdocstrings cannot read fails `make test`.
docs-strict: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

demo: $(DEMO_STAMP)
	$(PY) -m zooport.demo

bench: $(STAMP)
	$(PY) benchmarks/run.py

bench-quick: $(STAMP)
	$(PY) benchmarks/run.py --quick

# The PufferLib route: pufferlib-core pins an older torch, so it comes in without its deps.
bench-pool: $(STAMP)
	$(PIP) install -q psutil rich rich-argparse
	$(PIP) install -q --no-deps pufferlib-core==3.0.23
	$(PY) -m zooport.cli.bench.pool

# Millions of agent-steps per route: memory and a per-agent reward ledger (not a CI gate).
soak: $(STAMP)
	$(PY) benchmarks/soak.py

# ---- tests/mlagents: a real mlagents_envs 0.28 UnityEnvironment (no Unity binary) in its own
# venv: it needs protobuf 3.20.x, which nothing else here may be pinned to.
MLAGENTS_PYTHON ?= $(PYTHON)
MLAGENTS_VENV ?= .venv-mlagents
MLAGENTS_PY := $(MLAGENTS_VENV)/bin/python
MLAGENTS_STAMP := $(MLAGENTS_VENV)/.zooport-installed
# Older releases whose base_env.py the compat tests load (downloaded, never installed).
LEGACY_MLAGENTS := 0.16.1 0.19.0 0.22.0 0.23.0 0.24.0

$(MLAGENTS_STAMP): pyproject.toml tests/mlagents/requirements.txt
	$(call new_venv,$(MLAGENTS_VENV),$(MLAGENTS_PYTHON))
	$(MLAGENTS_PY) -m pip install -r tests/mlagents/requirements.txt -e .
	for v in $(LEGACY_MLAGENTS); do \
		$(MLAGENTS_PY) -m pip download --no-deps --dest $(MLAGENTS_VENV)/legacy-wheels \
			mlagents-envs==$$v || exit 1; \
	done
	touch $(MLAGENTS_STAMP)

# test_serve.py runs `zooport serve` from the main venv (current protobuf, the mlagents extra).
test-mlagents: $(MLAGENTS_STAMP) $(STAMP)
	ZOOPORT_SERVE_PYTHON=$(CURDIR)/$(PY) $(MLAGENTS_VENV)/bin/pytest -q tests/mlagents

# ---- tests/mlagents_learn: ML-Agents' own trainer (mlagents-learn 1.1.0) training zooport cores
# that `zooport serve` serves. mlagents 1.1.0 declares Python <= 3.10.12 and pins protobuf < 3.21,
# so it comes in without its deps, which requirements.txt lists (and why). zooport is not
# installed here: `zooport serve` runs from the main venv (current protobuf and grpcio), and the
# tests start it with ZOOPORT_SERVE_PYTHON (as test-mlagents does).
MLAGENTS_LEARN_VENV ?= .venv-mlagents-learn
MLAGENTS_LEARN_PY := $(MLAGENTS_LEARN_VENV)/bin/python
MLAGENTS_LEARN_STAMP := $(MLAGENTS_LEARN_VENV)/.zooport-installed

$(MLAGENTS_LEARN_STAMP): tests/mlagents_learn/requirements.txt
	$(call new_venv,$(MLAGENTS_LEARN_VENV),$(MLAGENTS_PYTHON))
	$(MLAGENTS_LEARN_PY) -m pip install --ignore-requires-python --no-deps \
		mlagents==1.1.0 mlagents-envs==1.1.0
	$(MLAGENTS_LEARN_PY) -m pip install -r tests/mlagents_learn/requirements.txt
	touch $(MLAGENTS_LEARN_STAMP)

test-mlagents-learn: $(STAMP) $(MLAGENTS_LEARN_STAMP)
	ZOOPORT_SERVE_PYTHON=$(CURDIR)/$(PY) $(MLAGENTS_LEARN_VENV)/bin/pytest -q tests/mlagents_learn \
		--confcutdir=tests/mlagents_learn

# ---- tests/rllib: RLlib (ray[rllib] 2.60 pins gymnasium 1.2.2) in its own venv, which also
# proves zooport on that older gymnasium.
RLLIB_VENV ?= .venv-rllib
RLLIB_PY := $(RLLIB_VENV)/bin/python
RLLIB_STAMP := $(RLLIB_VENV)/.zooport-installed

$(RLLIB_STAMP): pyproject.toml tests/rllib/requirements.txt
	$(call new_venv,$(RLLIB_VENV),$(PYTHON))
	$(RLLIB_PY) -m pip install -r tests/rllib/requirements.txt
	$(RLLIB_PY) -m pip install -e .
	touch $(RLLIB_STAMP)

# --confcutdir: the main suite's conftest files are not loaded in this venv.
test-rllib: $(RLLIB_STAMP)
	RAY_USAGE_STATS_ENABLED=0 $(RLLIB_VENV)/bin/pytest tests/rllib -q --confcutdir=tests/rllib

# ---- tests/consumers: the trainers users bring (rl-zoo3, skrl, tianshou, AgileRL) in one venv:
# their pins agree with one another but not with the main venv's (AgileRL pins pettingzoo<1.27
# and tensordict==0.13.0; the main venv has pettingzoo 1.27 and torchrl 0.14's tensordict).
CONSUMERS_VENV ?= .venv-consumers
CONSUMERS_STAMP := $(CONSUMERS_VENV)/.zooport-installed

$(CONSUMERS_STAMP): tests/consumers/requirements.txt

test-consumers: $(CONSUMERS_STAMP)
	$(CONSUMERS_VENV)/bin/pytest -q tests/consumers --confcutdir=tests/consumers

# ---- tests/benchmarl: BenchMARL 1.5.2 pins torchrl < 0.12 (tensordict 0.11); the main venv
# has torchrl 0.14. Its own venv, which also proves zooport on torchrl 0.11.
BENCHMARL_VENV ?= .venv-benchmarl
BENCHMARL_STAMP := $(BENCHMARL_VENV)/.zooport-installed

$(BENCHMARL_STAMP): tests/benchmarl/requirements.txt

# The consumers' venv and this one: one recipe, each stamp's requirements file its other input.
$(CONSUMERS_STAMP) $(BENCHMARL_STAMP): pyproject.toml
	$(call new_venv,$(@D),$(PYTHON))
	$(@D)/bin/python -m pip install -r $(filter %requirements.txt,$^) -e .
	touch $@

test-benchmarl: $(BENCHMARL_STAMP)
	$(BENCHMARL_VENV)/bin/pytest -q tests/benchmarl --confcutdir=tests/benchmarl

# ---- tests/floor: the oldest versions pyproject allows (numpy 1.24.4, gymnasium 1.0.0,
# pettingzoo 1.24.0) under the suite, less what needs more than the floor installs: SuperSuit,
# torchrl, the command line's and demo's extras, and doctests (they print numpy 2 reprs).
FLOOR_VENV ?= .venv-floor
FLOOR_PY := $(FLOOR_VENV)/bin/python
FLOOR_STAMP := $(FLOOR_VENV)/.zooport-installed
FLOOR_IGNORE := tests/mlagents tests/mlagents_learn tests/rllib tests/consumers tests/benchmarl tests/test_doctests.py \
	tests/adapters/test_supersuit_route.py tests/adapters/test_torchrl.py \
	tests/adapters/test_torchrl_mappo.py tests/adapters/wrappers/test_composition.py \
	tests/adapters/wrappers/test_thirdparty.py tests/cli/test_commands.py tests/cli/test_demo.py \
	tests/cli/test_examples.py tests/cli/test_examples_cleanrl.py tests/cli/test_benchmarks.py \
	tests/cli/test_console_script.py tests/cli/test_saved_models.py

$(FLOOR_STAMP): pyproject.toml tests/floor/requirements.txt
	$(call new_venv,$(FLOOR_VENV),$(PYTHON))
	$(FLOOR_PY) -m pip install -r tests/floor/requirements.txt -e .
	touch $(FLOOR_STAMP)

test-floor: $(FLOOR_STAMP)
	$(FLOOR_VENV)/bin/pytest -q tests $(addprefix --ignore=,$(FLOOR_IGNORE))

# adapters/_mlagents_wire_pb2.py from adapters/_mlagents_wire.proto (ML-Agents' wire format),
# in a throwaway venv: grpcio-tools 1.85.1 bundles protoc 7.35.1 (the mlagents extra's floor).
# Of protoc's output the module keeps the DESCRIPTOR line (the rest of protoc's file serves only
# CopyToProto and a runtime-version check); its header and builder call stay as checked in.
proto:
	test -x build/proto-venv/bin/python || $(PYTHON) -m venv build/proto-venv
	build/proto-venv/bin/python -m pip install -q grpcio-tools==1.85.1
	mkdir -p build/proto-out
	cd adapters && ../build/proto-venv/bin/python -m grpc_tools.protoc -I. --python_out=../build/proto-out _mlagents_wire.proto
	{ sed '/^DESCRIPTOR = /,$$d' adapters/_mlagents_wire_pb2.py; \
	  grep '^DESCRIPTOR = ' build/proto-out/_mlagents_wire_pb2.py | sed 's/_descriptor_pool\./descriptor_pool./'; \
	  echo; tail -n 1 adapters/_mlagents_wire_pb2.py; } > build/proto-out/module.py
	mv build/proto-out/module.py adapters/_mlagents_wire_pb2.py

clean:
	rm -rf $(VENV) $(MLAGENTS_VENV) $(MLAGENTS_LEARN_VENV) $(RLLIB_VENV) $(CONSUMERS_VENV) $(BENCHMARL_VENV) $(FLOOR_VENV) \
		build site *.egg-info

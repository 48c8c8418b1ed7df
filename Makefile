# The two set-up commands of README.md. Each creates the virtual environment it needs from the
# repository's own files, so they work on a fresh machine.
PYTHON ?= python3
VENV := .venv
STAMP := $(VENV)/.installed

.PHONY: demo test venv clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

# The main job. Until the CPU quickstart lands it is the collector on the embedded store
# (./.tracerl/store): OTLP on 127.0.0.1:4317 (gRPC) and :4318 (HTTP), queries on :8123.
demo: $(STAMP)
	$(VENV)/bin/tracerl collector

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

clean:
	rm -rf $(VENV) .tracerl .pytest_cache

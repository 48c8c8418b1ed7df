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

# The main job, on CPU and the embedded store: the toy example of examples/toy_word end to end.
# A tiny model made from scratch learns to say the word its prompt names: rollouts of a Python
# agent -> OTLP -> the in-process collector -> chdb store (runs/demo/.tracerl/store) -> transitions
# -> GRPO updates -> new weights served to the next rollouts. About a minute on 2 cores.
DEMO := runs/demo
demo: $(STAMP)
	rm -rf $(DEMO) && mkdir -p $(DEMO)
	cp examples/toy_word/agent.py examples/toy_word/make_toy.py examples/toy_word/config.yaml $(DEMO)/
	cd $(DEMO) && $(CURDIR)/$(VENV)/bin/python make_toy.py
	cd $(DEMO) && $(CURDIR)/$(VENV)/bin/tracerl train config.yaml
	cd $(DEMO) && $(CURDIR)/$(VENV)/bin/tracerl report runs/toy_word
	cd $(DEMO) && $(CURDIR)/$(VENV)/bin/tracerl sql "SELECT step, round(reward_mean, 3) AS reward, \
		round(success_rate, 2) AS success FROM tracerl_train_steps ORDER BY step"
	@echo "report: $(DEMO)/runs/toy_word/report.html and reward.png; store: $(DEMO)/.tracerl/store"

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

clean:
	rm -rf $(VENV) .tracerl .pytest_cache runs/demo

# Developer shortcuts. Override the interpreter with e.g. `make bench PYTHON=python3`.
PYTHON ?= .venv/bin/python

.PHONY: bench bench-quick evals docs test

bench:  ## full perf profile (store 100k, vector 10k/100k, consolidation up to 1M), then plots
	$(PYTHON) -m benchmarks run --full; status=$$?; $(PYTHON) -m benchmarks.plots && exit $$status

bench-quick:  ## the quick profile beside benchmarks/baseline.json, then plots
	$(PYTHON) -m benchmarks run; status=$$?; $(PYTHON) -m benchmarks.plots && exit $$status

evals:  ## the scoreboard on the data in $$SAGEWAI_EVAL_DATA (docs/benchmarks.md)
	$(PYTHON) -m evals run

docs:
	$(PYTHON) -m mkdocs build --strict

test:
	$(PYTHON) -m pytest -q

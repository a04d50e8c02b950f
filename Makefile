# Developer shortcuts. Override the interpreter with e.g. `make bench PYTHON=python3`.
PYTHON ?= .venv/bin/python

.PHONY: bench bench-quick docs test

bench:  ## full benchmark suite (store 100k, vector 10k/100k, consolidation up to 1M), then plots
	$(PYTHON) benchmarks/run_all.py; status=$$?; $(PYTHON) benchmarks/plots.py && exit $$status

bench-quick:  ## small sizes, a few minutes on 2 cores, then plots
	$(PYTHON) benchmarks/run_all.py --quick; status=$$?; $(PYTHON) benchmarks/plots.py && exit $$status

docs:
	$(PYTHON) -m mkdocs build --strict

test:
	$(PYTHON) -m pytest -q

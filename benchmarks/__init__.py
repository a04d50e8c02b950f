"""sagewai's performance scenarios: how fast, how big, on this machine.

Each module is one scenario, runnable alone (``python -m benchmarks.store_bench --help``) and
through the runner (``python -m benchmarks run [names] --json out.json``), which runs the
registered scenarios with a small quick profile, collects their figures and prints them beside
the committed ``benchmarks/baseline.json``. Quality (recall, accuracy, consolidation and
extraction quality) lives in ``evals/``. Both packages import only sagewai's public names.
"""

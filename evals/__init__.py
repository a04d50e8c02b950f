"""sagewai's quality evaluations: recall, prompt evidence, answer accuracy, consolidation and
extraction quality.

Each module is one evaluation, runnable alone (``python -m evals.locomo_recall --help``); the
runner (``python -m evals run --data DIR``) runs the conversational ones and writes one
scoreboard (JSON and a markdown table). Data sets are read from a path, never copied here:
``evals.datasets`` says where to get each. Speed scenarios live in ``benchmarks/``.
"""

"""Doctest collection of ``sagewai/``: leave out the adapters whose framework is not installed.

Each framework integration imports its framework at import time (and fails with the exact
``pip install "sagewai[extra]"`` without it). CrewAI cannot share an environment with the MCP
server's ``mcp>=2.3`` (CrewAI pins ``mcp<2``), so the main test environment never has it and
``.ci/run`` runs CrewAI's adapter, doctests included, in an environment of its own.
"""

from __future__ import annotations

import importlib.util

_FRAMEWORKS = {
    "crewai": ["sagewai/integrations/crewai/*", "sagewai/testing/_crewai.py"],
    "agents": ["sagewai/integrations/openai_agents/*"],
    "llama_index": ["sagewai/integrations/llama_index/*"],
    "autogen_core": ["sagewai/integrations/autogen/*"],
}

collect_ignore_glob = [
    pattern
    for module, patterns in _FRAMEWORKS.items()
    if importlib.util.find_spec(module) is None
    for pattern in patterns
]

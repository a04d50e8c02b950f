"""AutoGen AgentChat on sagewai memory: its ``Memory`` protocol backed by a ``ContextEngine``.

Why: AutoGen's ``AssistantAgent(memory=[...])`` asks each memory to enrich the model context
before every call. :class:`SagewaiMemory` answers with sagewai's hybrid search over one user's
memory (and the project's), and stores what the agent's code adds, audited and forgettable.

Turn off AutoGen's runtime tracing where nothing may leave the machine:
``AUTOGEN_DISABLE_RUNTIME_TRACING=true``.

Needs the ``autogen`` extra: ``pip install "sagewai[autogen]"``.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import autogen_core.memory  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError(
        "autogen-agentchat", "autogen", "sagewai.integrations.autogen"
    ) from exc

from sagewai.integrations.autogen._memory import SagewaiMemory

__all__ = ["SagewaiMemory"]

"""CrewAI on sagewai memory: its memory ``StorageBackend`` backed by a ``ContextEngine``.

Why: CrewAI (1.x) gives crews, agents and flows one unified ``Memory`` over a pluggable
``StorageBackend`` (LanceDB by default). :class:`SagewaiStorage` is that backend over sagewai,
so ``Crew(..., memory=Memory(storage=storage, embedder=storage.embedder, llm=...))`` keeps what
the crew learns in sagewai: hybrid search, scopes, audit history, forgetting, consolidation.

CrewAI's three kinds of memory map onto sagewai's scopes by the path rule of
:func:`scope_of_path`: short-term memory (one run or chat, ``.../sessions/<id>``) at SESSION
scope, a user's long-term memory (``/users/<id>/...``, or every path of a storage bound with
``user_id=``) at USER scope, the crew's shared long-term memory at PROJECT scope; entity memory
(the entities CrewAI's analysis names) becomes the facts' subjects.

Turn off CrewAI's telemetry and trace prompts where nothing may leave the machine:
``CREWAI_DISABLE_TELEMETRY=true``, ``OTEL_SDK_DISABLED=true``, ``CREWAI_DISABLE_TRACKING=true``,
``CREWAI_TRACING_ENABLED=false``.

Needs the ``crewai`` extra: ``pip install "sagewai[crewai]"``. CrewAI 1.7 and later pin
``mcp<2`` while sagewai's MCP server needs ``mcp>=2.3``: install the two extras in different
environments.
"""

from __future__ import annotations

from sagewai.errors import MissingDependencyError

try:
    import crewai.memory.types  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise MissingDependencyError("crewai", "crewai", "sagewai.integrations.crewai") from exc

from sagewai.integrations.crewai._scopes import PathScope, scope_of_path
from sagewai.integrations.crewai._storage import RECORD_TAG, SagewaiStorage

__all__ = ["RECORD_TAG", "PathScope", "SagewaiStorage", "scope_of_path"]

"""sagewai: memory for LLM agents that learn from their own conversations."""

from __future__ import annotations

from sagewai.context.scope import ContextScope
from sagewai.errors import SagewaiError

__all__ = ["ContextScope", "SagewaiError"]
__version__ = "0.1.0"

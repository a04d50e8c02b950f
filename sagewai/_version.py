"""sagewai's version, in one place: the package exports it and the MCP server reports it."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"

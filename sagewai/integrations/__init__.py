"""Adapters that bring sagewai memory to where agents already live (MCP, LangGraph)."""

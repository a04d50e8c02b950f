"""Integrations: sagewai memory where agents already live (each behind its own extra)."""

"""sagewai.context."""

"""sagewai.graph."""

"""sagewai.testing."""

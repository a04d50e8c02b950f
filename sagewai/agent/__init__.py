"""sagewai.agent."""

"""sagewai.llm."""

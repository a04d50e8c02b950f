"""sagewai.intelligence."""

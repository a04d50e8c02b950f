"""sagewai.stores."""

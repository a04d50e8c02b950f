"""The ``sagewai`` command line (``python -m sagewai`` or the ``sagewai`` script)."""

"""``python -m sagewai``: the command line."""

from sagewai.cli._main import main

raise SystemExit(main())

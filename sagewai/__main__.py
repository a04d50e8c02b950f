"""``python -m sagewai``: the command line."""

from sagewai.cli.main import main

raise SystemExit(main())
